// The agents' and jobs' git worktrees (issue 28): list, diff, merge, discard, gc.
import type { Command } from 'commander';
import { examples, json, type Deps } from './shared.js';

/** Adds worktrees, diff, merge, discard, gc. */
export function registerWorktrees(program: Command, e: Deps): void {
  const { ctx } = e;
  const load = () => import('../commands/worktrees.js');

  program
    .command('worktrees')
    .description("list the agents' and jobs' git worktrees: branch, base, commits, uncommitted changes, merged or not")
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const m = await load();
      const list = await m.worktrees(await ctx(), (host, why) => e.io.writeErr(`host ${host}: its worktrees are not shown: ${why}\n`));
      e.io.writeOut(o.json ? json(list) : m.renderWorktrees(list));
    });

  program
    .command('diff <agent-or-job>')
    .description('what an agent or a --worktree job changed in its worktree, against its base: commits, files, lines')
    .option('-p, --patch', 'the patch too')
    .option('--uncommitted', 'compare the files as they are now, uncommitted changes included')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers diff coder', 'jaggers diff coder --patch --uncommitted', 'jaggers diff j-1a2b3c4d5e6f --json']))
    .action(async (x: string, o: { patch?: boolean; uncommitted?: boolean; json?: boolean }) => {
      const m = await load();
      const d = await m.diff(await ctx(), x, o);
      e.io.writeOut(o.json ? json(d) : m.renderDiff(d));
    });

  program
    .command('merge <agent-or-job>')
    .description("bring an agent's or a job's branch into its base branch; a conflict changes nothing and names the files")
    .option('--squash', 'as one new commit')
    .option('--rebase', 'rebase the branch onto the base, then fast-forward the base')
    .option('--into <branch>', 'merge into this branch instead of the one the worktree was made from')
    .option('-m, --message <text>', 'the commit message')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers merge coder', 'jaggers merge j-1a2b3c4d5e6f --squash -m "add --verbose"']))
    .action(async (x: string, o: { squash?: boolean; rebase?: boolean; into?: string; message?: string; json?: boolean }) => {
      const m = await load();
      if (o.squash && o.rebase) throw new (await import('../errors.js')).JaggersError('E_USAGE', 'merge: --squash and --rebase are two ways; choose one');
      const mode = o.squash ? 'squash' : o.rebase ? 'rebase' : 'merge';
      const r = await m.merge(await ctx(), x, { mode, ...(o.into ? { into: o.into } : {}), ...(o.message ? { message: o.message } : {}) });
      e.io.writeOut(o.json ? json(r) : m.renderMerge(r));
    });

  program
    .command('discard <agent-or-job>')
    .description('remove a worktree and its branch; refused while it holds uncommitted or unmerged work, unless --force')
    .option('--force', 'remove it even so: its uncommitted changes and unmerged commits are lost')
    .option('--json', 'print JSON')
    .action(async (x: string, o: { force?: boolean; json?: boolean }) => {
      const m = await load();
      const r = await m.discard(await ctx(), x, o.force === true);
      e.io.writeOut(o.json ? json(r) : r.removed ? `${r.name}: worktree and branch removed\n` : `${r.name}: nothing to remove\n`);
    });

  program
    .command('gc')
    .description('remove the worktrees no agent or job uses any more, when clean and merged (all of them with --force)')
    .option('--force', 'remove the ones with uncommitted or unmerged work too')
    .option('--json', 'print JSON')
    .action(async (o: { force?: boolean; json?: boolean }) => {
      const m = await load();
      const r = await m.gc(await ctx(), o.force === true);
      if (o.json) return e.io.writeOut(json(r));
      const on = (w: { host?: string }) => (w.host ? ` on host ${w.host}` : '');
      const lines = [...r.removed.map((w) => `removed ${w.name}${on(w)}`), ...r.kept.map((w) => `kept ${w.name}${on(w)}: ${w.why ?? 'in use'}`)];
      e.io.writeOut(lines.length ? `${lines.join('\n')}\n` : 'no worktree to remove\n');
    });
}
