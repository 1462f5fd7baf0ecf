// Making a worktree: `git worktree add -b jaggers/<name> .jaggers/worktrees/<name> <base sha>`, idempotent by
// name. What a crash left half made is undone or finished (never reused as it is), or named in an error.
import { rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { JaggersError } from '../../errors.js';
import { isAncestor, resolveBase, type Base, type RepoFacts } from '../../git/repo.js';
import { gitFailed, isLockBusy, LOCK_RETRY_MS } from '../../git/run.js';
import { adminDirs, assertWorktreeName, branchOf, branchRef, CREATING, ensureExcluded, GIT_INITIALIZING, writeRecord, type WorktreeRecord } from './layout.js';
import { assertCopyList, copyListed, runSetup, type Copied, type SetupResult } from './prepare.js';
import { examine, factsOf, withNameLock, type Ctx, type NameState } from './state.js';

export interface CreateOptions {
  /** A branch, ref or commit; default the branch checked out in the user's checkout. */
  base?: string;
  /** Paths (relative to the repository's top) copied from the user's checkout when there (`.env`). */
  copy?: readonly string[];
  /** A shell command run once in the new worktree (`npm ci`); its failure undoes the worktree. */
  setup?: string;
  /** Default 10 minutes. */
  setupTimeoutMs?: number;
}

export interface WorktreeInfo {
  name: string;
  path: string;
  /** `jaggers/<name>`. */
  branch: string;
  /** The commit the branch started from. */
  base: string;
  /** The local branch the base came from (merges go there by default), or null. */
  baseBranch: string | null;
  createdAt: string;
}

export interface Created extends WorktreeInfo {
  /** False when the worktree was there already (a second create of the same name). */
  created: boolean;
  /** What was found half made and put right, or null. */
  repaired: string | null;
  copied: Copied | null;
  setup: SetupResult | null;
}

const infoOf = (path: string, r: WorktreeRecord): WorktreeInfo => ({
  name: r.name,
  path,
  branch: r.branch,
  base: r.base,
  baseBranch: r.baseBranch,
  createdAt: r.createdAt,
});

/** Whether the base a caller gives again is the one the worktree was made from (its branch, or its commit). */
const sameBase = (r: WorktreeRecord, b: Base): boolean => (b.branch !== null && b.branch === r.baseBranch) || b.sha === r.base;

/** Remove our worktree's registration and folder, and its branch when it has nothing beyond `baseSha`. */
async function undo(ctx: Ctx, facts: RepoFacts, s: Pick<NameState, 'name' | 'path'>, baseSha: string | null): Promise<void> {
  const { git } = ctx;
  const wt = await git.run(facts.top, ['worktree', 'remove', '--force', '--force', s.path], { retryLocks: true });
  if (wt.code !== 0 && !/is not a working tree/.test(wt.stderr)) throw gitFailed(`removing worktree ${s.name}`, facts.top, ['worktree', 'remove', s.path], wt);
  await rm(s.path, { recursive: true, force: true });
  // Compare-and-delete: a branch that moved on holds work and is kept.
  if (baseSha) await git.run(facts.top, ['update-ref', '-m', 'jaggers: undo a half-made worktree', '-d', branchRef(ctx.layout, s.name), baseSha]);
}

export async function createWorktree(ctx: Ctx, name: string, options: CreateOptions = {}): Promise<Created> {
  assertWorktreeName(name);
  assertCopyList(options.copy ?? []);
  const facts = await factsOf(ctx);
  let base: Base | null = null;
  const baseOf = async () => (base ??= await resolveBase(ctx.git, facts, options.base));
  await ensureExcluded(facts.commonDir);
  return withNameLock(ctx, facts, name, async () => {
    let repaired: string | null = null;
    let refLockRemoved = false;
    for (let attempt = 0; ; attempt++) {
      // Each round either returns, throws, or undoes one half-made state (or meets a busy git): a few suffice.
      if (attempt > 2 * LOCK_RETRY_MS.length) throw new JaggersError('E_GIT', `worktree ${JSON.stringify(name)}: still not made after ${attempt} attempts`);
      const s = await examine(ctx, facts, name);
      const ref = branchRef(ctx.layout, name);
      if (s.elsewhere) {
        throw new JaggersError(
          'E_BRANCH_EXISTS',
          `worktree ${JSON.stringify(name)}: branch ${branchOf(ctx.layout, name)} is checked out at ${s.elsewhere.path}, not at ${s.path}`,
        );
      }
      if (s.entry) {
        if (s.entry.branch !== ref) {
          throw new JaggersError(
            'E_WORKTREE_BROKEN',
            `worktree ${JSON.stringify(name)}: ${s.path} is a worktree of ${s.entry.branch ?? `a detached HEAD (${s.entry.head ?? '?'})`}, not of ${branchOf(ctx.layout, name)}; remove it (git worktree remove) or choose another name`,
          );
        }
        // We hold the name's lock, so a create still marked as under way is one a crash cut short.
        if (s.entry.locked === CREATING || s.entry.locked === GIT_INITIALIZING) {
          const b = s.record?.base ?? (await baseOf()).sha;
          await undo(ctx, facts, s, s.branchSha === b ? b : null);
          repaired = 'a create cut short (by a crash) was undone and made again';
          continue;
        }
        if (s.folder === 'missing') {
          // Registered, folder gone: the branch (and any commits on it) is kept, and checked out again.
          const record = s.record ?? (await adopt(ctx, facts, s, await baseOf()));
          await undo(ctx, facts, s, null);
          return finish(ctx, facts, s, record, options, false, 'its folder was missing: checked out again from its branch');
        }
        if (s.record) {
          if (options.base !== undefined && !sameBase(s.record, await baseOf())) {
            throw new JaggersError(
              'E_BRANCH_EXISTS',
              `worktree ${JSON.stringify(name)} exists with base ${s.record.baseBranch ?? s.record.base.slice(0, 12)}, not ${options.base}: remove it first, or ask for the same base`,
            );
          }
          return { ...infoOf(s.path, s.record), created: false, repaired, copied: null, setup: null };
        }
        // A crash between `git worktree add` and writing our record.
        const record = await adopt(ctx, facts, s, await baseOf());
        return { ...infoOf(s.path, record), created: false, repaired: 'its record was missing: written again', copied: null, setup: null };
      }
      if (s.folder === 'full') {
        throw new JaggersError(
          'E_WORKTREE_BROKEN',
          `worktree ${JSON.stringify(name)}: ${s.path} exists but git does not know it as a worktree (a create cut short, or files put there): look inside, then move it away or delete it`,
        );
      }
      if (s.folder === 'empty') await rmdir(s.path);
      const b = await baseOf();
      if (s.branchSha !== null && s.branchSha !== b.sha) {
        throw new JaggersError(
          'E_BRANCH_EXISTS',
          `worktree ${JSON.stringify(name)}: branch ${branchOf(ctx.layout, name)} exists (at ${s.branchSha.slice(0, 12)}) without a worktree and is not the base ${b.sha.slice(0, 12)}: ` +
            `merge or delete it (git branch -D ${branchOf(ctx.layout, name)}), or choose another name`,
        );
      }
      // An existing branch at the base is what a crash inside `git worktree add -b` leaves: taken as it is.
      const args = [
        'worktree',
        'add',
        '--lock',
        '--reason',
        CREATING,
        ...(s.branchSha ? [s.path, branchOf(ctx.layout, name)] : ['--no-track', '-b', branchOf(ctx.layout, name), s.path, b.sha]),
      ];
      const r = await ctx.git.run(facts.top, args);
      if (r.code !== 0) {
        // The lock of the branch's own ref, older than git ever holds one, or still there after every retry:
        // a git killed inside its `worktree add` left it (a supervisor killed mid-create, its git dying on
        // the closed pipe). Nobody else writes jaggers/<name>, and we hold the name's lock: it is removed,
        // once, and the add made again.
        const ms = LOCK_RETRY_MS[attempt];
        const left = refLockRemoved ? null : staleRefLock(r.stderr, facts.commonDir, ref);
        if (left && (ms === undefined || (await ageMs(left)) >= STALE_REF_LOCK_MS)) {
          refLockRemoved = true;
          await rm(left, { force: true });
          repaired = `a lock left on ${branchOf(ctx.layout, name)} by a git that was cut short was removed`;
          continue;
        }
        if (isLockBusy(r.stderr) && ms !== undefined) {
          // Another git held a lock: the state is read again (git may have made the branch) and the add retried.
          await sleep(ms + Math.floor(Math.random() * ms));
          continue;
        }
        // `git worktree add -b` that fails after making the branch leaves it behind.
        const after = await examine(ctx, facts, name);
        if (!after.entry && after.branchSha === b.sha && s.branchSha === null) await ctx.git.run(facts.top, ['update-ref', '-d', ref, b.sha]);
        throw gitFailed(`creating worktree ${name}`, facts.top, args, r);
      }
      const record: WorktreeRecord = {
        version: 1,
        name,
        branch: branchOf(ctx.layout, name),
        base: b.sha,
        baseBranch: b.branch,
        createdAt: new Date().toISOString(),
        merged: null,
      };
      return finish(ctx, facts, s, record, options, true, repaired ?? (s.branchSha ? 'its branch was there without a worktree: checked out' : null));
    }
  });
}

/** A ref's lock this old is no git's at work: git holds one for the moment of the ref's update. */
const STALE_REF_LOCK_MS = 2000;

/** How long ago `file` was last changed (0 when it is gone: nothing to remove then). */
async function ageMs(file: string): Promise<number> {
  const st = await stat(file).catch(() => null);
  return st ? Date.now() - st.mtimeMs : 0;
}

/** The lock file of `ref` (refs/heads/...) in `commonDir` when git's error says it could not take it. */
export function staleRefLock(stderr: string, commonDir: string, ref: string): string | null {
  const want = path.join(commonDir, `${ref}.lock`);
  for (const m of stderr.matchAll(/Unable to create '([^']*\.lock)': File exists/g)) if (path.resolve(m[1]!) === want) return want;
  return null;
}

/** Take a registered worktree without a record as ours when `base` is where its branch started (or before). */
async function adopt(ctx: Ctx, facts: RepoFacts, s: NameState, base: Base): Promise<WorktreeRecord> {
  const tip = s.branchSha;
  if (!tip || !(await isAncestor(ctx.git, facts.top, base.sha, tip))) {
    throw new JaggersError(
      'E_WORKTREE_BROKEN',
      `worktree ${JSON.stringify(s.name)} has no record of its base, and ${base.sha.slice(0, 12)} is not an ancestor of its branch (${tip?.slice(0, 12) ?? 'missing'}): remove it (with force) or give the base it was made from`,
    );
  }
  const record: WorktreeRecord = {
    version: 1,
    name: s.name,
    branch: branchOf(ctx.layout, s.name),
    base: base.sha,
    baseBranch: base.branch,
    createdAt: new Date().toISOString(),
    merged: null,
  };
  if (s.adminDir && s.folder !== 'missing') await writeRecord(s.adminDir, record);
  return record;
}

/**
 * The steps after `git worktree add` (run with the worktree locked as CREATING): the record, the copy list,
 * the setup command, then the unlock. A failure undoes the whole worktree: nothing half made is left.
 */
async function finish(
  ctx: Ctx,
  facts: RepoFacts,
  s: NameState,
  record: WorktreeRecord,
  o: CreateOptions,
  made: boolean,
  repaired: string | null,
): Promise<Created> {
  const { git } = ctx;
  try {
    if (!made) {
      // Re-add on the existing branch (its folder was missing).
      const args = ['worktree', 'add', '--lock', '--reason', CREATING, s.path, record.branch];
      const r = await git.run(facts.top, args, { retryLocks: true });
      if (r.code !== 0) throw gitFailed(`checking out worktree ${s.name} again`, facts.top, args, r);
    }
    const adminDir = (await adminDirs(facts.commonDir)).get(s.path);
    if (!adminDir) throw new JaggersError('E_GIT', `worktree ${s.name}: git made ${s.path} but its admin folder is not in ${facts.commonDir}/worktrees`);
    await writeRecord(adminDir, record);
    const copied = o.copy?.length ? await copyListed(facts.top, s.path, o.copy) : null;
    let setup: SetupResult | null = null;
    if (o.setup) {
      const env = { ...ctx.env, JAGGERS_WORKTREE: s.path, JAGGERS_WORKTREE_NAME: s.name, JAGGERS_WORKTREE_BASE: record.base };
      setup = await runSetup(o.setup, s.path, env, o.setupTimeoutMs ?? 600_000);
      if (setup.exitCode !== 0) {
        throw new JaggersError(
          'E_SETUP_FAILED',
          `worktree ${JSON.stringify(s.name)}: setup command ${JSON.stringify(o.setup)} exited ${setup.exitCode}; the worktree and its branch were removed. Its output ended:\n${setup.output}`,
        );
      }
    }
    const un = await git.run(facts.top, ['worktree', 'unlock', s.path], { retryLocks: true });
    if (un.code !== 0) throw gitFailed(`unlocking worktree ${s.name}`, facts.top, ['worktree', 'unlock', s.path], un);
    return { ...infoOf(s.path, record), created: made, repaired, copied, setup };
  } catch (e) {
    // A branch that only ever pointed at the base goes too; one with commits (re-added) is kept.
    await undo(ctx, facts, s, record.base).catch(() => undefined);
    throw e;
  }
}
