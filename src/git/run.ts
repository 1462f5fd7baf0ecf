// The one way jaggers runs git: through execa, in the C locale, never prompting, never paging, with the
// user's settings that would make a machine operation prompt, sign, stash, run hooks or answer in
// another shape turned off by `-c` for that one call. Callers read only git's machine formats.
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { JaggersError } from '../errors.js';

export interface GitResult {
  /** git's exit code (the operation ran; a git that could not start is an E_GIT error instead). */
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitRunOptions {
  /** More environment for this call (GIT_INDEX_FILE for a private index). */
  env?: Readonly<Record<string, string>>;
  /** More `-c key=value` for this call (a fallback identity). */
  config?: readonly string[];
  /** Retry, briefly, when git failed only because another git holds a lock file (see LOCK_RETRY_MS). */
  retryLocks?: boolean;
  timeoutMs?: number;
}

/** Runs git: the small interface everything in src/git/ and src/agents/worktrees/ takes. */
export interface Git {
  run(cwd: string, args: readonly string[], options?: GitRunOptions): Promise<GitResult>;
}

/**
 * Settings a user may have that would change what a machine operation does. Hooks would run the user's
 * checks (which may fail, prompt or take minutes) inside jaggers' own bookkeeping commits and checkouts;
 * signing may prompt for a passphrase; auto-stash would touch the user's stash; rebase.updateRefs would
 * move other branches; rerere could resolve a conflict behind our back. Unknown keys are ignored by an
 * older git, so a setting is safer here than a flag.
 */
export const MACHINE_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  // git's own bounded waits for a ref lock another git holds (default 100 ms and 1 s).
  'core.filesRefLockTimeout=1000',
  'core.packedRefsTimeout=2000',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'merge.verifySignatures=false',
  'merge.autoStash=false',
  'merge.log=false',
  'rebase.autoStash=false',
  'rebase.autoSquash=false',
  'rebase.updateRefs=false',
  'rerere.enabled=false',
  'rerere.autoUpdate=false',
  'log.showSignature=false',
  'diff.relative=false',
  'diff.noprefix=false',
  'color.ui=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'worktree.guessRemote=false',
  'branch.autoSetupMerge=false',
  'submodule.recurse=false',
  'advice.detachedHead=false',
];

/** Variables that point git at another repository, index or config (set when jaggers runs inside a git hook). */
const REPOSITORY_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_GRAFT_FILE',
  'GIT_SHALLOW_FILE',
  'GIT_REPLACE_REF_BASE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
];

/** The environment of a git (or a setup command) run by jaggers: the caller's, without repository overrides. */
export function cleanEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || REPOSITORY_VARS.includes(k) || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

function machineEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  return {
    ...cleanEnv(base),
    LC_ALL: 'C',
    LANGUAGE: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    GIT_MERGE_AUTOEDIT: 'no',
    // Reads (status) must not write the index: the user's checkout is looked at, never touched.
    GIT_OPTIONAL_LOCKS: '0',
  };
}

/**
 * git failed only because another git was at work beside it: it holds a lock file, or (two `git worktree
 * add` at once) it has made a worktree's admin folder and not yet filled it, which the other reads while it
 * checks the branch is not checked out elsewhere. Matched on git's own words, in the C locale, because git
 * gives no code for these (the one place we read text meant for people).
 */
export function isLockBusy(stderr: string): boolean {
  return (
    /Unable to create '[^']*\.lock': File exists/.test(stderr) ||
    /could not lock config file/.test(stderr) ||
    /failed to read [^\n]*\/worktrees\/[^\n/]+\/(commondir|gitdir|HEAD)\b/.test(stderr)
  );
}

/**
 * Pauses before the retries of a call that met another git's lock: a handful, doubling, with some jitter so
 * two jaggers processes do not meet again. Bounded (about 1.5 s in all), because the other git is a short
 * command; the lock has no event to wait on, and waiting longer would hide a lock a crash left behind.
 */
export const LOCK_RETRY_MS: readonly number[] = [25, 50, 100, 200, 400, 800];

export interface GitOptions {
  bin?: string;
  env?: NodeJS.ProcessEnv;
  /** Default for each call (5 minutes: a checkout of a large repository). */
  timeoutMs?: number;
}

export function createGit(options: GitOptions = {}): Git {
  const bin = options.bin ?? 'git';
  const env = machineEnv(options.env ?? process.env);
  const once = async (cwd: string, args: readonly string[], o: GitRunOptions): Promise<GitResult> => {
    const config = [...MACHINE_CONFIG, ...(o.config ?? [])].flatMap((c) => ['-c', c]);
    const r = await execa(bin, ['--no-pager', ...config, ...args], {
      cwd,
      env: { ...env, ...o.env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      stripFinalNewline: false,
      timeout: o.timeoutMs ?? options.timeoutMs ?? 300_000,
    });
    if (r.failed && typeof r.exitCode !== 'number') {
      const why = r.timedOut ? `timed out after ${o.timeoutMs ?? options.timeoutMs ?? 300_000} ms` : (r.originalMessage ?? r.shortMessage);
      throw new JaggersError('E_GIT', `git ${args.join(' ')} in ${cwd}: ${why}`, { cause: r.cause });
    }
    return { code: r.exitCode ?? 1, stdout: String(r.stdout), stderr: String(r.stderr) };
  };
  return {
    async run(cwd, args, o = {}) {
      let r = await once(cwd, args, o);
      for (const ms of o.retryLocks ? LOCK_RETRY_MS : []) {
        if (r.code === 0 || !isLockBusy(r.stderr)) break;
        await sleep(ms + Math.floor(Math.random() * ms));
        r = await once(cwd, args, o);
      }
      return r;
    },
  };
}

/** The last lines of a command's output, for an error message. */
export function tail(text: string, maxChars = 1500, maxLines = 20): string {
  const lines = text.trimEnd().split('\n');
  const t = lines.slice(-maxLines).join('\n');
  return t.length > maxChars ? `...${t.slice(-maxChars)}` : t;
}

/** The failure of a git command that should have worked, as E_GIT naming the command, the folder and git's words. */
export function gitFailed(what: string, cwd: string, args: readonly string[], r: GitResult): JaggersError {
  return new JaggersError('E_GIT', `${what}: git ${args.join(' ')} in ${cwd} exited ${r.code}: ${tail(r.stderr || r.stdout) || '(no output)'}`);
}

/** Run git and return its stdout; any exit code but 0 is E_GIT (see gitFailed). */
export async function gitOk(git: Git, cwd: string, args: readonly string[], what: string, options?: GitRunOptions): Promise<string> {
  const r = await git.run(cwd, args, options);
  if (r.code !== 0) throw gitFailed(what, cwd, args, r);
  return r.stdout;
}
