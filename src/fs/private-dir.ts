// Private folders: `.jaggers/`, its own subfolders (logs, jobs, inbox, handover, work, flows) and the
// socket's folder under the temp folder (`$TMPDIR/jaggers-<uid>/`, where any local user may make it
// first). Each is made 0700; one that exists is used only when it is a real folder (lstat: a symlink is
// refused, not followed) owned by us that nobody else can write into. A folder of ours that others may
// only read (made by an older jaggers, or by a `mkdir -p .jaggers/profiles`) is narrowed to 0700; any
// other is refused with E_UNSAFE_FOLDER naming the folder, its owner and its mode.
import fs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { JaggersError } from '../errors.js';
import { isNotFound } from './durable.js';
import { diskFullError, isDiskError, writeFailed } from './disk-health.js';

export interface FolderFacts {
  isDirectory: boolean;
  isSymbolicLink: boolean;
  uid: number;
  mode: number;
}

export type FolderVerdict = { ok: true; narrow: boolean } | { ok: false; why: string };

const octal = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;

/** Pure: may a folder with these facts be a private folder of user `uid` (null: no uids on this system)? */
export function judgePrivateFolder(f: FolderFacts, uid: number | null): FolderVerdict {
  if (f.isSymbolicLink) return { ok: false, why: 'it is a symbolic link (not followed)' };
  if (!f.isDirectory) return { ok: false, why: 'it is not a folder' };
  if (uid !== null && f.uid !== uid) return { ok: false, why: `it is owned by uid ${f.uid}, not by you (uid ${uid})` };
  const writable = [f.mode & 0o020 ? 'its group' : null, f.mode & 0o002 ? 'everyone' : null].filter(Boolean);
  if (writable.length) return { ok: false, why: `${writable.join(' and ')} may write into it` };
  return { ok: true, narrow: (f.mode & 0o077) !== 0 };
}

function unsafe(dir: string, st: fs.Stats, why: string): JaggersError {
  return new JaggersError(
    'E_UNSAFE_FOLDER',
    `refusing to use ${dir} (owner uid ${st.uid}, mode ${octal(st.mode)}): ${why}. Another user could have made it to read or ` +
      `answer jaggers' requests; remove it if it is not yours, or make it yours (chown, chmod 700) if you trust what is in it`,
  );
}

/** Check an existing folder (narrowing a read-only-for-others one of ours to 0700); false when it does not exist. */
export function checkPrivateFolder(dir: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (e) {
    if (isNotFound(e)) return false;
    throw new JaggersError('E_FILE', `cannot look at ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const v = judgePrivateFolder({ isDirectory: st.isDirectory(), isSymbolicLink: st.isSymbolicLink(), uid: st.uid, mode: st.mode }, process.getuid?.() ?? null);
  if (!v.ok) throw unsafe(dir, st, v.why);
  if (v.narrow) fs.chmodSync(dir, 0o700);
  return true;
}

/** Make `dir` (and missing parents) 0700, or check the one that is there: the one way jaggers makes a private folder. */
export async function ensurePrivateFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    // Something in its place that is not a folder (a symlink to nothing, a file) is judged by lstat.
    if (checkPrivateFolder(dir)) return;
    if (isDiskError(e)) {
      writeFailed(dir, e);
      throw diskFullError('making the folder', dir, e);
    }
    throw new JaggersError('E_FILE', `cannot make the folder ${dir}: ${(e as Error).message}`, { cause: e });
  }
  if (!checkPrivateFolder(dir)) throw new JaggersError('E_FILE', `${dir} vanished as it was made`);
}
