// The page's live state: what the API's lists said, kept current by the event stream. Pure: an event
// changes the model and says what to redraw or read again; the page (main.ts) does the fetching and
// the drawing. No DOM here, so the unit tests run it in node.
import type { AgentState, HostAgentsView, JobEventData, JobView, PageEvent, StateEventData, TerminalView, WorktreeInfo } from './types.js';

export interface Model {
  /** The agents' panes by their key (`agentKey`), in the order the API lists them. */
  terminals: Map<string, TerminalView>;
  jobs: Map<string, JobView>;
  /** Messages not yet delivered, per agent key (from each agent's inbox). */
  pending: Map<string, number>;
  worktrees: WorktreeInfo[];
  /**
   * The hosts the supervisor keeps a connection to (docs/hosts.md), by name: each one's connection, and
   * why its agents are not shown (`problem`) with the names its record has. Their agents are in
   * `terminals` with `host`, keyed `agent@host`.
   */
  hosts: Map<string, HostCard>;
}

/** A host as the overview shows it. */
export interface HostCard {
  host: string;
  state: string;
  detail: string;
  names: string[];
  problem: string | null;
}

/**
 * When a list is to be read again: `soon`, the event left something out that the page must show now (a
 * question, a new job's text); `later`, details that may lag a little (what an agent waits for, why a
 * queued job waits). Reading less often keeps the page and the supervisor free for the events themselves.
 */
export type Refresh = false | 'soon' | 'later';

/** What an event asks of the page: cards to redraw at once, lists to read again. */
export interface Effects {
  cards: Set<string>;
  terminals: Refresh;
  jobs: Refresh;
  tasks: boolean;
  inbox: Set<string>;
  worktrees: boolean;
  /** Events were missed (a gap, a new supervisor): read everything again. */
  reload: boolean;
  /** The hosts' agents are to be read again (a host's stream (re)started, its connection changed). */
  hosts: boolean;
  /** A host's card to draw again (its connection changed). */
  hostCards: Set<string>;
}

export const emptyModel = (): Model => ({ terminals: new Map(), jobs: new Map(), pending: new Map(), worktrees: [], hosts: new Map() });

const noEffects = (): Effects => ({
  cards: new Set(),
  terminals: false,
  jobs: false,
  tasks: false,
  inbox: new Set(),
  worktrees: false,
  reload: false,
  hosts: false,
  hostCards: new Set(),
});

/**
 * How the page names an agent's pane, in URLs too: the API takes `agent+task` for a task's window; an
 * agent on another host is `agent@host` (a name never has `@`).
 */
export const agentKey = (t: { agent: string; task: string | null; host?: string }): string =>
  `${t.task ? `${t.agent}+${t.task}` : t.agent}${t.host ? `@${t.host}` : ''}`;

/** A key's agent (`agent+task`) and host (null: this machine). */
export function splitKey(key: string): { agent: string; host: string | null } {
  const at = key.lastIndexOf('@');
  return at > 0 ? { agent: key.slice(0, at), host: key.slice(at + 1) } : { agent: key, host: null };
}

/**
 * The name the API's work routes take for a key (`/v1/jobs` `target`, `/v1/messages` `to`): a host agent's
 * is its name (`far@box` -> `far`: jaggers.json says which host, and the local supervisor forwards it).
 */
export const apiName = (key: string): string => splitKey(key).agent;

/** The API's path of an agent's routes (`/v1/terminals/far`): a host agent's through the supervisor's host routes (`/v1/hosts/box/terminals/far`). */
export function terminalPath(key: string): string {
  const { agent, host } = splitKey(key);
  return host ? `/v1/hosts/${encodeURIComponent(host)}/terminals/${encodeURIComponent(agent)}` : `/v1/terminals/${encodeURIComponent(agent)}`;
}

export const ACTIVE_JOB_STATES: ReadonlySet<string> = new Set(['starting', 'running', 'waiting_input']);
export const FINAL_JOB_STATES: ReadonlySet<string> = new Set(['done', 'failed', 'cancelled']);

/** The terminal an event names: by its terminal id, else by agent and task. */
export function findTerminal(m: Model, data: { agent?: unknown; terminalId?: unknown; task?: unknown }): TerminalView | undefined {
  if (typeof data.terminalId === 'string') {
    for (const t of m.terminals.values()) if (t.terminalId === data.terminalId && !t.host) return t;
  }
  if (typeof data.agent !== 'string') return undefined;
  const task = typeof data.task === 'string' ? data.task : null;
  return m.terminals.get(agentKey({ agent: data.agent, task }));
}

/**
 * Take a fresh `GET /v1/terminals`. A state event that arrived while the list was on its way is newer
 * than the list: where the model's `since` is later than the list's, the model's state stays.
 */
export function setTerminals(m: Model, list: TerminalView[]): void {
  const next = new Map<string, TerminalView>();
  for (const t of list) {
    const key = agentKey(t);
    const known = m.terminals.get(key);
    if (known && known.since && t.since && Date.parse(known.since) > Date.parse(t.since)) {
      next.set(key, { ...t, state: known.state, since: known.since, rule: known.rule, turns: known.turns });
    } else next.set(key, t);
  }
  // The hosts' agents stay (they come with `GET /v1/hosts/terminals`), after this machine's.
  for (const [k, t] of m.terminals) if (t.host) next.set(k, t);
  m.terminals = next;
}

/**
 * Take a fresh `GET /v1/hosts/terminals`: each host's agents (keyed `agent@host`, after this machine's),
 * and each host's connection; a host whose agents are not shown keeps none here (its card says why).
 */
export function setHosts(m: Model, hosts: HostAgentsView[]): void {
  const local = [...m.terminals.values()].filter((t) => !t.host);
  const fresh = new Map<string, TerminalView>();
  for (const t of hosts.flatMap((h) => h.agents ?? [])) {
    const key = agentKey(t);
    const known = m.terminals.get(key);
    fresh.set(key, known && known.since && t.since && Date.parse(known.since) > Date.parse(t.since) ? { ...t, state: known.state, since: known.since } : t);
  }
  m.terminals = new Map([...local.map((t) => [agentKey(t), t] as const), ...fresh]);
  m.hosts = new Map(hosts.map((h) => [h.host, { host: h.host, state: h.state, detail: h.detail, names: h.names, problem: h.problem }]));
}

export function setJobs(m: Model, list: JobView[]): void {
  m.jobs = new Map(list.map((j) => [j.id, j]));
}

/** Apply one event of `GET /v1/events` to the model. */
export function applyEvent(m: Model, e: PageEvent): Effects {
  const fx = noEffects();
  switch (e.type) {
    case 'state': {
      const d = e.data as unknown as StateEventData;
      const t = findTerminal(m, d);
      if (!t) {
        fx.terminals = 'soon';
        break;
      }
      const was = t.state;
      t.state = d.state as AgentState;
      t.since = d.since ?? e.at;
      t.rule = d.rule ?? null;
      t.turns = typeof d.turns === 'number' ? d.turns : t.turns;
      // The question and what the agent waits for are not in the event: read them with the list.
      if (d.state !== 'waiting_input') t.question = null;
      fx.cards.add(agentKey(t));
      fx.terminals = t.state === 'waiting_input' ? 'soon' : 'later';
      if (was !== t.state && (t.state === 'done' || t.state === 'idle')) fx.jobs = 'later';
      break;
    }
    case 'job': {
      const d = e.data as unknown as JobEventData;
      const j = m.jobs.get(d.id);
      if (j) {
        j.state = d.state;
        j.reason = d.reason;
        j.updated = e.at;
        if (d.terminalId !== undefined) j.terminalId = d.terminalId;
        if (d.agent !== undefined) j.agent = d.agent;
      }
      // A new job: the list has the rest (its text, its place in the queue); a known one changed here.
      fx.jobs = j ? 'later' : 'soon';
      const t = findTerminal(m, { terminalId: d.terminalId, agent: d.agent });
      if (t) fx.cards.add(agentKey(t));
      if (FINAL_JOB_STATES.has(d.state) && j?.worktree) fx.worktrees = true;
      break;
    }
    case 'message': {
      const t = findTerminal(m, { terminalId: e.data.to, agent: e.data.toAgent });
      if (t) fx.inbox.add(agentKey(t));
      break;
    }
    case 'pin': {
      const t = findTerminal(m, e.data);
      if (t && typeof e.data.sessionId === 'string') {
        t.sessionId = e.data.sessionId;
        fx.cards.add(agentKey(t));
      }
      break;
    }
    case 'fork': {
      const t = findTerminal(m, e.data);
      if (t && typeof e.data.to === 'string') {
        t.sessionId = e.data.to;
        fx.cards.add(agentKey(t));
      }
      break;
    }
    case 'task':
      fx.tasks = true;
      fx.terminals = 'later';
      break;
    case 'gap':
    case 'hello':
      fx.reload = true;
      break;
    // The hosts' events (`GET /v1/hosts/events`): a host agent's state, a host's connection, a host's stream (re)started.
    case 'host-state': {
      const d = e.data as unknown as StateEventData & { host: string };
      const t = m.terminals.get(agentKey({ agent: d.agent, task: d.task ?? null, host: d.host }));
      if (!t) {
        fx.hosts = true;
        break;
      }
      t.state = d.state as AgentState;
      t.since = d.since ?? e.at;
      t.rule = d.rule ?? null;
      t.turns = typeof d.turns === 'number' ? d.turns : t.turns;
      if (d.state !== 'waiting_input') t.question = null;
      fx.cards.add(agentKey(t));
      // The question is not in the event: read with the list.
      if (t.state === 'waiting_input') fx.hosts = true;
      break;
    }
    case 'host': {
      const host = typeof e.data.host === 'string' ? e.data.host : null;
      if (!host) break;
      const was = m.hosts.get(host);
      const state = String(e.data.state);
      const detail = String(e.data.detail ?? state);
      m.hosts.set(host, {
        host,
        state,
        detail,
        names: was?.names ?? [],
        problem: state === 'connected' ? (was?.problem ?? null) : `the connection is ${detail}`,
      });
      if (state !== 'connected') {
        // Its agents are not known while it is down: their cards go, the host's card says so.
        for (const [k, t] of m.terminals) if (t.host === host) m.terminals.delete(k);
      }
      fx.hostCards.add(host);
      if (!was || was.state !== state) fx.hosts = true;
      break;
    }
    case 'host-hello':
      fx.hosts = true;
      break;
    default:
      break;
  }
  return fx;
}

/** Parse one SSE frame's data (`{"at", "data"}`), as the supervisor writes it. */
export function parseFrame(type: string, lastEventId: string, text: string): PageEvent | null {
  try {
    const f = JSON.parse(text) as { at?: unknown; data?: unknown };
    if (!f || typeof f !== 'object' || typeof f.data !== 'object' || f.data === null) return null;
    const id = /^\d+$/.test(lastEventId) ? Number(lastEventId) : null;
    return { id, type, at: typeof f.at === 'string' ? f.at : new Date().toISOString(), data: f.data as Record<string, unknown> };
  } catch {
    return null;
  }
}
