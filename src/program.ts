import { Command, CommanderError, Option } from 'commander';
import { resolveContext, type Context, type GlobalOptions } from './context.js';
import { isJaggersError, JaggersError } from './errors.js';
import { handoff, newTaskId, payloadOf } from './commands/handoff.js';
import { headlessHandoff } from './commands/headless.js';
import type { Output } from './output.js';
import { attach } from './commands/attach.js';
import { ls, renderAgents, watchAgents } from './commands/ls.js';
import { capture, doctor, down, init, send } from './commands/simple.js';
import { loadTeam, teamSpecs } from './commands/team.js';
import { demo } from './commands/demo.js';
import { execPinned, renderPins, resume, sessions } from './commands/sessions.js';
import { up, type UpResult } from './commands/up.js';
import { supervise } from './commands/supervise.js';
import { renderStatus, renderWhy, status } from './commands/status.js';

export interface Env {
  io: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function renderUp(r: UpResult): string {
  const lines = r.windows.map((w) => `  ${w.agent.padEnd(12)} ${w.terminalId}  ${w.windowId}  ${w.action === 'keep' ? 'running' : w.action === 'create' ? 'started' : 'restarted'}${w.launch?.sessionId ? `  session ${w.launch.sessionId}` : ''}`);
  return `session ${r.session} on tmux ${r.socket}\n${lines.join('\n')}\nwatch them: jaggers attach\n`;
}

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

export function buildProgram(e: Env, setExit: (code: number) => void): Command {
  const program = new Command('jaggers')
    .description('Run coding-agent CLIs side by side in tmux and make them work together')
    .option('--project <dir>', 'project folder (default: nearest folder with jaggers.json, else the current one)')
    .option('--socket <name|path>', 'tmux socket name (-L) or path (-S); default jaggers-<8 hex of the project path> (env JAGGERS_SOCKET)')
    .option('--session <name>', 'tmux session name (default: jaggers.json session, else the project folder name)')
    .configureOutput({ writeOut: e.io.writeOut, writeErr: e.io.writeErr })
    .exitOverride()
    .enablePositionalOptions()
    .showHelpAfterError();
  const ctx = async (): Promise<Context> => resolveContext(program.opts<GlobalOptions>(), e.env, e.cwd);

  program
    .command('up')
    .description('open the tmux session with one window per agent (idempotent: adds what is missing)')
    .option('--agents <list>', 'ad hoc team: comma-separated profile names')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--task <id>', 'open the team for a task: its own windows and conversations, JAGGERS_TASK_ID set')
    .addHelpText('after', examples(['jaggers up', 'jaggers up --agents claude,gemini', 'jaggers up --task fix-login', 'jaggers up --size 160x48']))
    .action(async (o: { agents?: string; size?: string; task?: string }) => {
      const c = await ctx();
      if (o.task !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(o.task)) throw new JaggersError('E_USAGE', `--task must be 1-64 letters, digits, '.', '-' or '_', got ${JSON.stringify(o.task)}`);
      const team = await loadTeam(c, teamSpecs(c, o.agents));
      const r = await up(c, team, { size: o.size, task: o.task ?? null });
      await r.client.close();
      e.io.writeOut(renderUp(r));
    });

  program
    .command('demo')
    .description('open a session with three built-in demo agents (no API keys needed) and run a planner -> coder -> reviewer handoff chain')
    .option('--size <WxH>', 'agent window size (default 200x50)')
    .option('--no-run', 'only open the session')
    .addHelpText('after', examples(['jaggers demo', 'jaggers demo --no-run && jaggers attach']))
    .action(async (o: { size?: string; run: boolean }) => {
      await demo(await ctx(), e.io, o);
    });

  program
    .command('resume <task>')
    .description('reopen a task\'s agents, each in its own pinned conversation, with the same terminal ids')
    .addHelpText('after', examples(['jaggers resume fix-login']))
    .action(async (task: string) => {
      e.io.writeOut(renderUp(await resume(await ctx(), task)));
    });

  program
    .command('sessions')
    .description('list the pinned conversations: task, agent, terminal, session id, forks')
    .option('--task <id>', 'only this task\'s')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers sessions', 'jaggers sessions --task fix-login --json']))
    .action(async (o: { task?: string; json?: boolean }) => {
      const rows = await sessions(await ctx(), o.task);
      e.io.writeOut(o.json ? JSON.stringify(rows, null, 2) + '\n' : renderPins(rows));
    });

  program
    .command('exec <cli> [args...]')
    .description('run a CLI with "-r latest", "--resume latest" or "-c" rewritten into the session pinned for $JAGGERS_TASK_ID and the agent')
    .option('--agent <name>', 'whose pin (default: $JAGGERS_AGENT, else the CLI name)')
    .option('--task <id>', 'which task (default: $JAGGERS_TASK_ID, else the default team)')
    .passThroughOptions()
    .allowUnknownOption()
    .addHelpText('after', examples(['jaggers exec claude -c -p "status?"', 'jaggers exec gemini -r latest', 'jaggers exec codex resume --last']))
    .action(async (cli: string, args: string[], o: { agent?: string; task?: string }) => {
      setExit(await execPinned(await ctx(), cli, args, o));
    });

  program
    .command('init')
    .description('write a jaggers.json naming the team')
    .option('--agents <list>', 'comma-separated agent/profile names', 'claude,gemini')
    .option('--force', 'overwrite an existing jaggers.json')
    .addHelpText('after', examples(['jaggers init', 'jaggers init --agents claude,codex,qwen']))
    .action(async (o: { agents: string; force?: boolean }) => {
      const r = await init(await ctx(), o.agents.split(',').map((s) => s.trim()).filter(Boolean), o.force ?? false);
      e.io.writeOut(`wrote ${r.file}\n`);
    });

  program
    .command('attach [agent]')
    .description('attach this terminal to the session, at an agent\'s window if named')
    .option('-r, --read-only', 'watch without typing into the agents')
    .addHelpText('after', examples(['jaggers attach', 'jaggers attach claude --read-only']))
    .action(async (agent: string | undefined, o: { readOnly?: boolean }) => {
      setExit(await attach(await ctx(), agent, o.readOnly ?? false));
    });

  program
    .command('ls')
    .description('list agents: terminal ids, windows, pids, states')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever tmux reports a change')
    .addHelpText('after', examples(['jaggers ls', 'jaggers ls --json', 'jaggers ls --watch']))
    .action(async (o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      if (o.watch) {
        await watchAgents(c, (rows) => e.io.writeOut(`\x1b[H\x1b[2J${renderAgents(rows)}`));
        return;
      }
      const rows = await ls(c);
      e.io.writeOut(o.json ? JSON.stringify(rows, null, 2) + '\n' : renderAgents(rows));
    });

  program
    .command('status [agent]')
    .description('each agent\'s state (starting, idle, busy, waiting_input, done, error, exited) and since when')
    .option('--json', 'print JSON')
    .option('--watch', 'redraw whenever a state changes')
    .addHelpText('after', examples(['jaggers status', 'jaggers status claude --json', 'jaggers status --watch']))
    .action(async (agent: string | undefined, o: { json?: boolean; watch?: boolean }) => {
      const c = await ctx();
      const show = async () => {
        const rows = await status(c, agent);
        return o.json ? JSON.stringify(agent ? rows[0] : rows, null, 2) + '\n' : renderStatus(rows);
      };
      if (o.watch) {
        await watchAgents(c, () => void show().then((s) => e.io.writeOut(`\x1b[H\x1b[2J${s}`), () => {}));
        return;
      }
      e.io.writeOut(await show());
    });

  program
    .command('why <agent>')
    .description('why jaggers thinks an agent is in its state: the rule and the screen lines it matched')
    .addHelpText('after', examples(['jaggers why claude']))
    .action(async (agent: string) => {
      const [row] = await status(await ctx(), agent);
      e.io.writeOut(renderWhy(row!));
    });

  program
    .command('send <agent> <text...>')
    .description('type text into an agent\'s pane and press Enter')
    .addHelpText('after', examples(['jaggers send claude "explain src/cli.ts"']))
    .action(async (agent: string, text: string[]) => {
      const r = await send(await ctx(), agent, text.join(' '));
      e.io.writeOut(`sent ${r.bytes} bytes to ${r.agent} (${r.pane})\n`);
    });

  program
    .command('handoff <agent>')
    .description('hand work to an agent: write a handover file, type a pointer to it, wait for the reply')
    .option('-m, --message <text>', 'the work, as text')
    .option('-f, --file <path>', 'the work, from a file')
    .option('--from <agent>', 'the agent handing the work over (recorded in the handover file)')
    .option('--task <id>', 'the task this turn belongs to (default: $JAGGERS_TASK_ID, else a new one)')
    .option('--timeout <seconds>', 'how long to wait for the agent to be ready and to reply', (v) => Number(v))
    .option('--no-wait', 'return once the agent took the prompt')
    .option('--headless', 'run the turn headless in the agent\'s pinned session (its profile\'s headlessArgs) instead of typing into its pane')
    .option('--json', 'print JSON: artifact paths, timings, states')
    .addHelpText('after', examples(['jaggers handoff coder --message "implement the plan in PLAN.md"', 'jaggers handoff reviewer --file review.md --from coder --json', 'jaggers handoff coder -m "start" --no-wait']))
    .action(async (agent: string, o: { message?: string; file?: string; from?: string; task?: string; timeout?: number; wait: boolean; json?: boolean; headless?: boolean }) => {
      if (o.timeout !== undefined && !(o.timeout > 0)) throw new JaggersError('E_USAGE', `--timeout must be a positive number of seconds, got ${JSON.stringify(String(o.timeout))}`);
      if (o.headless) {
        const c = await ctx();
        const h = await headlessHandoff(c, agent, await payloadOf(c, o), { task: o.task ?? c.env.JAGGERS_TASK_ID ?? newTaskId(), from: o.from, timeoutS: o.timeout });
        return e.io.writeOut(o.json ? JSON.stringify(h, null, 2) + '\n' : h.reply.text.replace(/\n*$/, '\n'));
      }
      const r = await handoff(await ctx(), agent, { message: o.message, file: o.file, from: o.from, task: o.task, timeoutS: o.timeout, wait: o.wait });
      if (o.json) return e.io.writeOut(JSON.stringify(r, null, 2) + '\n');
      if (!r.reply) return e.io.writeOut(`delivered turn ${r.turn} of task ${r.task} to ${r.agent}: ${r.artifact}\n`);
      e.io.writeOut(r.reply.text.replace(/\n*$/, '\n'));
    });

  program
    .command('capture <agent>')
    .description('print an agent\'s screen as text')
    .option('--ansi', 'keep colours and attributes (escape sequences)')
    .addHelpText('after', examples(['jaggers capture claude', 'jaggers capture gemini --ansi']))
    .action(async (agent: string, o: { ansi?: boolean }) => {
      e.io.writeOut(await capture(await ctx(), agent, o));
    });

  program
    .command('down')
    .description('stop the project\'s tmux server and every agent in it')
    .addHelpText('after', examples(['jaggers down']))
    .action(async () => {
      const r = await down(await ctx());
      e.io.writeOut(r.stopped ? `stopped tmux ${r.socket}\n` : `nothing running on tmux ${r.socket}\n`);
    });

  program
    .command('doctor')
    .description('check tmux, the socket and every profile')
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers doctor']))
    .action(async (o: { json?: boolean }) => {
      const r = await doctor(await ctx());
      if (!r.ok) setExit(1);
      if (o.json) return e.io.writeOut(JSON.stringify(r, null, 2) + '\n');
      const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
      e.io.writeOut(
        [
          `${mark(r.tmux.ok)} tmux: ${r.tmux.version ?? r.tmux.error}`,
          `ok   socket: ${r.socket} (session ${r.session}, server ${r.serverRunning ? 'running' : 'not running'})`,
          `ok   project file: ${r.projectFile ?? 'none (jaggers init writes one)'}`,
          ...r.profiles.map((p) => `${mark(!p.error)} profile ${p.name}: ${p.error ?? p.file}`),
        ].join('\n') + '\n',
      );
    });

  program
    .command('supervise', { hidden: true })
    .description('the long-running watcher in window 0')
    .action(async () => {
      await supervise(await ctx(), e.io);
    });

  program.addOption(new Option('--debug', 'print stack traces').hideHelp());
  return program;
}

/** Run the CLI; returns the exit code. Only cli.ts turns it into the process's exit. */
export async function main(argv: string[], e: Env): Promise<number> {
  let code = 0;
  const program = buildProgram(e, (c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (isJaggersError(err)) {
      e.io.writeErr(`jaggers: ${err.message}\n`);
      return 1;
    }
    e.io.writeErr(`jaggers: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    return 70;
  }
}
