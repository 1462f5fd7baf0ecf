// What the command groups share: their dependencies and the small helpers their actions use.
// On the fast path (eslint): it loads no heavy library, and a command's own module only in its action.
import type { Command } from 'commander';
import { resolveContext, type Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { TASK_ID, TASK_ID_RULE } from '../ids.js';
import { type Output, type Terminal, warnOnce } from '../output.js';
import { givenGlobals } from './global-options.js';

/** Where the CLI runs: handed in by src/cli.ts (the process) or a test (a folder and strings). */
export interface Env {
  io: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Call `fn` on the first Ctrl-C (SIGINT) until the returned function is called; src/cli.ts gives the process's. */
  onInterrupt?(fn: () => void): () => void;
  /** The command's client has gone: end the process once main() returns, whatever is still pending. */
  leave?(): void;
}

/** What a group's actions use: the output, the context of this run, and the exit code main() returns. */
export interface Deps {
  /** Text is made inert here (src/output.ts); jaggers' own controls go by `control`. */
  io: Terminal;
  ctx(): Promise<Context>;
  setExit(code: number): void;
  /** An AbortSignal that Ctrl-C aborts, for a command that follows work it does not own (the work goes on); and its release. */
  interruptible(): { signal: AbortSignal; release(): void };
  /** Nobody is left to answer (the MCP client closed stdin): src/cli.ts ends the process once the command returns. */
  leave(): void;
}

/** The context is resolved from the program's global options when an action asks for it; each warning is printed once. */
export function makeDeps(program: Command, e: Env & { io: Terminal }, setExit: (code: number) => void): Deps {
  // The registry says so when it repaired itself after a crash: once per command, on stderr.
  const warn = warnOnce(e.io.writeErr);
  const interruptible = () => {
    const stop = new AbortController();
    const off = e.onInterrupt?.(() => stop.abort()) ?? (() => {});
    return { signal: stop.signal, release: off };
  };
  // The command that runs: its global options (given after it) count too.
  let action: Command | null = null;
  program.hook('preAction', (_program, a) => void (action = a));
  return { io: e.io, ctx: async () => resolveContext(givenGlobals(program, action), e.env, e.cwd, warn), setExit, interruptible, leave: () => e.leave?.() };
}

export const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
export const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** A `--watch` frame: the screen cleared (jaggers' own control), then the text. */
export function redraw(io: Terminal, text: string): void {
  io.control('clear-screen');
  io.writeOut(text);
}

export function checkTask(task: string | undefined, flag: string): void {
  if (task !== undefined && !TASK_ID.test(task)) throw new JaggersError('E_USAGE', `${flag} must be ${TASK_ID_RULE}, got ${JSON.stringify(task)}`);
}

export function seconds(v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new JaggersError('E_USAGE', `--timeout must be a positive number of seconds, got ${JSON.stringify(v)}`);
  return n;
}
