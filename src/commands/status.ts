// `status`, `why`: the supervisor's live states, through its API.
import type { ApiClient } from '../api/client.js';
import { hostApi, withApi } from '../api/connect.js';
import { hostOfAgent, startedHosts, withHostApi } from '../api/hosts.js';
import type { HealthView, InboxView, JobView, QueueEntry, TerminalDetail, TerminalView } from '../api/types.js';
import type { Context } from '../context.js';
import { describeQuestion } from '../describe-question.js';
import { JaggersError } from '../errors.js';
import { describeFailure } from '../fs/disk-health.js';
import { isFinalState } from '../states.js';
import { windowName } from '../window-name.js';
import { clock, renderTable } from './render.js';

/** A row of `status --json`: the supervisor's view of the agent; `host` for an agent on another host (docs/hosts.md). */
export type AgentStatusRow = TerminalView & { from: 'supervisor'; host?: string };

const agentPath = (agent: string) => `/v1/terminals/${encodeURIComponent(agent)}`;

/** While the supervisor's disk fails (new work refused with E_DISK_FULL), `status` and `why` say so on stderr. */
async function warnDisk(ctx: Context, api: ApiClient): Promise<HealthView | null> {
  const h = await api.call<HealthView>('GET', '/v1/health').catch(() => null);
  if (h?.disk) ctx.warn(describeFailure(h.disk));
  return h;
}

/**
 * The rows of the hosts `up` started agents on, each through its supervisor's forwarded API; a host whose
 * connection is not up is said on stderr with its state (its agents are not shown), as the local
 * supervisor's health has it, and so is a host supervisor the local one started again.
 */
async function hostRows(ctx: Context, health: HealthView | null): Promise<AgentStatusRow[]> {
  const rows = await Promise.all(
    startedHosts(ctx.jaggersDir).map(async (h) => {
      const conn = health?.hosts?.find((x) => x.name === h.host);
      const agents = h.agents.join(', ');
      if (conn?.state !== 'connected') {
        ctx.warn(
          `host ${h.host}: ${conn ? `the connection is ${conn.detail}` : 'the supervisor keeps no connection to it'}; its agents (${agents}) are not shown`,
        );
        return [];
      }
      // Its supervisor started again by the local one (docs/hosts.md, Faults): said, with why.
      const kept = conn.supervisor;
      if (kept && kept.restarts > 0 && kept.state === 'answering') ctx.warn(`host ${h.host}: supervisor ${kept.detail}`);
      try {
        const views = await hostApi(ctx, h.host).call<TerminalView[]>('GET', '/v1/terminals');
        return views.map((v) => ({ ...v, from: 'supervisor' as const, host: h.host }));
      } catch (e) {
        const keeping = kept && kept.state !== 'answering' ? ` (supervisor ${kept.detail})` : '';
        ctx.warn(`host ${h.host}: its supervisor did not answer (${(e as Error).message})${keeping}; its agents (${agents}) are not shown`);
        return [];
      }
    }),
  );
  return rows.flat();
}

export async function status(ctx: Context, agent?: string): Promise<AgentStatusRow[]> {
  const on = agent ? hostOfAgent(ctx, agent) : null;
  if (agent && on) {
    const v = await withHostApi(ctx, on.host, (api) => api.call<TerminalView>('GET', agentPath(agent)));
    return [{ ...v, from: 'supervisor', host: on.host }];
  }
  return withApi(
    ctx,
    async (api) => {
      const [rows, health] = await Promise.all([
        agent ? api.call<TerminalView>('GET', agentPath(agent)).then((r) => [r]) : api.call<TerminalView[]>('GET', '/v1/terminals'),
        warnDisk(ctx, api),
      ]);
      const local = rows.map((r) => ({ ...r, from: 'supervisor' as const }));
      return agent ? local : [...local, ...(await hostRows(ctx, health))];
    },
    { readOnly: true },
  );
}

/** The items (jobs and messages) for an agent on a host that this supervisor holds: not handed over yet, or waiting for the host. */
async function heldHere(ctx: Context, agent: string, host: string): Promise<QueueEntry[]> {
  const [jobs, inbox] = await withApi(
    ctx,
    (api) =>
      Promise.all([api.call<JobView[]>('GET', '/v1/jobs'), api.call<InboxView>('GET', `/v1/terminals/${encodeURIComponent(agent)}/inbox`).catch(() => null)]),
    { readOnly: true },
  ).catch(() => [[] as JobView[], null] as const);
  const open = [
    ...jobs
      .filter((j) => j.host === host && j.agent === agent && !isFinalState(j.state))
      .map((j) => ({ seq: j.seq, id: j.id, work: j.work, state: j.state, waiting: j.waiting })),
    ...(inbox?.messages ?? [])
      .filter((m) => m.host === host && m.state !== 'delivered')
      .map((m) => ({ seq: m.seq, id: m.id, work: 'message', state: m.state, waiting: inbox!.waiting })),
  ];
  return open.sort((a, b) => a.seq - b.seq).map(({ id, work, state, waiting }) => ({ id, work, state, waiting }));
}

export async function why(ctx: Context, agent: string): Promise<TerminalDetail> {
  const on = hostOfAgent(ctx, agent);
  if (on) {
    // Its host's view, with the items still queued here for it; the host down: what waits here for it.
    const detail = await withHostApi(ctx, on.host, (api) => api.call<TerminalDetail>('GET', agentPath(agent))).catch(async (e: unknown) => {
      if (!(e instanceof JaggersError) || e.code !== 'E_SSH') throw e;
      const held = await heldHere(ctx, agent, on.host);
      if (!held.length) throw e;
      const items = held.map((j) => `${j.id} ${j.work} ${j.state}: ${j.waiting ?? 'being forwarded'}`);
      throw new JaggersError('E_SSH', `${e.message}\n${held.length} item${held.length === 1 ? '' : 's'} for ${agent} wait here:\n  ${items.join('\n  ')}`);
    });
    const there = new Set(detail.queue.map((q) => q.id));
    const held = (await heldHere(ctx, agent, on.host)).filter((j) => !there.has(j.id));
    return { ...detail, queue: [...detail.queue, ...held.map((q) => ({ ...q, waiting: q.waiting ?? 'queued here' }))] };
  }
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
  // A HOST column once an agent runs on another host (docs/hosts.md): `-` for this machine.
  const hosts = rows.some((r) => r.host);
  const table = renderTable(
    ['AGENT', ...(hosts ? ['HOST'] : []), 'STATE', 'SINCE', 'RULE', 'TOKENS', 'CONTEXT'],
    // A task's window as `ls` shows it (`coder+t-1a2b3c4d`): one row per window, each named as `attach` and `why` take it.
    rows.map((r) => [
      windowName(r.agent, r.task),
      ...(hosts ? [r.host ?? '-'] : []),
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
