// The hosts' agents for the views of the local supervisor (docs/hosts.md, docs/web.md, docs/mcp.md): each
// host's `GET /v1/terminals` asked through its forwarded socket, as `status` does, while its connection is
// up; a host whose connection is down (or whose supervisor does not answer) is one entry saying so, never
// an error that hides the others. And the merge the views show: the local agents, then the hosts'.
import type { HostAgentsView, HostTerminalView, TerminalView } from '../api/types.js';
import type { HostView } from './remote-host.js';

/** One host as the views need it: its connection, its supervisor's API through the forwarded socket. */
export interface HostSource {
  readonly name: string;
  view(): HostView;
  /** The agents its record names (what `up` started there), for a host whose agents cannot be asked. */
  recorded(): Promise<string[]>;
  api: {
    call<T>(method: string, path: string, body?: unknown, o?: { signal?: AbortSignal }): Promise<T>;
  };
  /** The forwarded socket here, and the session its supervisor answers for (its event streams are passed on through it as they come). */
  socketPath: string;
  session?: string;
  /** Told each change of its connection's state; returns the unsubscribe. */
  onState(listener: (v: HostView) => void): () => void;
}

/** How long a host's supervisor may take to list its agents before it counts as not answering. */
export const HOST_ASK_MS = 5000;

/** One host's agents, or why they are not shown. */
export async function hostAgents(h: HostSource, timeoutMs = HOST_ASK_MS): Promise<HostAgentsView> {
  const v = h.view();
  const base = { host: v.name, ssh: v.ssh, state: v.state, detail: v.detail };
  const names = () => h.recorded().catch(() => [] as string[]);
  if (v.state !== 'connected') return { ...base, agents: null, names: await names(), problem: `the connection is ${v.detail}` };
  try {
    const list = await h.api.call<TerminalView[]>('GET', '/v1/terminals', undefined, { signal: AbortSignal.timeout(timeoutMs) });
    return { ...base, agents: list.map((t) => ({ ...t, host: v.name })), names: list.map((t) => t.agent), problem: null };
  } catch (e) {
    const why = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError' ? `no answer within ${timeoutMs} ms` : (e as Error).message;
    return { ...base, agents: null, names: await names(), problem: `its supervisor did not answer (${why})` };
  }
}

/** Every host's, at once: one slow or down host does not hold the others back beyond the timeout. */
export function allHostAgents(hosts: readonly HostSource[], timeoutMs = HOST_ASK_MS): Promise<HostAgentsView[]> {
  return Promise.all(hosts.map((h) => hostAgents(h, timeoutMs)));
}

/** A row of a merged list: a local agent (no host) or a host's (`host`), with where else its name runs. */
export type MergedAgent<T> = T & { host?: string; alsoOn?: string[] };

/** `this machine` for the local agents in `alsoOn`. */
export const LOCAL = 'this machine';

/**
 * The local agents, then each host's (those of a host that is down are not there: its entry in `hosts`
 * says why). A name on two machines (an agent of a host supervisor that this team does not name, a
 * task's window) is kept on both, each row saying where else it runs (`alsoOn`): commands that take a
 * name reach the host its record names, else this machine.
 */
export function mergeAgents<T extends { agent: string; task: string | null }>(
  local: readonly T[],
  hosts: readonly { host: string; agents: readonly T[] | null }[],
): MergedAgent<T>[] {
  const rows: MergedAgent<T>[] = [...local.map((t) => ({ ...t })), ...hosts.flatMap((h) => (h.agents ?? []).map((t) => ({ ...t, host: h.host })))];
  const where = new Map<string, string[]>();
  const key = (t: { agent: string; task: string | null }) => (t.task ? `${t.agent}+${t.task}` : t.agent);
  for (const r of rows) where.set(key(r), [...(where.get(key(r)) ?? []), r.host ?? LOCAL]);
  return rows.map((r) => {
    const others = (where.get(key(r)) ?? []).filter((w) => w !== (r.host ?? LOCAL));
    return others.length ? { ...r, alsoOn: others } : r;
  });
}

/** What a view says of a host whose agents are not shown: `host box: the connection is retrying in 8 s (...); its agents (far) are not shown`. */
export function describeHostDown(h: Pick<HostAgentsView, 'host' | 'problem' | 'names'>): string {
  return `host ${h.host}: ${h.problem ?? 'not reached'}; its agents${h.names.length ? ` (${h.names.join(', ')})` : ''} are not shown`;
}

export type { HostAgentsView, HostTerminalView };
