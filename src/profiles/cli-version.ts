// Which version of a CLI is installed, and how it compares with the versions a profile was checked
// against: for `doctor` and `profile check`.
import { execa } from 'execa';
import type { Profile } from './schema.js';

/** The first `x.y.z` (with any `-pre` tag) in what a CLI printed, or null. */
export function parseVersion(out: string): string | null {
  return /(?<![\d.])(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/.exec(out)?.[1] ?? null;
}

/** Numeric order of x.y.z; a pre-release sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('-', 2);
    return { nums: core.split('.').map((n) => Number(n) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** The versions a profile was checked against, oldest first. */
export function checkedVersions(p: Pick<Profile, 'versions' | 'version'>): string[] {
  const all = new Set([...p.versions, ...(p.version ? [p.version] : [])]);
  return [...all].sort(compareVersions);
}

export type VersionFit = 'checked' | 'newer' | 'older' | 'between' | 'unchecked' | 'unknown';

export interface VersionReport {
  installed: string | null;
  checked: string[];
  fit: VersionFit;
  /** One line for people. */
  note: string;
  error?: string;
}

/** How an installed version stands against the checked ones (pure). */
export function fitVersion(installed: string | null, checked: string[], error?: string): VersionReport {
  const newest = checked.at(-1);
  const base = { installed, checked, ...(error ? { error } : {}) };
  if (installed === null) return { ...base, fit: 'unknown', note: `version unknown (${error ?? 'it printed no x.y.z'})` };
  if (newest === undefined) return { ...base, fit: 'unchecked', note: `version ${installed}; the profile names no version it was checked against` };
  if (installed === newest) return { ...base, fit: 'checked', note: `version ${installed}, the newest one checked` };
  if (checked.includes(installed)) return { ...base, fit: 'checked', note: `version ${installed}, checked (the newest checked is ${newest})` };
  if (compareVersions(installed, newest) > 0)
    return { ...base, fit: 'newer', note: `version ${installed}, newer than the newest checked (${newest}): \`npm run canary\` shows what changed` };
  if (compareVersions(installed, checked[0]!) < 0)
    return { ...base, fit: 'older', note: `version ${installed}, older than the oldest checked (${checked[0]}): upgrading is safer` };
  return { ...base, fit: 'between', note: `version ${installed}, between checked ones (${checked.join(', ')})` };
}

/** Run `<bin> <versionArgs>` (10 s at most) and read its version. */
export async function installedVersion(
  bin: string,
  profile: Pick<Profile, 'versionArgs' | 'versions' | 'version'>,
  env: NodeJS.ProcessEnv,
): Promise<VersionReport> {
  const checked = checkedVersions(profile);
  try {
    const r = await execa(bin, profile.versionArgs, { env, timeout: 10_000, reject: false, stdin: 'ignore', all: true });
    const out = r.all ?? '';
    const v = parseVersion(out);
    if (v === null)
      return fitVersion(
        null,
        checked,
        r.timedOut
          ? `\`${bin} ${profile.versionArgs.join(' ')}\` ran over 10 s`
          : `\`${bin} ${profile.versionArgs.join(' ')}\` printed ${JSON.stringify(out.slice(0, 80))}`,
      );
    return fitVersion(v, checked);
  } catch (e) {
    return fitVersion(null, checked, (e as Error).message.split('\n')[0]);
  }
}
