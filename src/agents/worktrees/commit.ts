// Committing what an agent left in its worktree: jaggers' job where the agent cannot (codex's sandbox
// makes `.git` read-only, docs/clis.md).
import { fallbackIdentity } from '../../git/repo.js';
import { gitOk } from '../../git/run.js';
import { JaggersError } from '../../errors.js';
import type { Known } from './inspect.js';
import type { Ctx } from './state.js';

export interface Committed {
  /** The new commit, or null when there was nothing to commit. */
  sha: string | null;
}

/** Stage everything in the worktree (untracked files too, ignored ones not) and commit it on its branch. */
export async function commitWorktree(ctx: Ctx, k: Known, message: string): Promise<Committed> {
  const { git } = ctx;
  const wt = k.state.path;
  if (message.trim() === '') throw new JaggersError('E_USAGE', `commit in worktree ${JSON.stringify(k.record.name)}: the message is empty`);
  if (k.state.folder === 'missing') throw new JaggersError('E_WORKTREE_BROKEN', `worktree ${JSON.stringify(k.record.name)}: its folder ${wt} is gone`);
  await gitOk(git, wt, ['add', '--all', '--', '.'], 'staging the worktree', { retryLocks: true });
  if ((await git.run(wt, ['diff', '--cached', '--quiet'])).code === 0) return { sha: null };
  const config = await fallbackIdentity(git, wt, ctx.env);
  await gitOk(git, wt, ['commit', '--no-verify', '--no-gpg-sign', '--quiet', '-m', message], 'committing', { config, retryLocks: true });
  return { sha: (await gitOk(git, wt, ['rev-parse', '--verify', 'HEAD'], 'reading the commit')).trim() };
}
