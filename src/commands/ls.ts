// `ls`: the agents, their terminal ids, windows, pids and states, through the supervisor's API.
import { withApi } from '../api/connect.js';
import { startedHosts } from '../api/hosts.js';
import type { TerminalView } from '../api/types.js';
import type { Context } from '../context.js';
import { windowName } from '../window-name.js';
import { renderTable } from './render.js';

export type AgentRow = Pick<TerminalView, 'agent' | 'terminalId' | 'task' | 'profile' | 'window' | 'windowIndex' | 'pane' | 'pid' | 'state' | 'sessionId'> & {
  /** An agent on another host (docs/hosts.md): its window, pane and pid are that host's. */
  host?: string;
};

export function agentRows(views: (TerminalView & { host?: string })[]): AgentRow[] {
  return views.map((v) => ({
    ...(v.host ? { host: v.host } : {}),
    agent: v.agent,
    terminalId: v.terminalId,
    task: v.task,
    profile: v.profile,
    window: v.window,
    windowIndex: v.windowIndex,
    pane: v.pane,
    pid: v.pid,
    state: v.state,
    sessionId: v.sessionId,
  }));
}

export async function ls(ctx: Context): Promise<AgentRow[]> {
  // The hosts' agents too, as `status` gathers them (a host not connected is said on stderr).
  if (startedHosts(ctx.jaggersDir).length) {
    const { status } = await import('./status.js');
    return agentRows(await status(ctx));
  }
  return agentRows(await withApi(ctx, (api) => api.call<TerminalView[]>('GET', '/v1/terminals'), { readOnly: true }));
}

export function renderAgents(rows: AgentRow[]): string {
  if (rows.length === 0) return 'no agents\n';
  const hosts = rows.some((r) => r.host);
  return renderTable(
    ['AGENT', ...(hosts ? ['HOST'] : []), 'TERMINAL', 'PROFILE', 'WINDOW', 'PID', 'STATE'],
    rows.map((r) => [
      windowName(r.agent, r.task),
      ...(hosts ? [r.host ?? '-'] : []),
      r.terminalId ?? '-',
      r.profile ?? '-',
      `${r.windowIndex} (${r.window})`,
      String(r.pid ?? '-'),
      r.state,
    ]),
  );
}
