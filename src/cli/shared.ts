// What the command groups share: their dependencies and the small helpers their actions use.
// On the fast path (eslint): it loads no heavy library, and a command's own module only in its action.
import type { Command } from 'commander';
import { resolveContext, type Context, type GlobalOptions } from '../context.js';
import { JaggersError } from '../errors.js';
import type { Output } from '../output.js';

/** Where the CLI runs: handed in by src/cli.ts (the process) or a test (a folder and strings). */
export interface Env {
  io: Output;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** What a group's actions use: the output, the context of this run, and the exit code main() returns. */
export interface Deps {
  io: Output;
  ctx(): Promise<Context>;
  setExit(code: number): void;
}

/** The context is resolved from the program's global options when an action asks for it; each warning is printed once. */
export function makeDeps(program: Command, e: Env, setExit: (code: number) => void): Deps {
  // The registry says so when it repaired itself after a crash: once per command, on stderr.
  const warned = new Set<string>();
  const warn = (m: string) => {
    if (!warned.has(m)) e.io.writeErr(`jaggers: warning: ${m}\n`);
    warned.add(m);
  };
  return { io: e.io, ctx: async () => resolveContext(program.opts<GlobalOptions>(), e.env, e.cwd, warn), setExit };
}

export const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
export const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

const TASK = /^[A-Za-z0-9_.-]{1,64}$/;

export function checkTask(task: string | undefined, flag: string): void {
  if (task !== undefined && !TASK.test(task))
    throw new JaggersError('E_USAGE', `${flag} must be 1-64 letters, digits, '.', '-' or '_', got ${JSON.stringify(task)}`);
}

export function seconds(v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new JaggersError('E_USAGE', `--timeout must be a positive number of seconds, got ${JSON.stringify(v)}`);
  return n;
}
