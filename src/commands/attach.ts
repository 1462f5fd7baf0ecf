import { spawn } from 'node:child_process';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { checkTmux, serverArgs, taggedWindows } from '../api/session.js';
import { hintForUp } from '../api/hint.js';
import { offeredNames, windowName } from '../window-name.js';

/** The tmux argv that attaches a person's terminal to the session (at an agent's window when named). */
export async function attachArgs(ctx: Context, agent: string | undefined, readOnly: boolean): Promise<string[]> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const windows = await taggedWindows(ctx.server, ctx.session);
  if (!windows) throw new JaggersError('E_SESSION_MISSING', `no jaggers session ${JSON.stringify(ctx.session)}: ${await hintForUp(ctx)}`);
  let target = '';
  if (agent) {
    const w =
      windows.find((x) => x.agent === agent && !x.task) ??
      windows.find((x) => x.agent === agent) ??
      windows.find((x) => x.agent && windowName(x.agent, x.task || null) === agent);
    if (!w) {
      const known = offeredNames(windows.map((x) => ({ agent: x.agent || null, task: x.task || null })));
      throw new JaggersError('E_AGENT_UNKNOWN', `unknown agent ${JSON.stringify(agent)} in session ${ctx.session}: agents are ${known}`);
    }
    target = w.windowId;
  }
  const args = [...serverArgs(ctx.server), 'attach-session', '-t', target ? `=${ctx.session}:${target}` : `=${ctx.session}`];
  if (readOnly) args.push('-r');
  return args;
}

export async function attach(ctx: Context, agent: string | undefined, readOnly: boolean): Promise<number> {
  const args = await attachArgs(ctx, agent, readOnly);
  return new Promise((resolve) => {
    const child = spawn(ctx.server.bin, args, { env: ctx.server.env, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  });
}
