// jaggers' git worktrees, one per agent or job: `.jaggers/worktrees/<name>` on branch `jaggers/<name>`.
// The one entry point (docs/worktrees.md); git itself is run by src/git/.
import { realpath } from 'node:fs/promises';
import { JaggersError } from '../../errors.js';
import { createGit, gitOk, type Git } from '../../git/run.js';
import { commitWorktree, type Committed } from './commit.js';
import { createWorktree, type CreateOptions, type Created } from './create.js';
import { diffOf, listOurs, requireWorktree, statusOf, type DiffOptions, type ListedWorktree, type WorktreeDiff, type WorktreeStatus } from './inspect.js';
import { layoutOf } from './layout.js';
import { mergeWorktree, type MergeOptions, type MergeResult } from './merge.js';
import { gcCandidates, removeWorktree, type GcCandidate, type RemoveOptions, type Removed } from './remove.js';
import { withNameLock, type Ctx } from './state.js';

export type {
  Committed,
  Created,
  CreateOptions,
  DiffOptions,
  GcCandidate,
  ListedWorktree,
  MergeOptions,
  MergeResult,
  Removed,
  RemoveOptions,
  WorktreeDiff,
  WorktreeStatus,
};
export type { MergeConflict, MergeMode } from './merge.js';
export type { WorktreeInfo } from './create.js';
export { worktreeNameProblem } from './layout.js';
export { copyPathProblem } from './prepare.js';

export interface Worktrees {
  /** The project's folder, symbolic links resolved; worktrees are in `<root>/.jaggers/worktrees/`. */
  readonly root: string;
  readonly dir: string;
  /** Make `jaggers/<name>` from `base` and check it out; the same call again returns the same worktree. */
  create(name: string, options?: CreateOptions): Promise<Created>;
  list(): Promise<ListedWorktree[]>;
  /** Uncommitted changes, commits since the base, and whether the branch is merged into `into` (default its base branch). */
  status(name: string, options?: { into?: string }): Promise<WorktreeStatus>;
  diff(name: string, options?: DiffOptions): Promise<WorktreeDiff>;
  /** Commit everything in the worktree on its branch (null when there is nothing). */
  commit(name: string, message: string): Promise<Committed>;
  merge(name: string, options?: MergeOptions): Promise<MergeResult>;
  /** Remove the worktree and its branch; refused while it holds uncommitted or unmerged work, unless forced. */
  remove(name: string, options?: RemoveOptions): Promise<Removed>;
  /** Our worktrees whose names are not in `inUse`, each with its status and whether remove() would take it. */
  gcCandidates(inUse: Iterable<string>): Promise<GcCandidate[]>;
}

export interface WorktreesOptions {
  git?: Git;
  /** For setup commands and the fallback identity check (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** How long a create, remove, merge or commit waits for another one on the same name (default 120 s). */
  lockWaitMs?: number;
  /** What each branch name starts with (default `jaggers/`). */
  branchPrefix?: string;
}

/** `git worktree list -z` came with git 2.36. */
const MIN_GIT: [number, number] = [2, 36];

async function checkVersion(git: Git, cwd: string): Promise<void> {
  const out = await gitOk(git, cwd, ['version'], 'reading the git version');
  const m = /(\d+)\.(\d+)/.exec(out);
  const [major, minor] = [Number(m?.[1] ?? 0), Number(m?.[2] ?? 0)];
  if (major < MIN_GIT[0] || (major === MIN_GIT[0] && minor < MIN_GIT[1])) {
    throw new JaggersError('E_GIT', `worktrees need git ${MIN_GIT.join('.')} or later; ${out.trim()} was found`);
  }
}

export async function openWorktrees(projectRoot: string, options: WorktreesOptions = {}): Promise<Worktrees> {
  const root = await realpath(projectRoot).catch(() => {
    throw new JaggersError('E_NOT_A_REPO', `${projectRoot} is not a folder, so not in a git repository`);
  });
  const git = options.git ?? createGit({ env: options.env });
  await checkVersion(git, root);
  const ctx: Ctx = { git, layout: layoutOf(root, options.branchPrefix), env: options.env ?? process.env, lockWaitMs: options.lockWaitMs ?? 120_000 };
  const locked = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const k = await requireWorktree(ctx, name);
    return withNameLock(ctx, k.facts, name, async () => fn());
  };
  return {
    root,
    dir: ctx.layout.worktreesDir,
    create: (name, o) => createWorktree(ctx, name, o),
    list: () => listOurs(ctx),
    status: async (name, o) => statusOf(ctx, await requireWorktree(ctx, name), o),
    diff: async (name, o) => diffOf(ctx, await requireWorktree(ctx, name), o),
    commit: (name, message) => locked(name, async () => commitWorktree(ctx, await requireWorktree(ctx, name), message)),
    merge: (name, o) => locked(name, async () => mergeWorktree(ctx, await requireWorktree(ctx, name), o)),
    remove: (name, o) => removeWorktree(ctx, name, o),
    gcCandidates: (inUse) => gcCandidates(ctx, inUse),
  };
}
