import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { nameProblem } from '../ids.js';
import { builtinProfilesDir } from '../package-root.js';
import { readJsonFile, validate } from '../validate.js';
import { ProfileSchema, type Profile } from './schema.js';

export interface ProfileSource {
  profile: Profile;
  file: string;
  builtin: boolean;
}

/** Project profiles in `.jaggers/profiles/` override built-ins of the same name. */
export function profileDirs(jaggersDir: string): { dir: string; builtin: boolean }[] {
  return [
    { dir: path.join(jaggersDir, 'profiles'), builtin: false },
    { dir: builtinProfilesDir, builtin: true },
  ];
}

export function parseProfile(data: unknown, file: string): Profile {
  const profile = validate(ProfileSchema, data, file, 'E_PROFILE_INVALID');
  const expected = path.basename(file, '.json');
  if (profile.name !== expected) {
    throw new JaggersError(
      'E_PROFILE_INVALID',
      `${file}: field \`name\` must match the file name ${JSON.stringify(expected)}, got ${JSON.stringify(profile.name)}`,
    );
  }
  return profile;
}

export async function loadProfile(name: string, jaggersDir: string): Promise<ProfileSource> {
  // The name becomes part of a file's path: only a name by the one rule is looked for (never `../x`).
  const problem = nameProblem('profile', name);
  if (problem) throw new JaggersError('E_PROFILE_UNKNOWN', `unknown profile: ${problem}`);
  for (const { dir, builtin } of profileDirs(jaggersDir)) {
    const file = path.join(dir, `${name}.json`);
    const data = await readJsonFile(file, 'E_PROFILE_INVALID');
    if (data !== null) return { profile: parseProfile(data, file), file, builtin };
  }
  const known = (await listProfileNames(jaggersDir)).join(', ');
  throw new JaggersError('E_PROFILE_UNKNOWN', `unknown profile ${JSON.stringify(name)}: known profiles are ${known}`);
}

export async function listProfileNames(jaggersDir: string): Promise<string[]> {
  const names = new Set<string>();
  for (const { dir } of profileDirs(jaggersDir)) {
    let entries: string[] = [];
    try {
      entries = await readdir(dir);
    } catch {
      continue;
    }
    for (const e of entries) if (e.endsWith('.json')) names.add(e.slice(0, -5));
  }
  return [...names].sort();
}

/** Load every profile, collecting errors instead of stopping at the first (for `doctor`). */
export async function checkAllProfiles(jaggersDir: string): Promise<{ name: string; file?: string; error?: string }[]> {
  const out: { name: string; file?: string; error?: string }[] = [];
  for (const name of await listProfileNames(jaggersDir)) {
    try {
      const { file } = await loadProfile(name, jaggersDir);
      out.push({ name, file });
    } catch (e) {
      out.push({ name, error: (e as Error).message });
    }
  }
  return out;
}
