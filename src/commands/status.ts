import stripAnsi from 'strip-ansi';
import type { Context } from '../context.js';
import { classify } from '../detect/classify.js';
import { parsePublished } from '../detect/publish.js';
import { JaggersError } from '../errors.js';
import { loadProfile } from '../profiles/load.js';
import { capturePane, listPanes, type PaneInfo } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { renderTable } from './ls.js';
import { withControl } from './simple.js';

export interface AgentStatusRow {
  agent: string;
  terminalId: string | null;
  state: string;
  since: string | null;
  rule: string | null;
  lines: string[];
  source: string;
  /** `supervisor`: the live machine's state; `reading`: a one-off reading of the screen (no supervisor ran). */
  from: 'supervisor' | 'reading';
}

async function statusOf(c: ControlClient, ctx: Context, p: PaneInfo): Promise<AgentStatusRow> {
  const base = { agent: p.agent!, terminalId: p.terminalId };
  if (p.dead) return { ...base, state: 'exited', since: null, rule: 'pane-exited', lines: [`exit status ${p.deadStatus}`], source: 'tmux', from: 'reading' };
  const pub = parsePublished(p.why);
  if (pub) return { ...base, state: pub.state, since: pub.since, rule: pub.rule, lines: pub.lines, source: pub.source, from: 'supervisor' };
  const { profile } = await loadProfile(p.profile ?? '', ctx.jaggersDir);
  const screen = await capturePane(c, p.paneId);
  const r = classify({ screen, raw: stripAnsi(screen), rules: profile.detect.rules });
  return { ...base, state: r.status, since: null, rule: r.rule, lines: r.lines, source: 'screen', from: 'reading' };
}

export async function status(ctx: Context, agent?: string): Promise<AgentStatusRow[]> {
  return withControl(ctx, async (c) => {
    const panes = (await listPanes(c, ctx.session)).filter((p) => p.agent && (!agent || p.agent === agent));
    if (agent && panes.length === 0) throw new JaggersError('E_AGENT_UNKNOWN', `unknown agent ${JSON.stringify(agent)} in session ${ctx.session}`);
    return Promise.all(panes.map((p) => statusOf(c, ctx, p)));
  });
}

export function renderStatus(rows: AgentStatusRow[]): string {
  return renderTable(
    ['AGENT', 'STATE', 'SINCE', 'RULE'],
    rows.map((r) => [r.agent, r.state, r.since ? r.since.slice(11, 23) : '-', r.rule ?? '-']),
  );
}

export function renderWhy(r: AgentStatusRow): string {
  return [
    `${r.agent} is ${r.state}${r.since ? ` since ${r.since}` : ''}`,
    `decided by: ${r.rule ?? 'no rule matched'} (${r.source}${r.from === 'reading' ? ', a one-off reading: no supervisor is running' : ''})`,
    ...(r.lines.length ? ['matched:', ...r.lines.map((l) => `  | ${l}`)] : []),
  ].join('\n') + '\n';
}
