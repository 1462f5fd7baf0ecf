import { execa } from 'execa';
import type { Context } from '../context.js';
import { serverArgs } from '../tmux/server.js';
import { findAgentPane, withControl } from './simple.js';

/** The tmux argv that attaches a person's terminal to the session (at an agent's window when named). */
export async function attachArgs(ctx: Context, agent: string | undefined, readOnly: boolean): Promise<string[]> {
  const target = agent
    ? await withControl(ctx, async (c) => (await findAgentPane(c, ctx, agent)).windowId)
    : await withControl(ctx, async () => '');
  const args = [...serverArgs(ctx.server), 'attach-session', '-t', target ? `=${ctx.session}:${target}` : `=${ctx.session}`];
  if (readOnly) args.push('-r');
  return args;
}

export async function attach(ctx: Context, agent: string | undefined, readOnly: boolean): Promise<number> {
  const args = await attachArgs(ctx, agent, readOnly);
  const r = await execa(ctx.server.bin, args, { env: ctx.server.env, extendEnv: false, stdio: 'inherit', reject: false });
  return r.exitCode ?? 1;
}
