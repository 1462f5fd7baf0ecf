// The agents of the team: open and stop them, watch them, read their screens, type into them.
import type { Command } from 'commander';
import { checkTask, examples, json, redraw, type Deps } from './shared.js';

/** Adds up, down, demo, attach, ls, status, why, capture, send, answer. */
export function registerAgents(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  program
    .command('up')
    .description('open the tmux session with one window per agent (idempotent: adds what is missing) and start the supervisor')
    .option('--agents <list>', 'ad hoc team: comma-separated profile names')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--task <id>', 'open the team for a task: its own windows and conversations, JAGGERS_TASK_ID set')
    .option('--no-wait', 'do not wait for the agents to be ready')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers up', 'jaggers up --agents claude,gemini', 'jaggers up --task fix-login', 'jaggers up --size 160x48']))
    .action(async (o: { agents?: string; size?: string; task?: string; wait: boolean; json?: boolean }) => {
      checkTask(o.task, '--task');
      const c = await ctx();
      const { up, renderUp, upFailed } = await import('../commands/up.js');
      const r = await up(c, { agents: o.agents, size: o.size, task: o.task ?? null, wait: o.wait });
      e.io.writeOut(o.json ? json(r) : renderUp(r));
      if (upFailed(r)) setExit(1);
    });

  program
    .command('down')
    .description("stop the project's tmux server, every agent in it and the supervisor")
    .addHelpText('after', examples(['jaggers down']))
    .action(async () => {
      const { down } = await import('../commands/down.js');
      const r = await down(await ctx());
      for (const h of r.hosts) e.io.writeOut(h.ok ? `stopped host ${h.host} (${h.root})\n` : `host ${h.host} not stopped: ${h.detail}\n`);
      if (r.hosts.some((h) => !h.ok)) setExit(1);
      e.io.writeOut(r.stopped ? `stopped tmux ${r.socket}\n` : `nothing running on tmux ${r.socket}\n`);
    });

  program
    .command('demo')
    .description('open a session with three built-in demo agents (no API keys needed) and run a planner -> coder -> reviewer handoff chain')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--no-run', 'only open the session')
    .addHelpText('after', examples(['jaggers demo', 'jaggers demo --no-run && jaggers attach']))
    .action(async (o: { size?: string; run: boolean }) => {
      const { demo } = await import('../commands/demo.js');
      await demo(await ctx(), e.io, o);
    });

  program
    .command('attach [agent]')
    .description("attach this terminal to the session, at an agent's window if named")
    .option('-r, --read-only', 'watch without typing into the agents')
    .addHelpText('after', examples(['jaggers attach', 'jaggers attach claude --read-only']))
    .action(async (agent: string | undefined, o: { readOnly?: boolean }) => {
      const { attach } = await import('../commands/attach.js');
      setExit(await attach(await ctx(), agent, o.readOnly ?? false));
    });

  program
    .command('ls')
    .description('list agents: terminal ids, windows, pids, states')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a state changes')
    .addHelpText('after', examples(['jaggers ls', 'jaggers ls --json', 'jaggers ls --watch']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { ls, renderAgents } = await import('../commands/ls.js');
      if (o.watch) {
        const { watchStates } = await import('../commands/watch.js');
        return watchStates(c, async () => redraw(e.io, renderAgents(await ls(c))));
      }
      const rows = await ls(c);
      e.io.writeOut(o.json ? json(rows) : renderAgents(rows));
    });

  program
    .command('status [agent]')
    .description("each agent's state (starting, idle, busy, waiting_input, limited, done, error, exited) and since when")
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a state changes')
    .addHelpText('after', examples(['jaggers status', 'jaggers status claude --json', 'jaggers status --watch']))
    .action(async (agent: string | undefined, o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const { status, renderStatus } = await import('../commands/status.js');
      const show = async () => {
        const rows = await status(c, agent);
        return o.json ? json(agent ? rows[0] : rows) : renderStatus(rows);
      };
      if (o.watch) {
        const { watchStates } = await import('../commands/watch.js');
        return watchStates(c, async () => redraw(e.io, await show()));
      }
      e.io.writeOut(await show());
    });

  program
    .command('why <agent>')
    .description('why jaggers thinks an agent is in its state: the rule, what it matched, what is on screen now and what the state waits for')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers why claude', 'jaggers why codex --json']))
    .action(async (agent: string, o: { json?: boolean }) => {
      const { why, renderWhy } = await import('../commands/status.js');
      const r = await why(await ctx(), agent);
      e.io.writeOut(o.json ? json(r) : renderWhy(r));
    });

  program
    .command('capture <agent>')
    .description("print an agent's screen as text")
    .option('--ansi', 'keep colours and attributes (escape sequences)')
    .option('--history <lines>', 'include this many lines of scrollback', (v) => Number(v))
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers capture claude', 'jaggers capture gemini --ansi', 'jaggers capture codex --json']))
    .action(async (agent: string, o: { ansi?: boolean; history?: number; json?: boolean }) => {
      const { capture } = await import('../commands/pane.js');
      const r = await capture(await ctx(), agent, o);
      if (o.json) e.io.writeOut(json(r));
      else if (o.ansi) e.io.writeColoured(r.screen);
      else e.io.writeOut(r.screen);
    });

  program
    .command('send <agent> <text...>')
    .description(
      "type text into an agent's pane and press Enter, after any turn in progress there; verified (busy, an echo, or the text leaving the input box)",
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers send claude "explain src/cli.ts"', 'jaggers send claude /clear']))
    .action(async (agent: string, text: string[], o: { json?: boolean }) => {
      const { send } = await import('../commands/pane.js');
      const r = await send(await ctx(), agent, text.join(' '));
      e.io.writeOut(o.json ? json(r) : `sent ${r.bytes} bytes to ${r.agent} (${r.pane}): ${r.evidence}\n`);
    });

  program
    .command('answer <agent> <choice>')
    .description(
      'answer the menu an agent waits on (a permission or trust question): by its number or a part of its label; refused if the screen changed meanwhile',
    )
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers answer claude 1', 'jaggers answer gemini "allow once"']))
    .action(async (agent: string, choice: string, o: { json?: boolean }) => {
      const { answer } = await import('../commands/pane.js');
      const r = await answer(await ctx(), agent, choice);
      e.io.writeOut(o.json ? json(r) : `${r.agent}: answered ${JSON.stringify(r.question.text)} with ${r.chose.number}. ${r.chose.label}; now ${r.state}\n`);
    });
}
