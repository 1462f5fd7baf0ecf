// The pinned conversations of each task and agent.
import type { Command } from 'commander';
import { examples, json, type Deps } from './shared.js';

/** Adds sessions, exec. */
export function registerSessions(program: Command, e: Deps): void {
  const { ctx, setExit } = e;

  program
    .command('sessions')
    .description('list the pinned conversations: task, agent, terminal, session id, forks')
    .option('--task <id>', "only this task's")
    .option('--json', 'print JSON')
    .addHelpText('after', examples(['jaggers sessions', 'jaggers sessions --task fix-login --json']))
    .action(async (o: { task?: string; json?: boolean }) => {
      const { sessions, renderPins } = await import('../commands/sessions.js');
      const rows = await sessions(await ctx(), o.task);
      e.io.writeOut(o.json ? json(rows) : renderPins(rows));
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
      const { execPinned } = await import('../commands/sessions.js');
      setExit(await execPinned(await ctx(), cli, args, o));
    });
}
