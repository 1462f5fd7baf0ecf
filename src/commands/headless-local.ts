// `handoff --headless` while the session is down: no pane to stop or resume, so the turn runs right
// here, in the agent's pinned conversation; the next `up` resumes that conversation in its pane.
import os from 'node:os';
import type { HandoffResult } from '../api/types.js';
import type { Context } from '../context.js';
import { PaneQueue } from '../delivery/queue.js';
import { JaggersError } from '../errors.js';
import { silentLog } from '../logger.js';
import { binDir } from '../package-root.js';
import { loadProfile } from '../profiles/load.js';
import { findTerminal, Registry } from '../sessions/registry.js';
import { planLaunch } from '../terminals/plan.js';
import { headlessTurn } from '../turns/headless.js';
import { registryTeam } from './up-hint.js';
import { DEFAULT_SIZE } from './up.js';
import { writeLaunchFiles } from '../mcp/register.js';

export async function headlessLocally(
  ctx: Context,
  o: { agent: string; message: string; task: string; from?: string; timeout?: number; workflow?: string },
): Promise<HandoffResult> {
  const registry = new Registry(ctx.jaggersDir, { onWarning: ctx.warn });
  const data = await registry.read();
  const terminal = findTerminal(data, { agent: o.agent, task: o.task }) ?? findTerminal(data, { agent: o.agent, task: null });
  if (!terminal) {
    throw new JaggersError(
      'E_AGENT_UNKNOWN',
      `handoff --headless: no terminal for agent ${JSON.stringify(o.agent)} in ${ctx.jaggersDir}/sessions.json: run \`jaggers up\` once so its session is pinned`,
    );
  }
  const { profile } = await loadProfile(terminal.profile, ctx.jaggersDir);
  const spec = (await ctx.project())?.agents.find((a) => a.name === o.agent) ??
    (await registryTeam(ctx)).find((a) => a.name === o.agent) ?? { name: o.agent, profile: terminal.profile, args: [], env: {} };
  const from = o.from ? (findTerminal(data, { agent: o.from, task: o.task }) ?? findTerminal(data, { agent: o.from, task: null })) : null;
  const socket = 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
  const target = { paneId: terminal.terminalId, agent: o.agent, terminalId: terminal.terminalId, profile, pid: null };
  return headlessTurn(
    {
      registry,
      queue: new PaneQueue(),
      projectRoot: ctx.projectRoot,
      jaggersDir: ctx.jaggersDir,
      log: silentLog,
      emit: () => {},
      pane: null,
      launch: async () => {
        const launch = planLaunch(
          {
            projectRoot: ctx.projectRoot,
            session: ctx.session,
            socket,
            binDir,
            basePath: ctx.env.PATH ?? '/usr/bin:/bin',
            size: DEFAULT_SIZE,
            task: terminal.task,
            newSessionId: () => terminal.sessionId ?? '',
          },
          spec,
          profile,
          terminal.terminalId,
          null,
        );
        const env: Record<string, string> = {
          ...(ctx.env as Record<string, string>),
          ...launch.env,
          JAGGERS_TASK_ID: o.task,
          HOME: launch.env.HOME ?? ctx.env.HOME ?? os.homedir(),
        };
        delete env.TMUX;
        delete env.TMUX_PANE;
        await writeLaunchFiles(launch);
        return { env, args: [...spec.args, ...(launch.mcp?.args ?? [])], cwd: launch.cwd };
      },
    },
    target,
    {
      task: o.task,
      workflow: o.workflow ?? 'handoff',
      payload: o.message,
      from: from ? { agent: from.agent, terminalId: from.terminalId } : o.from ? { agent: o.from, terminalId: null } : null,
      timeoutMs: (o.timeout ?? 600) * 1000,
      label: 'handoff --headless',
    },
  );
}
