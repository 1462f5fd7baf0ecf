// Merging an agent's branch into its base branch without touching the user's checkout, index or stash
// while the merge is made: the merge commit is made in a temporary detached worktree on the base's tip
// (or, for `rebase`, the branch is rebased in its own worktree), and only then is the base branch moved:
// fast-forwarded in the user's checkout when it is checked out there and clean, or updated by
// compare-and-swap when it is checked out nowhere. A conflict leaves everything as it was.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError, unreachable } from '../../errors.js';
import { branchNameProblem } from '../../git/ref-format.js';
import { commitOf, conflictedPaths, countCommits, fallbackIdentity, isAncestor, listWorktrees, refSha, statusCounts } from '../../git/repo.js';
import { gitFailed, gitOk, type Git, type GitResult } from '../../git/run.js';
import { pidIsAlive } from '../../sessions/lock.js';
import { writeRecord } from './layout.js';
import { statusOf, type Known } from './inspect.js';
import type { Ctx } from './state.js';

export type MergeMode = 'merge' | 'squash' | 'rebase';

export interface MergeOptions {
  /** `merge`: a merge commit (never a fast-forward); `squash`: one new commit; `rebase`: the branch rebased, then fast-forwarded. */
  mode?: MergeMode;
  /** The local branch to merge into; default the branch the worktree was made from. */
  into?: string;
  /** The commit message (merge and squash); a default names the agent's branch. */
  message?: string;
  /** Merge the branch's commits even though the worktree has uncommitted changes (they stay where they are). Not for rebase. */
  allowDirty?: boolean;
}

export interface MergeResult {
  status: 'merged' | 'up-to-date';
  mode: MergeMode;
  into: string;
  /** The base branch before and after. */
  from: string;
  to: string;
  /** The agent's commits merged. */
  commits: number;
  /** How the base branch was moved: in the user's checkout (`merge --ff-only`), or its ref alone (`update-ref`). */
  moved: 'fast-forward' | 'update-ref' | null;
}

/** A merge's temporary worktree folder: `merge-<pid>-<random>`, so one a dead process left is known as such. */
const TEMP = /^merge-(\d+)-[0-9a-f]+$/;

/** Remove temporary merge worktrees whose process is gone (a merge a crash cut short). */
export async function sweepTemps(ctx: Ctx, top: string): Promise<string[]> {
  const entries = await listWorktrees(ctx.git, top);
  const gone: string[] = [];
  for (const e of entries) {
    const dir = path.resolve(e.path);
    const pid = Number(TEMP.exec(path.basename(dir))?.[1]);
    if (path.dirname(dir) !== ctx.layout.tmpDir || !pid || pid === process.pid || pidIsAlive(pid)) continue;
    await ctx.git.run(top, ['worktree', 'remove', '--force', '--force', dir], { retryLocks: true });
    await rm(dir, { recursive: true, force: true });
    gone.push(dir);
  }
  // Folders with no registration (a crash inside `git worktree add`).
  for (const n of await readdir(ctx.layout.tmpDir).catch(() => [] as string[])) {
    const pid = Number(TEMP.exec(n)?.[1]);
    const dir = path.join(ctx.layout.tmpDir, n);
    if (pid && pid !== process.pid && !pidIsAlive(pid) && !entries.some((e) => path.resolve(e.path) === dir)) {
      await rm(dir, { recursive: true, force: true });
      gone.push(dir);
    }
  }
  return gone;
}

function conflict(name: string, branch: string, into: string, mode: MergeMode, paths: string[]): MergeConflict {
  const shown = paths.length > 20 ? [...paths.slice(0, 20), `... ${paths.length - 20} more`] : paths;
  const e = new JaggersError(
    'E_MERGE_CONFLICT',
    `worktree ${JSON.stringify(name)}: ${mode === 'rebase' ? 'rebasing' : 'merging'} ${branch} ${mode === 'rebase' ? 'onto' : 'into'} ${into} conflicts in ${paths.length} file(s): ${shown.join(', ')}. ` +
      `Nothing was changed: ${into} and every checkout are as they were. Resolve it in the worktree (merge or rebase ${into} there), then merge again.`,
  );
  return Object.assign(e, { paths });
}

/** E_MERGE_CONFLICT carries the conflicted paths, as well as naming them in its message. */
export type MergeConflict = JaggersError & { paths: string[] };

/** Where `into` is checked out: the user's checkout, another checkout, or nowhere. */
async function placeOf(git: Git, top: string, into: string): Promise<{ kind: 'user' | 'nowhere' } | { kind: 'elsewhere'; path: string }> {
  const at = (await listWorktrees(git, top)).filter((e) => e.branch === `refs/heads/${into}`);
  if (at.length === 0) return { kind: 'nowhere' };
  const mine = at.find((e) => path.resolve(e.path) === path.resolve(top));
  if (mine) return { kind: 'user' };
  return { kind: 'elsewhere', path: at[0]?.path ?? '?' };
}

/** The user's checkout may be fast-forwarded: no staged, unstaged or conflicted changes (untracked files are left to git's own check). */
async function assertUserClean(git: Git, top: string, into: string): Promise<void> {
  const c = await statusCounts(git, top);
  if (c.staged + c.unstaged + c.conflicted > 0) {
    throw new JaggersError(
      'E_CHECKOUT_DIRTY',
      `${into} is checked out in ${top} with uncommitted changes (${c.staged} staged, ${c.unstaged} unstaged, ${c.conflicted} conflicted): commit or stash them, then merge again (or merge into another branch)`,
    );
  }
}

export async function mergeWorktree(ctx: Ctx, k: Known, o: MergeOptions = {}): Promise<MergeResult> {
  const { git } = ctx;
  const top = k.facts.top;
  const name = k.record.name;
  const mode = o.mode ?? 'merge';
  const into = o.into ?? k.record.baseBranch;
  if (into === null) {
    throw new JaggersError(
      'E_USAGE',
      `worktree ${JSON.stringify(name)} was made from a commit (${k.record.base.slice(0, 12)}), not a branch: name the branch to merge into`,
    );
  }
  const bad = branchNameProblem(into);
  if (bad) throw new JaggersError('E_BAD_NAME', `merge of worktree ${JSON.stringify(name)}: ${JSON.stringify(into)} is not a branch name: ${bad}`);
  const intoRef = `refs/heads/${into}`;
  const intoSha = await refSha(git, top, intoRef);
  if (!intoSha) throw new JaggersError('E_BASE_MISSING', `merge of worktree ${JSON.stringify(name)}: there is no branch ${JSON.stringify(into)} in ${top}`);
  if (into === k.record.branch) throw new JaggersError('E_USAGE', `worktree ${JSON.stringify(name)}: cannot merge ${into} into itself`);

  const st = await statusOf(ctx, k, { into });
  const dirtyCount = st.dirty.staged + st.dirty.unstaged + st.dirty.untracked + st.dirty.conflicted;
  if (dirtyCount > 0 && (mode === 'rebase' || !o.allowDirty)) {
    throw new JaggersError(
      'E_WORKTREE_DIRTY',
      `worktree ${JSON.stringify(name)} has uncommitted changes (${st.dirty.staged} staged, ${st.dirty.unstaged} unstaged, ${st.dirty.untracked} untracked, ${st.dirty.conflicted} conflicted): commit them first${mode === 'rebase' ? '' : ', or merge only its commits (allowDirty)'}`,
    );
  }
  const base = { mode, into, from: intoSha, to: intoSha };
  if (await isAncestor(git, top, k.head, intoSha)) return { ...base, status: 'up-to-date', commits: 0, moved: null };

  // Decide where the base branch moves before making anything, so a refusal costs nothing.
  const place = await placeOf(git, top, into);
  if (place.kind === 'elsewhere') {
    throw new JaggersError(
      'E_BRANCH_CHECKED_OUT',
      `${into} is checked out in ${place.path}, not in ${top}: merge there, or check another branch out there, then merge again`,
    );
  }
  if (place.kind === 'user') await assertUserClean(git, top, into);

  const identity = await fallbackIdentity(git, top, ctx.env);
  const commits = await countCommits(git, top, `${intoSha}..${k.head}`);
  let newSha: string;
  let tip = k.head;
  switch (mode) {
    case 'rebase':
      tip = await rebaseInPlace(ctx, k, into, intoSha, identity);
      newSha = tip;
      // The branch starts from the base's tip now, whether or not the base can be moved next.
      if (k.state.adminDir && tip !== k.head) await writeRecord(k.state.adminDir, { ...k.record, base: intoSha });
      break;
    case 'merge':
    case 'squash': {
      const made = await mergeInTemp(ctx, k, mode, into, intoSha, identity, o.message);
      if (made === null) return { ...base, status: 'up-to-date', commits: 0, moved: null };
      newSha = made;
      break;
    }
    default:
      return unreachable(mode);
  }

  const moved = await moveBase(ctx, top, into, intoSha, newSha, place.kind === 'user');
  const record = { ...k.record, ...(mode === 'rebase' ? { base: intoSha } : {}), merged: { into, tip, commit: newSha, mode, at: new Date().toISOString() } };
  if (k.state.adminDir) await writeRecord(k.state.adminDir, record);
  return { ...base, status: 'merged', to: newSha, commits, moved };
}

/** Rebase the branch onto `intoSha` in its own worktree; on a conflict, abort (the branch is back where it was). */
async function rebaseInPlace(ctx: Ctx, k: Known, into: string, intoSha: string, identity: string[]): Promise<string> {
  const { git } = ctx;
  if (await isAncestor(git, k.facts.top, intoSha, k.head)) return k.head;
  if (k.state.folder === 'missing')
    throw new JaggersError(
      'E_WORKTREE_BROKEN',
      `worktree ${JSON.stringify(k.record.name)}: its folder is gone, so it cannot be rebased; create it again first`,
    );
  if (k.state.entry?.branch !== `refs/heads/${k.record.branch}`) {
    throw new JaggersError(
      'E_WORKTREE_BROKEN',
      `worktree ${JSON.stringify(k.record.name)} does not have ${k.record.branch} checked out, so it cannot be rebased there`,
    );
  }
  const wt = k.state.path;
  const args = ['rebase', '--no-autostash', '--no-verify', intoSha];
  const r = await git.run(wt, args, { config: identity, retryLocks: true });
  if (r.code !== 0) {
    const paths = await conflictedPaths(git, wt);
    await git.run(wt, ['rebase', '--abort']);
    if (paths.length > 0) throw conflict(k.record.name, k.record.branch, into, 'rebase', paths);
    throw gitFailed(`rebasing worktree ${k.record.name}`, wt, args, r);
  }
  return (await gitOk(git, wt, ['rev-parse', '--verify', 'HEAD'], 'reading the rebased branch')).trim();
}

/** Make the merge (or squash) commit in a temporary detached worktree on `intoSha`; null when there is nothing to commit. */
async function mergeInTemp(
  ctx: Ctx,
  k: Known,
  mode: 'merge' | 'squash',
  into: string,
  intoSha: string,
  identity: string[],
  message?: string,
): Promise<string | null> {
  const { git } = ctx;
  const top = k.facts.top;
  const name = k.record.name;
  await mkdir(ctx.layout.tmpDir, { recursive: true });
  await sweepTemps(ctx, top);
  const tmp = path.join(ctx.layout.tmpDir, `merge-${process.pid}-${randomBytes(4).toString('hex')}`);
  const add = ['worktree', 'add', '--detach', '--lock', '--reason', 'jaggers: merging', tmp, intoSha];
  const added = await git.run(top, add, { retryLocks: true });
  if (added.code !== 0) throw gitFailed(`merging worktree ${name}`, top, add, added);
  const run = (args: string[]): Promise<GitResult> => git.run(tmp, args, { config: identity });
  try {
    const branch = `refs/heads/${k.record.branch}`;
    if (mode === 'merge') {
      const msg = message ?? `Merge ${k.record.branch} into ${into} (jaggers agent ${name})`;
      const args = ['merge', '--no-ff', '--no-edit', '--no-log', '--no-verify', '--no-gpg-sign', '-m', msg, k.head];
      const r = await run(args);
      if (r.code !== 0) {
        const paths = await conflictedPaths(git, tmp);
        await run(['merge', '--abort']);
        if (paths.length > 0) throw conflict(name, k.record.branch, into, mode, paths);
        throw gitFailed(`merging ${branch}`, tmp, args, r);
      }
    } else {
      const args = ['merge', '--squash', '--no-log', '--no-verify', k.head];
      const r = await run(args);
      if (r.code !== 0) {
        const paths = await conflictedPaths(git, tmp);
        await run(['reset', '--hard', '--quiet']);
        if (paths.length > 0) throw conflict(name, k.record.branch, into, mode, paths);
        throw gitFailed(`squash-merging ${branch}`, tmp, args, r);
      }
      // The branch's changes may all be in the base already.
      if ((await run(['diff', '--cached', '--quiet'])).code === 0) return null;
      const subjects = (await gitOk(git, top, ['log', '-z', '--format=%s', `${intoSha}..${k.head}`], 'listing commits')).split('\0').filter(Boolean);
      const msg =
        message ?? `${k.record.branch}: ${subjects.length} commit(s) squashed (jaggers agent ${name})\n\n${subjects.map((s) => `* ${s}`).join('\n')}\n`;
      const cargs = ['commit', '--no-verify', '--no-gpg-sign', '--quiet', '-m', msg];
      const c = await run(cargs);
      if (c.code !== 0) throw gitFailed(`committing the squash of ${branch}`, tmp, cargs, c);
    }
    return (await gitOk(git, tmp, ['rev-parse', '--verify', 'HEAD'], 'reading the merge commit')).trim();
  } finally {
    await git.run(top, ['worktree', 'remove', '--force', '--force', tmp], { retryLocks: true });
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Move `into` from `oldSha` to `newSha` (a descendant). Checked out in the user's checkout: there, by
 * `merge --ff-only` when it is clean. Checked out nowhere: `update-ref` with the old value, so a branch
 * that moved meanwhile is not overwritten.
 */
async function moveBase(ctx: Ctx, top: string, into: string, oldSha: string, newSha: string, inUser: boolean): Promise<'fast-forward' | 'update-ref'> {
  const { git } = ctx;
  const moved = async () => {
    const now = await refSha(git, top, `refs/heads/${into}`);
    return new JaggersError(
      'E_BASE_MOVED',
      `${into} moved from ${oldSha.slice(0, 12)} to ${now?.slice(0, 12) ?? 'nowhere'} while the merge was made; nothing was changed: merge again`,
    );
  };
  if (inUser) {
    await assertUserClean(git, top, into);
    const head = await git.run(top, ['symbolic-ref', '--quiet', 'HEAD']);
    if (head.stdout.trim() !== `refs/heads/${into}`)
      throw new JaggersError('E_BASE_MOVED', `${top} no longer has ${into} checked out; nothing was changed: merge again`);
    if ((await refSha(git, top, `refs/heads/${into}`)) !== oldSha) throw await moved();
    const args = ['merge', '--ff-only', '--no-verify', '--no-autostash', newSha];
    const r = await git.run(top, args, { retryLocks: true });
    if (r.code !== 0) {
      if ((await refSha(git, top, `refs/heads/${into}`)) !== oldSha) throw await moved();
      throw new JaggersError(
        'E_CHECKOUT_DIRTY',
        `fast-forwarding ${into} in ${top} was refused by git (nothing was changed); the merged commit is ${newSha}: ${gitFailed('', top, args, r).message.replace(/^: /, '')}`,
      );
    }
    return 'fast-forward';
  }
  const args = ['update-ref', '-m', `jaggers: merge into ${into}`, `refs/heads/${into}`, newSha, oldSha];
  const r = await git.run(top, args);
  if (r.code !== 0) {
    if ((await commitOf(git, top, `refs/heads/${into}`)) !== oldSha) throw await moved();
    throw gitFailed(`moving ${into}`, top, args, r);
  }
  return 'update-ref';
}
