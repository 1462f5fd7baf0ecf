// What is there for one worktree name, read fresh before every change: git's registration at our folder,
// the branch, the folder itself and jaggers' record. Create, remove and the others decide from this.
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError, isJaggersError } from '../../errors.js';
import { isNotFound } from '../../fs/durable.js';
import type { WorktreeEntry } from '../../git/formats.js';
import { listWorktrees, refSha, repoFacts, type RepoFacts } from '../../git/repo.js';
import type { Git } from '../../git/run.js';
import { withLock } from '../../sessions/lock.js';
import { adminDirs, branchRef, pathOf, readRecord, type Layout, type WorktreeRecord } from './layout.js';

export interface Ctx {
  git: Git;
  layout: Layout;
  /** The environment setup commands run with (and GIT_AUTHOR_NAME and the like are read from). */
  env: NodeJS.ProcessEnv;
  /** How long a create or remove waits for another one of the same name (default 120 s: a setup may run that long). */
  lockWaitMs: number;
}

export const factsOf = (ctx: Ctx): Promise<RepoFacts> => repoFacts(ctx.git, ctx.layout.projectRoot);

export interface NameState {
  name: string;
  path: string;
  /** git's registration of a worktree at our folder. */
  entry: WorktreeEntry | null;
  /** Another registered worktree that has our branch checked out. */
  elsewhere: WorktreeEntry | null;
  /** Where the branch `jaggers/<name>` points, or null when there is no such branch. */
  branchSha: string | null;
  folder: 'missing' | 'empty' | 'full';
  /** The registration's admin folder in the common git dir. */
  adminDir: string | null;
  record: WorktreeRecord | null;
}

async function folderState(dir: string): Promise<NameState['folder']> {
  try {
    return (await readdir(dir)).length === 0 ? 'empty' : 'full';
  } catch (e) {
    if (isNotFound(e)) return 'missing';
    // ENOTDIR: a file where the folder should be is "full": never removed without asking.
    return 'full';
  }
}

export async function examine(ctx: Ctx, facts: RepoFacts, name: string): Promise<NameState> {
  const dir = pathOf(ctx.layout, name);
  const ref = branchRef(ctx.layout, name);
  const [entries, branchSha, folder, admins] = await Promise.all([
    listWorktrees(ctx.git, facts.top),
    refSha(ctx.git, facts.top, ref),
    folderState(dir),
    adminDirs(facts.commonDir),
  ]);
  const entry = entries.find((e) => path.resolve(e.path) === dir) ?? null;
  const elsewhere = entries.find((e) => e.branch === ref && path.resolve(e.path) !== dir) ?? null;
  const adminDir = entry ? (admins.get(dir) ?? null) : null;
  const record = adminDir ? await readRecord(adminDir) : null;
  return { name, path: dir, entry, elsewhere, branchSha, folder, adminDir, record };
}

/**
 * Run `fn` while no other create or remove of the same name runs, in this process or another: the
 * house's lock file (src/sessions/lock.ts), in the common git dir because branch names are the
 * repository's, not one checkout's. A lock whose process died is taken over.
 */
export async function withNameLock<T>(ctx: Ctx, facts: RepoFacts, name: string, fn: () => Promise<T>): Promise<T> {
  const dir = path.join(facts.commonDir, 'jaggers');
  await mkdir(dir, { recursive: true });
  try {
    return await withLock(path.join(dir, `worktree-${name}`), fn, { timeoutMs: ctx.lockWaitMs });
  } catch (e) {
    if (isJaggersError(e) && e.code === 'E_REGISTRY' && /timed out/.test(e.message)) {
      throw new JaggersError('E_WORKTREE_BUSY', `worktree ${JSON.stringify(name)}: another create or remove of it is under way (${e.message})`);
    }
    throw e;
  }
}
