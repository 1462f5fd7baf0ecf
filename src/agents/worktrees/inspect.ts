// Reading jaggers' worktrees without changing anything: the list, one worktree's status, its diff.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { JaggersError } from '../../errors.js';
import { isNotFound } from '../../fs/durable.js';
import { LOG_FORMAT, parseLog, parseNumstat, splitZ, type CommitInfo, type FileStat, type StatusCounts } from '../../git/formats.js';
import { commitOf, countCommits, isAncestor, listWorktrees, statusCounts, type RepoFacts } from '../../git/repo.js';
import { gitOk } from '../../git/run.js';
import { adminDirs, assertWorktreeName, readRecord, type WorktreeRecord } from './layout.js';
import { examine, factsOf, type Ctx, type NameState } from './state.js';

export interface ListedWorktree {
  name: string;
  path: string;
  /** The branch checked out (`jaggers/<name>`), or null when detached. */
  branch: string | null;
  head: string | null;
  /** The lock's reason ('' for none given), or null when not locked; `jaggers: creating` while made. */
  locked: string | null;
  /** Why git would prune it (its folder is gone), or null. */
  prunable: string | null;
  base: string | null;
  baseBranch: string | null;
  createdAt: string | null;
}

/** jaggers' worktrees (those in `.jaggers/worktrees/`), in git's order. */
export async function listOurs(ctx: Ctx): Promise<ListedWorktree[]> {
  const facts = await factsOf(ctx);
  const [entries, admins] = await Promise.all([listWorktrees(ctx.git, facts.top), adminDirs(facts.commonDir)]);
  const ours = entries.filter((e) => path.dirname(path.resolve(e.path)) === ctx.layout.worktreesDir);
  return Promise.all(
    ours.map(async (e) => {
      const admin = admins.get(path.resolve(e.path));
      const record = admin ? await readRecord(admin) : null;
      return {
        name: path.basename(e.path),
        path: e.path,
        branch: e.branch?.startsWith('refs/heads/') ? e.branch.slice('refs/heads/'.length) : null,
        head: e.head,
        locked: e.locked,
        prunable: e.prunable,
        base: record?.base ?? null,
        baseBranch: record?.baseBranch ?? null,
        createdAt: record?.createdAt ?? null,
      };
    }),
  );
}

/** The names of `jaggers/*` branches (without the prefix), for finding branches left without a worktree. */
export async function ourBranches(ctx: Ctx, facts: RepoFacts): Promise<string[]> {
  const out = await gitOk(ctx.git, facts.top, ['for-each-ref', '--format=%(refname)%00', `refs/heads/${ctx.layout.branchPrefix}`], 'listing branches');
  return splitZ(out.replaceAll('\n', '')).map((r) => r.slice(`refs/heads/${ctx.layout.branchPrefix}`.length));
}

export interface Known {
  facts: RepoFacts;
  state: NameState;
  record: WorktreeRecord;
  /** Where the branch points now. */
  head: string;
}

/** A registered worktree of ours with its record: E_WORKTREE_UNKNOWN when there is none of that name. */
export async function requireWorktree(ctx: Ctx, name: string): Promise<Known> {
  assertWorktreeName(name);
  const facts = await factsOf(ctx);
  const state = await examine(ctx, facts, name);
  if (!state.entry) throw new JaggersError('E_WORKTREE_UNKNOWN', `no worktree ${JSON.stringify(name)} in ${ctx.layout.worktreesDir}`);
  if (!state.record || !state.branchSha) {
    throw new JaggersError(
      'E_WORKTREE_BROKEN',
      `worktree ${JSON.stringify(name)} has ${state.branchSha ? 'no record of its base' : 'no branch'}: create it again with the base it was made from to repair it, or remove it with force`,
    );
  }
  return { facts, state, record: state.record, head: state.branchSha };
}

export interface WorktreeStatus {
  name: string;
  path: string;
  branch: string;
  head: string;
  base: string;
  baseBranch: string | null;
  /** False when the worktree's folder is gone (git would prune it): nothing uncommitted is left then. */
  present: boolean;
  dirty: StatusCounts;
  /** No staged, unstaged, untracked or conflicted path. */
  clean: boolean;
  /** Commits on the branch since its base (`rev-list --count base..branch`). */
  ahead: number;
  /** The branch its merged state was checked against (default its base branch), or null: then any local branch. */
  mergedInto: string | null;
  /** The branch is contained in `mergedInto` (`merge-base --is-ancestor`), or jaggers squash-merged this very tip there. */
  merged: boolean;
}

/** Whether `head` is in `into` (or in any other local branch when `into` is null). */
async function mergedState(ctx: Ctx, k: Known, into: string | null): Promise<boolean> {
  const { git } = ctx;
  const top = k.facts.top;
  if (into === null) {
    const out = await gitOk(git, top, ['for-each-ref', '--format=%(refname)%00', '--contains', k.head, 'refs/heads/'], 'finding branches');
    return splitZ(out.replaceAll('\n', '')).some((r) => r !== `refs/heads/${k.record.branch}`);
  }
  const m = k.record.merged;
  if (m && m.tip === k.head && m.into === into) return true;
  const intoSha = (await commitOf(git, top, `refs/heads/${into}`)) ?? (await commitOf(git, top, into));
  if (!intoSha)
    throw new JaggersError(
      'E_BASE_MISSING',
      `worktree ${JSON.stringify(k.record.name)}: ${JSON.stringify(into)} (to check the merge against) is not a branch or commit`,
    );
  return isAncestor(git, top, k.head, intoSha);
}

export async function statusOf(ctx: Ctx, k: Known, o: { into?: string } = {}): Promise<WorktreeStatus> {
  const present = k.state.folder !== 'missing';
  const into = o.into ?? k.record.baseBranch;
  const [dirty, ahead, merged] = await Promise.all([
    present ? statusCounts(ctx.git, k.state.path) : { staged: 0, unstaged: 0, untracked: 0, conflicted: 0 },
    countCommits(ctx.git, k.facts.top, `${k.record.base}..${k.head}`),
    mergedState(ctx, k, into),
  ]);
  return {
    name: k.record.name,
    path: k.state.path,
    branch: k.record.branch,
    head: k.head,
    base: k.record.base,
    baseBranch: k.record.baseBranch,
    present,
    dirty,
    clean: dirty.staged + dirty.unstaged + dirty.untracked + dirty.conflicted === 0,
    ahead,
    mergedInto: into,
    merged,
  };
}

export interface DiffOptions {
  /** Include the patch text (`git diff`), not only the counts. */
  patch?: boolean;
  /** Compare the worktree's files as they are now (committed or not, untracked too) with the base. */
  uncommitted?: boolean;
}

export interface WorktreeDiff {
  name: string;
  base: string;
  head: string;
  files: FileStat[];
  /** The branch's commits since the base, newest first. */
  commits: CommitInfo[];
  patch: string | null;
  uncommitted: boolean;
}

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '-M'];

export async function diffOf(ctx: Ctx, k: Known, o: DiffOptions = {}): Promise<WorktreeDiff> {
  const { git } = ctx;
  const top = k.facts.top;
  const commits = parseLog(await gitOk(git, top, ['log', '-z', '--no-color', LOG_FORMAT, `${k.record.base}..${k.head}`], 'listing commits'));
  const uncommitted = !!o.uncommitted && k.state.folder !== 'missing';
  if (!uncommitted) {
    const range = `${k.record.base}...${k.head}`;
    const [numstat, patch] = await Promise.all([
      gitOk(git, top, ['diff', '--numstat', '-z', ...DIFF_FLAGS, range], 'diffing'),
      o.patch ? gitOk(git, top, ['diff', ...DIFF_FLAGS, '--src-prefix=a/', '--dst-prefix=b/', range], 'diffing') : null,
    ]);
    return { name: k.record.name, base: k.record.base, head: k.head, files: parseNumstat(numstat), commits, patch, uncommitted: false };
  }
  // The worktree as it is, untracked files too, through a private copy of its index: the agent's own index is never touched.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'jaggers-diff-'));
  try {
    const index = path.join(tmp, 'index');
    await copyFile(path.join(k.state.adminDir ?? '', 'index'), index).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
    const env = { GIT_INDEX_FILE: index };
    await gitOk(git, k.state.path, ['add', '--all', '--', '.'], 'reading the worktree', { env });
    const [numstat, patch] = await Promise.all([
      gitOk(git, k.state.path, ['diff', '--cached', '--numstat', '-z', ...DIFF_FLAGS, k.record.base], 'diffing', { env }),
      o.patch ? gitOk(git, k.state.path, ['diff', '--cached', ...DIFF_FLAGS, '--src-prefix=a/', '--dst-prefix=b/', k.record.base], 'diffing', { env }) : null,
    ]);
    return { name: k.record.name, base: k.record.base, head: k.head, files: parseNumstat(numstat), commits, patch, uncommitted: true };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
