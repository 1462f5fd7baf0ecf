// `status`, `why`: the supervisor's live states, through its API.
import type { ApiClient } from '../api/client.js';
import { withApi } from '../api/connect.js';
import type { HealthView, TerminalDetail, TerminalView } from '../api/types.js';
import type { Context } from '../context.js';
import { describeQuestion } from '../describe-question.js';
import { describeFailure } from '../fs/disk-health.js';
import { windowName } from '../window-name.js';
import { clock, renderTable } from './render.js';

/** A row of `status --json`: the supervisor's view of the agent. */
export type AgentStatusRow = TerminalView & { from: 'supervisor' };

const agentPath = (agent: string) => `/v1/terminals/${encodeURIComponent(agent)}`;

/** While the supervisor's disk fails (new work refused with E_DISK_FULL), `status` and `why` say so on stderr. */
async function warnDisk(ctx: Context, api: ApiClient): Promise<void> {
  const h = await api.call<HealthView>('GET', '/v1/health').catch(() => null);
  if (h?.disk) ctx.warn(describeFailure(h.disk));
}

export async function status(ctx: Context, agent?: string): Promise<AgentStatusRow[]> {
  return withApi(
    ctx,
    async (api) => {
      const [rows] = await Promise.all([
        agent ? api.call<TerminalView>('GET', agentPath(agent)).then((r) => [r]) : api.call<TerminalView[]>('GET', '/v1/terminals'),
        warnDisk(ctx, api),
      ]);
      return rows.map((r) => ({ ...r, from: 'supervisor' as const }));
    },
    { readOnly: true },
  );
}

export async function why(ctx: Context, agent: string): Promise<TerminalDetail> {
  return withApi(ctx, async (api) => (await Promise.all([api.call<TerminalDetail>('GET', agentPath(agent)), warnDisk(ctx, api)]))[0], { readOnly: true });
}

/** `42%` of the model's window (`!` past its threshold); `?` when the window is unknown; `-` before any turn. */
export function contextText(c: TerminalView['context']): string {
  if (!c) return '-';
  if (c.percent === null) return '?';
  return `${Math.round(c.percent)}%${c.percent >= c.compactAt ? '!' : ''}`;
}

export function renderStatus(rows: AgentStatusRow[]): string {
  if (rows.length === 0) return 'no agents\n';
  const table = renderTable(
    ['AGENT', 'STATE', 'SINCE', 'RULE', 'TOKENS', 'CONTEXT'],
    // A task's window as `ls` shows it (`coder+t-1a2b3c4d`): one row per window, each named as `attach` and `why` take it.
    rows.map((r) => [
      windowName(r.agent, r.task),
      r.state,
      clock(r.since),
      r.rule ?? '-',
      r.usage ? r.usage.total.toLocaleString('en-US') : '-',
      contextText(r.context),
    ]),
  );
  // What each waiting agent asks, below the table: the question and its choices, and how to answer.
  const asks = rows.flatMap((r) => {
    const name = windowName(r.agent, r.task);
    return r.question ? [`${name} asks ${describeQuestion(r.question)}${r.question.choices.length ? `: jaggers answer ${name} <number or label>` : ''}`] : [];
  });
  return asks.length ? `${table}\n${asks.join('\n')}\n` : table;
}

export function renderWhy(r: TerminalDetail): string {
  const lines = [
    `${r.agent} is ${r.state}${r.since ? ` since ${r.since}` : ''}`,
    `decided by: ${r.rule ?? 'no rule matched'} (${r.source})${r.lines.length ? ', on the lines:' : ''}`,
    ...r.lines.map((l) => `  | ${l}`),
  ];
  if (r.question)
    lines.push(
      `it asks: ${r.question.text}`,
      ...r.question.choices.map((c, i) => `  ${i + 1}. ${c}`),
      ...(r.question.choices.length ? [`answer with: jaggers answer ${r.agent} <number or label>`] : []),
    );
  if (r.problem) lines.push(`problem: ${r.problem}`);
  if (r.hooks) {
    const h = r.hooks;
    const last = h.lastEvent ? `, the last ${h.lastEvent.event} at ${h.lastEvent.at}` : '';
    lines.push(
      h.installed
        ? `hooks: ${h.kind}, ${h.calls} call${h.calls === 1 ? '' : 's'}${last}`
        : `hooks: ${h.kind}, turned off for this agent (read from the state file and the screen)`,
    );
    if (h.warning) lines.push(`warning: ${h.warning}`);
  }
  if (r.limit)
    lines.push(
      `limited: ${r.limit.resetAt ? `resets at ${r.limit.resetAt}` : `no reset time shown; tried again at ${r.limit.retryAt}`} (${r.limit.lines[0]?.trim() ?? ''})`,
    );
  if (r.stuck) lines.push(`stuck (${r.stuck.kind}, since ${r.stuck.since}): ${r.stuck.reason}`);
  lines.push(`waiting for: ${r.waitingFor ?? '-'}`);
  if (r.queue.length) {
    lines.push(`its queue (${r.queue.length}):`, ...r.queue.map((q) => `  ${q.id} ${q.work} ${q.state}${q.waiting ? `: ${q.waiting}` : ': runs now'}`));
  } else lines.push('its queue: empty');
  lines.push(
    `on screen now it reads as ${r.now.status}${r.now.rule ? ` (rule ${r.now.rule})` : ''}; its last lines:`,
    ...r.now.screenLines.map((l) => `  | ${l}`),
  );
  return lines.join('\n') + '\n';
}
