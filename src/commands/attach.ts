import { spawn } from 'node:child_process';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { checkTmux, serverArgs, socketNameFor, taggedWindows } from '../api/session.js';
import { hostOfAgent, withHostApi } from '../api/hosts.js';
import type { TerminalView } from '../api/types.js';
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

/**
 * For an agent on another host (docs/hosts.md): `ssh -t` to that host running its tmux's attach at the
 * agent's window (its window as that host's supervisor has it; that host's tmux server is its remote
 * project's, `-L jaggers-<8 hex of its root>`, the session the same as here). Null: a local agent.
 */
export async function remoteAttachArgs(ctx: Context, agent: string, readOnly: boolean): Promise<{ bin: string; args: string[] } | null> {
  const on = hostOfAgent(ctx, agent);
  if (!on) return null;
  const hosts = (await ctx.project())?.hosts ?? {};
  const spec = Object.hasOwn(hosts, on.host) ? hosts[on.host] : undefined;
  if (!spec) throw new JaggersError('E_HOST_UNKNOWN', `agent ${agent} runs on host ${on.host}, which jaggers.json no longer has`);
  const view = await withHostApi(ctx, on.host, (api) => api.call<TerminalView>('GET', `/v1/terminals/${encodeURIComponent(agent)}`));
  const { remoteCommandLine, sshArgv, sshSettings } = await import('../hosts/ssh.js');
  const settings = sshSettings(ctx.env);
  const tmux = ['tmux', '-L', socketNameFor(on.root), 'attach-session', '-t', `=${ctx.session}:${view.window}`, ...(readOnly ? ['-r'] : [])];
  return { bin: settings.bin, args: sshArgv(spec, settings, remoteCommandLine(tmux), ['-t']) };
}

export async function attach(ctx: Context, agent: string | undefined, readOnly: boolean): Promise<number> {
  const remote = agent ? await remoteAttachArgs(ctx, agent, readOnly) : null;
  const [bin, args, env] = remote ? [remote.bin, remote.args, ctx.env] : [ctx.server.bin, await attachArgs(ctx, agent, readOnly), ctx.server.env];
  return new Promise((resolve) => {
    const child = spawn(bin, args, { env, stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code) => resolve(code ?? 1));
  });
}
