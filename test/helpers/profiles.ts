import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Write a project profile into `<root>/.jaggers/profiles/<name>.json`. */
export async function writeProfile(root: string, name: string, profile: Record<string, unknown>): Promise<string> {
  const dir = path.join(root, '.jaggers', 'profiles');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ name, ...profile }, null, 2));
  return file;
}

/** A profile whose agent is `cat` behind a ready line: echoes what it is sent. */
export const catProfile = { command: 'sh', args: ['-c', 'echo ready; exec cat'] };

export async function writeProject(root: string, project: unknown): Promise<string> {
  const file = path.join(root, 'jaggers.json');
  await writeFile(file, typeof project === 'string' ? project : JSON.stringify(project, null, 2));
  return file;
}

/** The built-in demo profile (the fake agent) with other arguments, e.g. a slow boot or a short think time. */
export async function writeFakeProfile(root: string, name: string, args: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const { builtinProfilesDir } = await import('../../src/package-root.js');
  const demo = JSON.parse(await readFile(path.join(builtinProfilesDir, 'demo.json'), 'utf8')) as Record<string, unknown>;
  return writeProfile(root, name, { ...demo, ...extra, name, args });
}
