import type { Context } from '../context.js';
import { listPanes, type PaneInfo } from '../tmux/commands.js';
import { openControl } from '../tmux/connect.js';
import type { ControlClient } from '../tmux/control-client.js';

export interface AgentRow {
  agent: string;
  terminalId: string | null;
  profile: string | null;
  window: string;
  windowIndex: number;
  pane: string;
  pid: number | null;
  state: string;
}

export function agentRows(panes: PaneInfo[]): AgentRow[] {
  return panes
    .filter((p) => p.agent !== null)
    .map((p) => ({
      agent: p.agent!,
      terminalId: p.terminalId,
      profile: p.profile,
      window: p.windowId,
      windowIndex: p.windowIndex,
      pane: p.paneId,
      pid: p.panePid,
      state: p.dead ? 'exited' : (p.state ?? 'running'),
    }));
}

export async function listAgents(c: ControlClient, session: string): Promise<AgentRow[]> {
  return agentRows(await listPanes(c, session));
}

export function renderTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

export function renderAgents(rows: AgentRow[]): string {
  if (rows.length === 0) return 'no agents\n';
  return renderTable(
    ['AGENT', 'TERMINAL', 'PROFILE', 'WINDOW', 'PID', 'STATE'],
    rows.map((r) => [r.agent, r.terminalId ?? '-', r.profile ?? '-', `${r.windowIndex} (${r.window})`, String(r.pid ?? '-'), r.state]),
  );
}

export async function ls(ctx: Context): Promise<AgentRow[]> {
  const c = await openControl(ctx.server, ctx.session);
  try {
    return await listAgents(c, ctx.session);
  } finally {
    await c.close();
  }
}

/**
 * Redraw on every change tmux reports (windows added or closed, a pane's death or state option
 * changing, via a subscription), never on a timer of ours. Resolves when the session ends.
 */
export async function watchAgents(ctx: Context, draw: (rows: AgentRow[]) => void, signal?: AbortSignal): Promise<void> {
  const c = await openControl(ctx.server, ctx.session);
  let queued = false;
  const redraw = () => {
    if (queued || c.isClosed) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      listAgents(c, ctx.session).then(draw, () => {});
    });
  };
  c.onNotification((name) => {
    if (name.startsWith('window-') || name.startsWith('unlinked-window') || name === 'subscription-changed') redraw();
  });
  await c.runOk(['refresh-client', '-B', 'jaggers-ls:%*:#{pane_dead}#{@jaggers_state}']);
  redraw();
  await new Promise<void>((resolve) => {
    c.onExit(() => resolve());
    signal?.addEventListener('abort', () => void c.close().then(resolve));
  });
}
