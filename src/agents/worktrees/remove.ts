// Removing a worktree and its branch (refused while it holds uncommitted or unmerged work, unless forced),
// and finding the worktrees no one uses any more.
import { rm } from 'node:fs/promises';
import { JaggersError } from '../../errors.js';
import { countCommits, isAncestor, refSha, statusCounts, type RepoFacts } from '../../git/repo.js';
import { gitFailed, gitOk } from '../../git/run.js';
import { assertWorktreeName, branchOf, branchRef, CREATING, GIT_INITIALIZING, pathOf } from './layout.js';
import { listOurs, ourBranches, requireWorktree, statusOf, type WorktreeStatus } from './inspect.js';
import { examine, factsOf, withNameLock, type Ctx, type NameState } from './state.js';

export interface RemoveOptions {
  /** Remove even with uncommitted changes or unmerged commits (they are lost). */
  force?: boolean;
}

export interface Removed {
  name: string;
  path: string;
  /** False when there was nothing of that name (a second remove). */
  removed: boolean;
  branchDeleted: boolean;
}

/** Commits of `tip` in no other local branch (`rev-list --count tip --not --branches` but ours). */
async function onlyHere(ctx: Ctx, facts: RepoFacts, name: string, tip: string): Promise<number> {
  const out = await gitOk(
    ctx.git,
    facts.top,
    ['rev-list', '--count', tip, '--not', `--exclude=${branchOf(ctx.layout, name)}`, '--branches'],
    'counting commits',
  );
  return Number(out.trim());
}

/** The branch's commits not merged anywhere they should be: 0 when it is merged (or has none). */
async function unmergedCommits(ctx: Ctx, facts: RepoFacts, s: NameState): Promise<{ count: number; into: string | null }> {
  const tip = s.branchSha;
  if (!tip) return { count: 0, into: null };
  const r = s.record;
  if (!r) return { count: await onlyHere(ctx, facts, s.name, tip), into: null };
  const ahead = await countCommits(ctx.git, facts.top, `${r.base}..${tip}`);
  if (ahead === 0) return { count: 0, into: r.baseBranch };
  if (r.merged && r.merged.tip === tip) return { count: 0, into: r.merged.into };
  if (r.baseBranch) {
    const intoSha = await refSha(ctx.git, facts.top, `refs/heads/${r.baseBranch}`);
    if (intoSha && (await isAncestor(ctx.git, facts.top, tip, intoSha))) return { count: 0, into: r.baseBranch };
    return { count: ahead, into: r.baseBranch };
  }
  return { count: Math.min(ahead, await onlyHere(ctx, facts, s.name, tip)), into: null };
}

export async function removeWorktree(ctx: Ctx, name: string, o: RemoveOptions = {}): Promise<Removed> {
  assertWorktreeName(name);
  const facts = await factsOf(ctx);
  return withNameLock(ctx, facts, name, async () => {
    const s = await examine(ctx, facts, name);
    const out: Removed = { name, path: s.path, removed: false, branchDeleted: false };
    if (!s.entry && s.branchSha === null && s.folder === 'missing') return out;
    const label = JSON.stringify(name);
    if (!o.force) {
      if (s.entry && s.entry.branch !== branchRef(ctx.layout, name)) {
        throw new JaggersError(
          'E_WORKTREE_BROKEN',
          `worktree ${label}: ${s.path} has ${s.entry.branch ?? 'a detached HEAD'} checked out, not ${branchOf(ctx.layout, name)}: look at it, then remove with force`,
        );
      }
      if (!s.entry && s.folder === 'full') {
        throw new JaggersError(
          'E_WORKTREE_BROKEN',
          `worktree ${label}: ${s.path} exists but git does not know it as a worktree: look inside, then remove with force`,
        );
      }
      if (s.entry && s.folder !== 'missing') {
        const c = await statusCounts(ctx.git, s.path);
        if (c.staged + c.unstaged + c.untracked + c.conflicted > 0) {
          throw Object.assign(
            new JaggersError(
              'E_WORKTREE_DIRTY',
              `worktree ${label} has uncommitted changes (${c.staged} staged, ${c.unstaged} unstaged, ${c.untracked} untracked, ${c.conflicted} conflicted): commit and merge them, or remove with force to lose them`,
            ),
            { counts: c },
          );
        }
      }
      const u = await unmergedCommits(ctx, facts, s);
      if (u.count > 0) {
        throw Object.assign(
          new JaggersError(
            'E_WORKTREE_UNMERGED',
            `worktree ${label}: ${branchOf(ctx.layout, name)} has ${u.count} commit(s) not merged into ${u.into ?? 'any other branch'}: merge them, or remove with force to lose them`,
          ),
          { commits: u.count },
        );
      }
    }
    if (s.entry) {
      const args = ['worktree', 'remove', '--force', '--force', s.path];
      const r = await ctx.git.run(facts.top, args, { retryLocks: true });
      if (r.code !== 0) throw gitFailed(`removing worktree ${name}`, facts.top, args, r);
    }
    await rm(s.path, { recursive: true, force: true });
    if (s.branchSha) {
      // Compare-and-delete: a commit made since it was checked is not lost silently.
      const args = ['update-ref', '-m', `jaggers: remove worktree ${name}`, '-d', branchRef(ctx.layout, name), s.branchSha];
      const r = await ctx.git.run(facts.top, args);
      if (r.code !== 0) throw gitFailed(`deleting branch ${branchOf(ctx.layout, name)}`, facts.top, args, r);
    }
    return { ...out, removed: true, branchDeleted: s.branchSha !== null };
  });
}

export interface GcCandidate {
  name: string;
  path: string;
  /** `worktree`: a registered worktree; `branch`: a `jaggers/<name>` branch with no worktree (left by a crash or by hand). */
  kind: 'worktree' | 'branch';
  /** The worktree's status, or null (a branch alone, or a worktree without jaggers' record). */
  status: WorktreeStatus | null;
  /** Clean and merged (or with no commits): remove() takes it without force. */
  removable: boolean;
  /** Why it is not removable, or null. */
  why: string | null;
}

/** Our worktrees (and lone `jaggers/*` branches) whose names are not in `inUse`, each with what remove() would say. */
export async function gcCandidates(ctx: Ctx, inUse: Iterable<string>): Promise<GcCandidate[]> {
  const used = new Set(inUse);
  const facts = await factsOf(ctx);
  const listed = await listOurs(ctx);
  const out: GcCandidate[] = [];
  for (const w of listed) {
    if (used.has(w.name)) continue;
    const base = { name: w.name, path: w.path, kind: 'worktree' as const };
    if (w.locked === CREATING || w.locked === GIT_INITIALIZING) {
      out.push({ ...base, status: null, removable: false, why: 'being created (or a create cut short: create it again to repair it)' });
      continue;
    }
    try {
      const k = await requireWorktree(ctx, w.name);
      const st = await statusOf(ctx, k);
      const why = !st.clean
        ? 'uncommitted changes'
        : st.ahead > 0 && !st.merged
          ? `${st.ahead} commit(s) not merged into ${st.mergedInto ?? 'any other branch'}`
          : null;
      out.push({ ...base, status: st, removable: why === null, why });
    } catch (e) {
      out.push({ ...base, status: null, removable: false, why: e instanceof Error ? e.message : String(e) });
    }
  }
  const registered = new Set(listed.map((w) => w.name));
  for (const name of await ourBranches(ctx, facts)) {
    if (used.has(name) || registered.has(name)) continue;
    const s = await examine(ctx, facts, name);
    const u = await unmergedCommits(ctx, facts, s);
    out.push({
      name,
      path: pathOf(ctx.layout, name),
      kind: 'branch',
      status: null,
      removable: u.count === 0 && s.folder !== 'full',
      why: u.count > 0 ? `${u.count} commit(s) not merged into any other branch` : s.folder === 'full' ? 'a folder git does not know is in its place' : null,
    });
  }
  return out;
}
