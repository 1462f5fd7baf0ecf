// The commander program: the global options, then each group of commands (src/cli/). Every action
// imports its command's module when it runs, so a command loads only what it uses: `status` and `ls`
// talk to the supervisor and never load tmux, zod or xstate code.
import { Command, CommanderError } from 'commander';
import { registerAgents } from './cli/agents.js';
import { registerFlows } from './cli/flows.js';
import { registerHosts } from './cli/hosts.js';
import { finishCommands, givenGlobals, globalOptions } from './cli/global-options.js';
import { registerSessions } from './cli/sessions.js';
import { registerSetup } from './cli/setup.js';
import { makeDeps, type Env } from './cli/shared.js';
import { registerUsage } from './cli/usage.js';
import { registerBudget } from './cli/budget.js';
import { registerWork } from './cli/work.js';
import { registerWorkflows } from './cli/workflows.js';
import { registerWorktrees } from './cli/worktrees.js';
import { isJaggersError } from './errors.js';
import { reportFailure, terminal } from './output.js';
import { packageVersion } from './package-root.js';

export type { Env } from './cli/shared.js';

export function buildProgram(env: Env, setExit: (code: number) => void): Command {
  // Every word the program prints goes through the one sanitizer (src/output.ts).
  const e = { ...env, io: terminal(env.io) };
  const program = new Command('jaggers')
    .description('Run coding-agent CLIs side by side in tmux and make them work together')
    .version(packageVersion(), '-V, --version')
    .configureOutput({ writeOut: e.io.writeOut, writeErr: e.io.writeErr })
    .exitOverride()
    .enablePositionalOptions();
  for (const o of globalOptions()) program.addOption(o);
  const deps = makeDeps(program, e, setExit);

  // --verbose: follow the supervisor's log while the command runs.
  let stopLog: (() => Promise<void>) | null = null;
  program.hook('preAction', async (_program, action) => {
    if (action.name() === 'logs') return;
    if (!givenGlobals(program, action).verbose && e.env.JAGGERS_LOG?.toLowerCase() !== 'debug') return;
    const c = await deps.ctx();
    const { followLog, prettyLogLine } = await import('./commands/logs.js');
    const abort = new AbortController();
    const done = followLog(c, (l) => e.io.writeErr(`${prettyLogLine(l)}\n`), abort.signal).catch(() => {});
    stopLog = async () => {
      abort.abort();
      await done;
    };
  });
  program.hook('postAction', async () => {
    await stopLog?.();
  });

  registerAgents(program, deps);
  registerWork(program, deps);
  registerUsage(program, deps);
  registerBudget(program, deps);
  registerWorktrees(program, deps);
  registerWorkflows(program, deps);
  registerFlows(program, deps);
  registerSessions(program, deps);
  registerSetup(program, deps);
  registerHosts(program, deps);

  finishCommands(program);
  program.addHelpText('after', '\nThe options above go before the command or after it: `jaggers -v status` or `jaggers status -v`.\n');
  return program;
}

/** Run the CLI; returns the exit code. Only cli.ts turns it into the process's exit. */
export async function main(argv: string[], e: Env): Promise<number> {
  let code = 0;
  const program = buildProgram(e, (c) => (code = c));
  const io = terminal(e.io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    // Interrupted (Ctrl-C) while following work that goes on: 130, the shell's code for SIGINT.
    return reportFailure(err, isJaggersError, io.writeErr);
  }
}
