// Workflows and the tasks that run them.
import { dollars, wholeTokens } from './budget.js';
import { Option, type Command } from 'commander';
import { checkTask, examples, json, redraw, type Deps } from './shared.js';

/** Adds run, tasks, show, resume, workflows, workflow show. */
export function registerWorkflows(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  program
    .command('run <workflow>')
    .description('run a workflow (collaborative, adversarial, troubleshoot, handshake, handoff, or your own) as a task of its own')
    .option('-m, --message <text>', 'what the task is about (the prompts quote it)')
    .option('-f, --file <path>', 'what the task is about, from a file')
    .addOption(new Option('--task <text>', 'the older name of --message').hideHelp())
    .option('--agents <a,b>', "the agents for the workflow's roles, in order (default: the first agents of the team)")
    .option('--detach', 'return at once with the task id; the supervisor runs it (and resumes it after its own restart)')
    .option('--dry-run', 'print the prompts the first pass would send, and start nothing')
    .option('--worktree', "its agents work in one git worktree of the task's own (branch jaggers/<task id>); see `jaggers diff <task>`")
    .option('--base <ref>', "the branch or commit that worktree starts from (default: the checkout's current branch)")
    .option('--budget-tokens <n>', "the task's budget in tokens: its next turn waits over_budget once it is spent (`jaggers budget raise`)", wholeTokens)
    .option('--budget-usd <n>', "the task's budget in US dollars (from the price table)", dollars)
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      examples([
        'jaggers run collaborative -m "design the cache layer" --agents claude,gemini',
        'jaggers run adversarial -f brief.md --detach',
        'jaggers run troubleshoot -m "the login test fails on CI" --dry-run',
      ]),
    )
    .action(
      async (
        workflow: string,
        o: {
          message?: string;
          file?: string;
          task?: string;
          agents?: string;
          detach?: boolean;
          dryRun?: boolean;
          worktree?: boolean;
          base?: string;
          budgetTokens?: number;
          budgetUsd?: number;
          json?: boolean;
        },
      ) => {
        const { run, renderRunEnd, renderDryRun } = await import('../commands/tasks.js');
        const ctrlC = e.interruptible();
        const r = await run(await ctx(), e.io, workflow, { ...o, signal: ctrlC.signal }).finally(ctrlC.release);
        if ('prompts' in r) return e.io.writeOut(o.json ? json(r) : renderDryRun(r));
        if (o.detach) {
          e.io.writeOut(o.json ? json(r) : `${r.id}\n`);
          if (!o.json) e.io.writeErr(`jaggers: task ${r.id} runs ${r.workflow}; follow it with \`jaggers show ${r.id}\` or \`jaggers resume ${r.id}\`\n`);
          return;
        }
        e.io.writeOut(o.json ? json(r) : renderRunEnd(r));
        if (r.status !== 'done') setExit(1);
      },
    );

  program
    .command('tasks')
    .description('list tasks: workflow, status, turn, agents')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a task changes')
    .addHelpText('after', examples(['jaggers tasks', 'jaggers tasks --json']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { tasks, renderTasks } = await import('../commands/tasks.js');
      if (o.watch) {
        const { watchStates } = await import('../commands/watch.js');
        return watchStates(c, async () => redraw(e.io, renderTasks(await tasks(c))), undefined, 'task,job,hello');
      }
      const list = await tasks(c);
      e.io.writeOut(o.json ? json(list) : renderTasks(list));
    });

  program
    .command('show <task>')
    .description("a task's turns: step, agent, state, time, the session each went to, its handover and reply files")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers show t-5e6f7a8b', 'jaggers show t-5e6f7a8b --json']))
    .action(async (task: string, o: { json?: boolean }) => {
      checkTask(task, 'show');
      const { show, renderShow } = await import('../commands/tasks.js');
      const t = await show(await ctx(), task);
      e.io.writeOut(o.json ? json(t) : renderShow(t));
    });

  program
    .command('resume <task>')
    .description("reopen a task's agents, each in its own pinned conversation; a workflow task goes on from its last finished turn")
    .option('--detach', 'return once the workflow goes on (the supervisor sees it through)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers resume fix-login', 'jaggers resume t-5e6f7a8b --detach']))
    .action(async (task: string, o: { detach?: boolean; json?: boolean }) => {
      checkTask(task, 'resume');
      const { resumeTask, renderRunEnd } = await import('../commands/tasks.js');
      const { renderUp, upFailed } = await import('../commands/up.js');
      const { opened, task: v } = await resumeTask(await ctx(), e.io, task, o);
      if (!v) {
        e.io.writeOut(o.json ? json(opened) : renderUp(opened));
        if (upFailed(opened)) setExit(1);
        return;
      }
      e.io.writeOut(o.json ? json(v) : o.detach ? `${v.id} ${v.status}${v.reason ? `: ${v.reason}` : ''}\n` : renderRunEnd(v));
      if (!o.detach && v.status !== 'done') setExit(1);
    });

  program
    .command('workflows')
    .description("list the workflows: built-in ones and the project's .jaggers/workflows/*.yaml")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers workflows', 'jaggers workflows --json']))
    .action(async (o: { json?: boolean }) => {
      const c = await ctx();
      const { workflows, renderWorkflows } = await import('../commands/workflows.js');
      const list = await workflows(c);
      e.io.writeOut(o.json ? json(list) : renderWorkflows(c, list));
      // Like doctor: the whole list, and a failure when a project file does not load.
      if (list.some((w) => w.error)) setExit(1);
    });

  program
    .command('workflow')
    .description('one workflow')
    .command('show <name>')
    .description("a workflow's steps: agent role, what each reads, loops and exit conditions, and each prompt template")
    .option('--yaml', 'print it as YAML (copy it to .jaggers/workflows/<name>.yaml to change it)')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers workflow show collaborative', 'jaggers workflow show adversarial --yaml > .jaggers/workflows/adversarial.yaml']))
    .action(async (name: string, o: { yaml?: boolean; json?: boolean }) => {
      const c = await ctx();
      const { showWorkflow, renderWorkflow, renderWorkflowYaml } = await import('../commands/workflows.js');
      const w = await showWorkflow(c, name);
      e.io.writeOut(o.json ? json(w) : o.yaml ? renderWorkflowYaml(w) : renderWorkflow(c, w));
    });
}
