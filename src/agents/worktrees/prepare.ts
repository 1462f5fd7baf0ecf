// Making a new worktree ready to work in: files git does not carry (`.env`, local config) copied from the
// user's checkout, and a setup command (`npm ci`) run once in it.
import { cp, lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { JaggersError } from '../../errors.js';
import { isNotFound } from '../../fs/durable.js';
import { cleanEnv, tail } from '../../git/run.js';

/** Why `p` cannot be in a copy list, or null: relative, inside the repository, not in .git or .jaggers. */
export function copyPathProblem(p: unknown): string | null {
  if (typeof p !== 'string' || p.trim() === '') return `must be a non-empty path, got ${JSON.stringify(p)}`;
  if (/[\0-\x1f\x7f]/.test(p)) return `${JSON.stringify(p)} holds a control character`;
  if (path.isAbsolute(p) || p.startsWith('~')) return `${JSON.stringify(p)} is absolute: give a path relative to the repository's top folder`;
  const norm = path.posix.normalize(p.replaceAll('\\', '/'));
  if (norm === '..' || norm.startsWith('../')) return `${JSON.stringify(p)} leaves the repository`;
  if (norm === '.' || norm === './') return `${JSON.stringify(p)} is the whole repository`;
  const first = norm.split('/')[0];
  if (first === '.git' || first === '.jaggers') return `${JSON.stringify(p)} is inside ${first}, which is never copied`;
  return null;
}

export function assertCopyList(list: readonly unknown[]): void {
  list.forEach((p, i) => {
    const problem = copyPathProblem(p);
    if (problem) throw new JaggersError('E_BAD_PATH', `worktree copy list, entry ${i + 1}: ${problem}`);
  });
}

const inside = (root: string, p: string): boolean => p === root || p.startsWith(root + path.sep);

export interface Copied {
  copied: string[];
  /** Listed paths not in the user's checkout (nothing to copy) or already in the worktree (tracked: left as checked out). */
  skipped: { path: string; why: 'missing' | 'exists' }[];
}

/**
 * Copy each listed path (file or folder) from the user's checkout to the same place in the worktree. A
 * path that resolves, through a symbolic link, to somewhere outside the user's checkout is refused.
 */
export async function copyListed(fromTop: string, toTop: string, list: readonly string[]): Promise<Copied> {
  const out: Copied = { copied: [], skipped: [] };
  const root = await realpath(fromTop);
  for (const [i, rel] of list.entries()) {
    const src = path.join(fromTop, rel);
    try {
      await lstat(src);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      out.skipped.push({ path: rel, why: 'missing' });
      continue;
    }
    const real = await realpath(src).catch(() => null);
    if (real === null || !inside(root, real) || real === root) {
      throw new JaggersError(
        'E_BAD_PATH',
        `worktree copy list, entry ${i + 1}: ${JSON.stringify(rel)} leads outside the repository (${real ?? 'a broken symbolic link'})`,
      );
    }
    const dest = path.join(toTop, rel);
    const exists = await lstat(dest).then(
      () => true,
      () => false,
    );
    if (exists) {
      out.skipped.push({ path: rel, why: 'exists' });
      continue;
    }
    await mkdir(path.dirname(dest), { recursive: true });
    await cp(real, dest, { recursive: true, force: false, errorOnExist: false, preserveTimestamps: true, verbatimSymlinks: true });
    out.copied.push(rel);
  }
  return out;
}

export interface SetupResult {
  exitCode: number;
  /** The end of its output (stdout and stderr interleaved), at most OUTPUT_TAIL characters. */
  output: string;
  ms: number;
}

const OUTPUT_TAIL = 4000;

/**
 * Run `command` with `sh -c` in the new worktree, once, in a process group of its own: at its end (or its
 * timeout) anything it left running is stopped, so its output pipes close and nothing outlives it.
 */
export async function runSetup(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<SetupResult> {
  const started = Date.now();
  const child = execa('sh', ['-c', command], {
    cwd,
    env: cleanEnv(env),
    extendEnv: false,
    all: true,
    reject: false,
    stdin: 'ignore',
    detached: true,
    maxBuffer: 64 * 1024 * 1024,
  });
  const group = (signal: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // the group is gone
    }
  };
  let timedOut = false;
  let hardKill: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    group('SIGTERM');
    hardKill = setTimeout(() => group('SIGKILL'), 2000);
  }, timeoutMs);
  child.once('exit', () => group('SIGTERM'));
  try {
    const r = await child;
    const output = tail(String(r.all ?? ''), OUTPUT_TAIL, 200) + (timedOut ? `\n(setup timed out after ${timeoutMs} ms and was stopped)` : '');
    return { exitCode: timedOut ? 124 : (r.exitCode ?? (r.signal ? 128 : 1)), output, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
    clearTimeout(hardKill);
  }
}
