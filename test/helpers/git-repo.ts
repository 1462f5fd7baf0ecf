// Real git repositories for tests: each in a temp folder with its own HOME (so the machine's ~/.gitconfig
// is never read), and a snapshot of everything a user would notice changing in their checkout.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface TestRepo {
  /** The user's checkout (the jaggers project's folder), symbolic links resolved. */
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  git(args: readonly string[], cwd?: string): string;
  /** Write `files` (relative paths) in `cwd` (default root), stage and commit them; returns the new sha. */
  commit(files: Record<string, string | Buffer>, message: string, cwd?: string): Promise<string>;
  snapshot(cwd?: string): Promise<Snapshot>;
}

export interface Snapshot {
  status: string;
  head: string;
  symbolicHead: string;
  refs: string;
  indexSha: string;
  stash: string;
  worktrees: string;
}

export interface RepoOptions {
  /** Give the test user an identity in its ~/.gitconfig (default true). */
  identity?: boolean;
  /** Lines added to the test user's ~/.gitconfig. */
  userConfig?: string;
  /** Make no commit (default: one commit holding README.md). */
  empty?: boolean;
}

/** A test environment: the caller's, with HOME replaced and every git variable that could leak in removed. */
export function gitTestEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_') && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k];
  delete env.EMAIL;
  return env;
}

export async function makeRepo(base: string, o: RepoOptions = {}): Promise<TestRepo> {
  const dir = await realpath(base);
  const root = path.join(dir, 'repo');
  const home = path.join(dir, 'home');
  await mkdir(root, { recursive: true });
  await mkdir(home, { recursive: true });
  const identity = o.identity ?? true;
  await writeFile(
    path.join(home, '.gitconfig'),
    `${identity ? '[user]\n\tname = Test User\n\temail = test@example.com\n' : ''}[init]\n\tdefaultBranch = main\n${o.userConfig ?? ''}`,
  );
  const env = gitTestEnv(home);
  // The test's own git calls must not be slowed or changed by the hostile settings it gives jaggers.
  const git = (args: readonly string[], cwd = root): string =>
    execFileSync('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgSign=false', '-c', 'user.name=Test', '-c', 'user.email=t@e', ...args], {
      cwd,
      env: { ...env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  git(['init', '-q', '-b', 'main']);
  const commit = async (files: Record<string, string | Buffer>, message: string, cwd = root): Promise<string> => {
    for (const [rel, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(cwd, rel)), { recursive: true });
      await writeFile(path.join(cwd, rel), content);
    }
    git(['add', '--', ...Object.keys(files)], cwd);
    git(['commit', '-q', '--no-verify', '-m', message], cwd);
    return git(['rev-parse', 'HEAD'], cwd).trim();
  };
  if (!o.empty) await commit({ 'README.md': 'hello\n' }, 'first');
  const snapshot = async (cwd = root): Promise<Snapshot> => {
    // The index is hashed before anything else reads the checkout (GIT_OPTIONAL_LOCKS=0 keeps status from writing it anyway).
    const indexSha = createHash('sha256')
      .update(await readFile(path.join(git(['rev-parse', '--absolute-git-dir'], cwd).trim(), 'index')))
      .digest('hex');
    return {
      indexSha,
      status: git(['status', '--porcelain=v2', '-z', '--untracked-files=all'], cwd),
      head: git(['rev-parse', 'HEAD'], cwd),
      symbolicHead: (() => {
        try {
          return git(['symbolic-ref', '-q', 'HEAD'], cwd);
        } catch {
          return '(detached)';
        }
      })(),
      refs: git(['for-each-ref', '--format=%(refname) %(objectname)'], cwd),
      stash: git(['stash', 'list'], cwd),
      worktrees: git(['worktree', 'list', '--porcelain', '-z'], cwd),
    };
  };
  return { root, home, env, git, commit, snapshot };
}

/** git in a test rig's project (or `cwd`), as its supervisor runs it: the rig's HOME, C locale, no optional locks. */
export function rigGit(rig: { root: string; env: NodeJS.ProcessEnv }): (args: string[], cwd?: string) => string {
  return (args, cwd = rig.root) =>
    execFileSync('git', args, { cwd, env: { ...rig.env, LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The rig's project as a git repository on `main` with an identity in the rig's HOME (no commit yet). */
export async function initRigRepo(rig: { root: string; home: string; env: NodeJS.ProcessEnv }): Promise<(args: string[], cwd?: string) => string> {
  await writeFile(path.join(rig.home, '.gitconfig'), '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n');
  const git = rigGit(rig);
  git(['init', '-q', '-b', 'main']);
  return git;
}
