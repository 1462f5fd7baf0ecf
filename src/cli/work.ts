// Work for agents: background jobs, inbox messages and handoffs.
import type { Command } from 'commander';
import { JOB_ID } from '../ids.js';
import { dollars, wholeTokens } from './budget.js';
import { checkTask, examples, json, redraw, seconds, type Deps } from './shared.js';

/** Adds assign, jobs, wait, result, cancel, message, inbox, handoff. */
export function registerWork(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  program
    .command('assign <agent-or-profile>')
    .description('give an agent (or a new worker of a profile) a job in the background: prints its id and returns at once')
    .option('-m, --message <text>', 'the work, as text')
    .option('-f, --file <path>', 'the work, from a file')
    .option('--name <name>', 'a name for the job, shown by `jobs`')
    .option('--timeout <seconds>', "how long the job's turn may run (default 3600)", seconds)
    .option('--from <agent>', "who assigns it: the result goes to this agent's inbox (default: the calling agent's JAGGERS_TERMINAL_ID)")
    .option('--keep', "keep a worker's window open after its job ends")
    .option('--worktree', 'a new worker works in a git worktree of its own (branch jaggers/<job id>); see `jaggers diff` and `jaggers merge`')
    .option('--base <ref>', "the branch or commit that worktree starts from (default: the checkout's current branch)")
    .option('--budget-tokens <n>', "the job's budget in tokens: it waits over_budget once it is spent (`jaggers budget raise`)", wholeTokens)
    .option('--budget-usd <n>', "the job's budget in US dollars (from the price table)", dollars)
    .option('--json', 'print the job as JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers assign coder -m "add a --verbose flag to the CLI"',
        'jaggers assign claude -f task.md --name review   # a new claude worker window',
        'jaggers assign codex --worktree -m "fix the flaky test"   # a new codex worker in its own git worktree',
        'JOB=$(jaggers assign reviewer -m "review the last commit") && jaggers wait $JOB && jaggers result $JOB',
      ]),
    )
    .action(
      async (
        target: string,
        o: {
          message?: string;
          file?: string;
          name?: string;
          timeout?: number;
          from?: string;
          keep?: boolean;
          worktree?: boolean;
          base?: string;
          budgetTokens?: number;
          budgetUsd?: number;
          json?: boolean;
        },
      ) => {
        const { assign } = await import('../commands/jobs.js');
        const j = await assign(await ctx(), target, { ...o, timeoutS: o.timeout });
        if (o.json) return e.io.writeOut(json(j));
        e.io.writeOut(`${j.id}\n`);
        e.io.writeErr(
          `jaggers: ${j.id} queued for ${j.kind === 'worker' ? `a new ${j.target} worker` : j.target}; see \`jaggers wait ${j.id}\` and \`jaggers result ${j.id}\`\n`,
        );
      },
    );

  program
    .command('jobs')
    .description('list background jobs: state, agent, why')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a job changes')
    .addHelpText('after', examples(['jaggers jobs', 'jaggers jobs --json', 'jaggers jobs --watch']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { jobs, renderJobs } = await import('../commands/jobs.js');
      if (o.watch) {
        const { watchStates } = await import('../commands/watch.js');
        return watchStates(c, async () => redraw(e.io, renderJobs(await jobs(c))), undefined, 'job,hello');
      }
      const list = await jobs(c);
      e.io.writeOut(o.json ? json(list) : renderJobs(list));
    });

  program
    .command('wait <job...>')
    .description('wait until the jobs end; exit status 0 all done, 1 one failed or was cancelled, 3 timed out')
    .option('--timeout <seconds>', 'give up after this long', seconds)
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers wait j-1a2b3c4d5e6f', 'jaggers wait j-1a2b3c4d5e6f j-5e6f7a8b9c0d --timeout 600']))
    .action(async (ids: string[], o: { timeout?: number; json?: boolean }) => {
      const { waitJobs, waitExitCode, renderWait } = await import('../commands/jobs.js');
      const r = await waitJobs(await ctx(), ids, o.timeout);
      e.io.writeOut(o.json ? json(r) : renderWait(r));
      setExit(waitExitCode(r));
    });

  program
    .command('result <job>')
    .description("a job's reply (and its artifact with --json)")
    .option('--json', 'print JSON: the job, the reply, its artifact')
    .addHelpText('after', examples(['jaggers result j-1a2b3c4d5e6f', 'jaggers result j-1a2b3c4d5e6f --json']))
    .action(async (id: string, o: { json?: boolean }) => {
      const { result, renderResult } = await import('../commands/jobs.js');
      const r = await result(await ctx(), id);
      e.io.writeOut(o.json ? json(r) : renderResult(r));
      if (r.job.state !== 'done') setExit(1);
    });

  program
    .command('cancel <id>')
    .description(
      "cancel a job (a queued one never starts, a running one's agent is interrupted with its profile's interrupt keys) or a workflow task (its turn's job is cancelled)",
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers cancel j-1a2b3c4d5e6f', 'jaggers cancel t-5e6f7a8b']))
    .action(async (id: string, o: { json?: boolean }) => {
      if (JOB_ID.test(id)) {
        const { cancel } = await import('../commands/jobs.js');
        const j = await cancel(await ctx(), id);
        return e.io.writeOut(o.json ? json(j) : `${j.id} ${j.state}: ${j.reason}\n`);
      }
      checkTask(id, 'cancel');
      const { cancelTask } = await import('../commands/tasks.js');
      const t = await cancelTask(await ctx(), id);
      e.io.writeOut(o.json ? json(t) : `${t.id} ${t.status}${t.reason ? `: ${t.reason}` : ''}\n`);
    });

  program
    .command('message <agent>')
    .description("put a message in an agent's inbox: stored before this returns, delivered once when the agent is ready")
    .option('-m, --message <text>', 'the message, as text')
    .option('-f, --file <path>', 'the message, from a file')
    .option('--from <agent>', "the sender (default: the calling agent's JAGGERS_TERMINAL_ID, else you)")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers message coder -m "the tests in test/api pass now"', 'jaggers message reviewer -f notes.md --from coder']))
    .action(async (to: string, o: { message?: string; file?: string; from?: string; json?: boolean }) => {
      const { message, renderSent } = await import('../commands/inbox.js');
      const m = await message(await ctx(), to, o);
      e.io.writeOut(o.json ? json(m) : renderSent(m));
    });

  program
    .command('inbox <agent>')
    .description("an agent's messages: pending ones (and why they wait) and delivered ones")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers inbox coder', 'jaggers inbox coder --json']))
    .action(async (agent: string, o: { json?: boolean }) => {
      const { inbox, renderInbox } = await import('../commands/inbox.js');
      const v = await inbox(await ctx(), agent);
      e.io.writeOut(o.json ? json(v) : renderInbox(v));
    });

  program
    .command('handoff <agent>')
    .description('hand work to an agent: write a handover file, type a pointer to it, wait for the reply')
    .option('-m, --message <text>', 'the work, as text')
    .option('-f, --file <path>', 'the work, from a file')
    .option('--from <agent>', 'the agent handing the work over (default: the agent whose pane runs this, by $JAGGERS_TERMINAL_ID)')
    .option('--task <id>', 'the task this turn belongs to (default: $JAGGERS_TASK_ID, else a new one)')
    .option('--timeout <seconds>', 'how long to wait for the agent to be ready and to reply (default 600)', seconds)
    .option('--no-wait', 'return once the agent took the prompt (the supervisor still captures the reply)')
    .option('--headless', "run the turn headless in the agent's pinned session (its profile's headlessArgs) instead of typing into its pane")
    .option('--json', 'print JSON: artifact paths, timings, states')
    .addHelpText(
      'after',
      examples([
        'jaggers handoff coder --message "implement the plan in PLAN.md"',
        'jaggers handoff reviewer --file review.md --from coder --json',
        'jaggers handoff coder -m "start" --no-wait',
      ]),
    )
    .action(
      async (
        agent: string,
        o: { message?: string; file?: string; from?: string; task?: string; timeout?: number; wait: boolean; json?: boolean; headless?: boolean },
      ) => {
        checkTask(o.task, '--task');
        const { handoff } = await import('../commands/handoff.js');
        const ctrlC = e.interruptible();
        const r = await handoff(
          await ctx(),
          agent,
          { message: o.message, file: o.file, from: o.from, task: o.task, timeoutS: o.timeout, wait: o.wait, headless: o.headless },
          e.io,
          ctrlC.signal,
        ).finally(ctrlC.release);
        if (o.json) return e.io.writeOut(json(r));
        if (!r.reply) return e.io.writeOut(`delivered turn ${r.turn} of task ${r.task} to ${r.agent}: ${r.artifact}\n`);
        e.io.writeOut(r.reply.text.replace(/\n*$/, '\n'));
      },
    );
}
