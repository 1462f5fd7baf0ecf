// Scheduled flows (.jaggers/flows/<name>.md).
import type { Command } from 'commander';
import type { AddOptions } from '../commands/flows.js';
import { examples, json, seconds, type Deps } from './shared.js';

/** Adds flow add, ls, show, run, enable, disable, rm. */
export function registerFlows(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  const flow = program
    .command('flow')
    .description('scheduled flows: a prompt for an agent, a profile or a workflow, on a cron schedule (.jaggers/flows/<name>.md)');
  flow
    .command('add <name>')
    .description('write .jaggers/flows/<name>.md (checked first: the cron expression, the agent, profile or workflow)')
    .requiredOption('--schedule <cron>', 'a cron expression: 5 fields, or 6 with seconds first ("0 3 * * *": at 03:00 every day)')
    .option('--agent <name>', 'each run is a job for this agent of the team')
    .option('--profile <name>', 'each run is a job for a new worker of this profile')
    .option('--workflow <name>', 'each run is a workflow task')
    .option('--agents <a,b>', 'with --workflow: the agents for its roles')
    .option('--prompt <text>', 'the prompt')
    .option('--file <file>', 'the prompt, from a file')
    .option('--timeout <s>', 'seconds a run may take', seconds)
    .option('--disabled', 'write it disabled')
    .option('--force', 'replace an existing flow')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers flow add nightly-review --schedule "0 3 * * *" --agent claude --prompt "Review the commits of the last day"',
        'jaggers flow add triage --schedule "0 * * * *" --workflow adversarial --agents claude,gemini --file triage.md',
      ]),
    )
    .action(async (name: string, o: AddOptions & { json?: boolean }) => {
      const c = await ctx();
      const { addFlow } = await import('../commands/flows.js');
      const d = await addFlow(c, name, o);
      e.io.writeOut(o.json ? json(d) : `flow ${d.name}: ${d.file}${d.enabled ? '' : ' (disabled)'}\n`);
    });
  flow
    .command('ls')
    .description('the flows: schedule, what runs, enabled, next run, last run (a file that does not load, with its error)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const c = await ctx();
      const { flows, renderFlows } = await import('../commands/flows.js');
      const list = await flows(c);
      e.io.writeOut(o.json ? json(list) : renderFlows(list));
      if (list.some((f) => f.problem)) setExit(1);
    });
  flow
    .command('show <name>')
    .description("a flow's schedule, what it runs, its last run and its prompt")
    .option('--json', 'print JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const c = await ctx();
      const { showFlow, renderFlow1 } = await import('../commands/flows.js');
      const r = await showFlow(c, name);
      e.io.writeOut(o.json ? json(r) : renderFlow1(c, r));
    });
  flow
    .command('run <name>')
    .description('run a flow now (refused while its last run still goes)')
    .option('--json', 'print JSON')
    .action(async (name: string, o: { json?: boolean }) => {
      const c = await ctx();
      const { runFlow } = await import('../commands/flows.js');
      const v = await runFlow(c, name);
      e.io.writeOut(o.json ? json(v) : `${v.last?.id ?? ''}\n`);
    });
  for (const [cmd, on] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    flow
      .command(`${cmd} <name>`)
      .description(`${cmd} a flow (sets \`enabled: ${on}\` in its file; the supervisor picks it up)`)
      .action(async (name: string) => {
        const c = await ctx();
        const { setEnabled } = await import('../commands/flows.js');
        const r = await setEnabled(c, name, on);
        e.io.writeOut(`flow ${name}: ${r.changed ? `${cmd}d` : `already ${cmd}d`}\n`);
      });
  flow
    .command('rm <name>')
    .description("delete a flow's file (its past runs stay in jobs and tasks)")
    .action(async (name: string) => {
      const c = await ctx();
      const { removeFlow } = await import('../commands/flows.js');
      e.io.writeOut(`removed ${await removeFlow(c, name)}\n`);
    });
}
