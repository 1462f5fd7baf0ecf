// A file a person named on the command line (`--file notes.md`): read, or an error that names the
// option, the path as given and as resolved, and what is wrong in words (not `ENOENT`).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError } from '../errors.js';

const WHY: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'does not exist (a part of its path is not a folder)',
  EISDIR: 'is a folder, not a file',
  EACCES: 'cannot be read: permission denied',
  EPERM: 'cannot be read: permission denied',
  ELOOP: 'cannot be read: too many symbolic links',
};

/** Why a file could not be read, in words: `does not exist`, `is a folder, not a file`... */
export function whyUnreadable(e: unknown): string {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : '';
  return (Object.hasOwn(WHY, code) ? WHY[code] : undefined) ?? `cannot be read: ${code || (e as Error)?.message || String(e)}`;
}

/** Read `given` (relative to `cwd`); `flag` is how the error starts: `flow add --file`. */
export async function readGivenFile(cwd: string, given: string, flag: string): Promise<string> {
  const file = path.resolve(cwd, given);
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const where = file === given ? file : `${JSON.stringify(given)} (${file})`;
    throw new JaggersError('E_FILE', `${flag}: ${where} ${whyUnreadable(e)}`);
  }
}
