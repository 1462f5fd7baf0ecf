// Facts about a repository and its refs, each one or two git calls read in a machine format.
import { stat } from 'node:fs/promises';
import { JaggersError } from '../errors.js';
import { parseStatusV2, parseWorktreeList, splitZ, type StatusCounts, type WorktreeEntry } from './formats.js';
import { branchNameProblem } from './ref-format.js';
import { gitFailed, gitOk, tail, type Git } from './run.js';

export interface RepoFacts {
  /** The top folder of the checkout that holds the folder asked about (the user's checkout). */
  top: string;
  /** The repository's common git folder, shared by all its worktrees (`info/exclude`, `worktrees/`). */
  commonDir: string;
  /** This checkout's own git folder. */
  gitDir: string;
  /** What this checkout has checked out: a branch (short name) or a detached commit. */
  head: { branch: string | null; sha: string };
}

/** The checkout holding `folder`: E_NOT_A_REPO when there is none, E_NO_COMMIT when it has no commit yet. */
export async function repoFacts(git: Git, folder: string): Promise<RepoFacts> {
  const isDir = await stat(folder).then(
    (st) => st.isDirectory(),
    () => false,
  );
  if (!isDir) throw new JaggersError('E_NOT_A_REPO', `${folder} is not a folder, so not in a git repository`);
  const r = await git.run(folder, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir']);
  const lines = r.stdout.split('\n');
  if (r.code !== 0 || lines.length < 3) {
    throw new JaggersError('E_NOT_A_REPO', `${folder} is not in a git repository's checkout: ${tail(r.stderr, 300) || `git rev-parse exited ${r.code}`}`);
  }
  const [top = '', gitDir = '', commonDir = ''] = lines;
  const [sha, sym] = await Promise.all([
    git.run(top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']),
    git.run(top, ['symbolic-ref', '--quiet', 'HEAD']),
  ]);
  if (sha.code !== 0) throw new JaggersError('E_NO_COMMIT', `the repository of ${top} has no commit yet: commit something first, then make worktrees from it`);
  const ref = sym.code === 0 ? sym.stdout.trim() : '';
  return { top, gitDir, commonDir, head: { branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null, sha: sha.stdout.trim() } };
}

/** The commit `ref` names (a full ref or any revision), or null when it names none. */
export async function commitOf(git: Git, cwd: string, ref: string): Promise<string | null> {
  // A leading '-' would be read as an option; no branch, ref or sha starts with one.
  if (ref.startsWith('-') || ref === '') return null;
  const r = await git.run(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  return r.code === 0 ? r.stdout.trim() : null;
}

export interface Base {
  /** The commit the worktree starts from. */
  sha: string;
  /** The local branch it came from (the branch to merge back into), or null for a commit or another ref. */
  branch: string | null;
}

/** What `given` names as a worktree's base; the current branch when nothing is given. */
export async function resolveBase(git: Git, facts: RepoFacts, given: string | undefined): Promise<Base> {
  if (given === undefined || given === 'HEAD') {
    if (given === undefined && facts.head.branch === null) {
      throw new JaggersError(
        'E_DETACHED_HEAD',
        `${facts.top} has a detached HEAD (${facts.head.sha.slice(0, 12)}) and no base was given: name a branch or commit as the base`,
      );
    }
    return { sha: facts.head.sha, branch: facts.head.branch };
  }
  if (given.trim() === '' || given.startsWith('-') || /[\0-\x1f\x7f]/.test(given)) {
    throw new JaggersError(
      'E_BAD_NAME',
      `base ${JSON.stringify(given)} is not a branch, ref or commit name: empty, starting with '-' or holding control characters`,
    );
  }
  const short = given.startsWith('refs/heads/') ? given.slice('refs/heads/'.length) : given;
  if (branchNameProblem(short) === null) {
    const sha = await commitOf(git, facts.top, `refs/heads/${short}`);
    if (sha) return { sha, branch: short };
  }
  const sha = await commitOf(git, facts.top, given);
  if (!sha) throw new JaggersError('E_BASE_MISSING', `base ${JSON.stringify(given)} is not a branch, tag or commit of the repository at ${facts.top}`);
  return { sha, branch: null };
}

/** The sha a ref points at (no peeling), or null when it does not exist. */
export async function refSha(git: Git, cwd: string, ref: string): Promise<string | null> {
  const r = await git.run(cwd, ['rev-parse', '--verify', '--quiet', ref]);
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Whether `a` is `b` or an ancestor of it (`merge-base --is-ancestor`). */
export async function isAncestor(git: Git, cwd: string, a: string, b: string): Promise<boolean> {
  const args = ['merge-base', '--is-ancestor', a, b];
  const r = await git.run(cwd, args);
  if (r.code === 0 || r.code === 1) return r.code === 0;
  throw gitFailed('is-ancestor', cwd, args, r);
}

/** How many commits `rev-list --count <range>` finds (`base..branch`). */
export async function countCommits(git: Git, cwd: string, range: string): Promise<number> {
  return Number((await gitOk(git, cwd, ['rev-list', '--count', range], 'counting commits')).trim());
}

export async function listWorktrees(git: Git, cwd: string): Promise<WorktreeEntry[]> {
  // Retried: a worktree another git is adding at this moment can make the listing fail (see isLockBusy).
  return parseWorktreeList(await gitOk(git, cwd, ['worktree', 'list', '--porcelain', '-z'], 'listing worktrees', { retryLocks: true }));
}

/** Staged, unstaged, untracked and conflicted counts of a checkout (untracked files one by one, not by folder). */
export async function statusCounts(git: Git, cwd: string): Promise<StatusCounts> {
  return parseStatusV2(await gitOk(git, cwd, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--ignore-submodules=none'], 'reading the status'));
}

export async function conflictedPaths(git: Git, cwd: string): Promise<string[]> {
  const r = await git.run(cwd, ['diff', '--name-only', '--diff-filter=U', '-z']);
  return r.code === 0 ? splitZ(r.stdout) : [];
}

/**
 * `-c` settings that give commits an author and committer when the repository's config names none:
 * the user's own identity always wins (config, or GIT_AUTHOR_NAME and the like in the environment).
 */
export async function fallbackIdentity(git: Git, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const r = await git.run(cwd, ['config', '-z', '--get-regexp', '^user\\.(name|email)$']);
  const keys = new Set(splitZ(r.code === 0 ? r.stdout : '').map((entry) => entry.split('\n')[0]?.toLowerCase()));
  const out: string[] = [];
  if (!keys.has('user.name') && !(env.GIT_AUTHOR_NAME && env.GIT_COMMITTER_NAME)) out.push('user.name=jaggers');
  if (!keys.has('user.email') && !(env.GIT_AUTHOR_EMAIL && env.GIT_COMMITTER_EMAIL) && !env.EMAIL) out.push('user.email=jaggers@localhost');
  return out;
}
