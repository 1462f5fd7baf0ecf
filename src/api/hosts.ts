// Agents on other hosts, for client commands (docs/hosts.md): which host an agent is on (the records
// the local supervisor keeps in `.jaggers/hosts/<host>.json`), and that host's supervisor's API through
// the socket forwarded to `.jaggers/hosts/<host>.sock`. Light: the fast path of status, why, capture, send.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { isConnectFailure, type ApiClient } from './client.js';
import { hostApi, withApi } from './connect.js';
import type { HealthView } from './types.js';

export interface HostEntry {
  host: string;
  /** The remote project's root there. */
  root: string;
  agents: string[];
}

/** The hosts `up` started agents on (their records), by name; none: []. */
export function startedHosts(jaggersDir: string): HostEntry[] {
  const dir = path.join(jaggersDir, 'hosts');
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  return files.flatMap((f) => {
    try {
      const r = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { root?: unknown; agents?: unknown };
      if (typeof r.root !== 'string') return [];
      const agents = Array.isArray(r.agents) ? r.agents.filter((a): a is string => typeof a === 'string') : [];
      return [{ host: f.slice(0, -'.json'.length), root: r.root, agents }];
    } catch {
      return [];
    }
  });
}

/** The host `agent` runs on (`far`, or a task's window `far+t-1`), or null: this machine. */
export function hostOfAgent(ctx: Pick<Context, 'jaggersDir'>, agent: string): HostEntry | null {
  const name = agent.split('+')[0]!;
  return startedHosts(ctx.jaggersDir).find((h) => h.agents.includes(name)) ?? null;
}

/** The local supervisor's word on a host's connection (`retrying in 8 s (...)`), or null when it does not say. */
async function connectionOf(ctx: Context, host: string): Promise<string | null> {
  const h = await withApi(ctx, (api) => api.call<HealthView>('GET', '/v1/health'), { readOnly: true }).catch(() => null);
  return h?.hosts?.find((x) => x.name === host)?.detail ?? null;
}

/**
 * Run `fn` against the supervisor of `host`. Nobody answering there is E_SSH naming the host and the
 * connection's state as the local supervisor has it (the local one is started when it is not running:
 * it connects to the host again).
 */
export async function withHostApi<T>(ctx: Context, host: string, fn: (api: ApiClient) => Promise<T>): Promise<T> {
  const api = hostApi(ctx, host);
  try {
    return await fn(api);
  } catch (e) {
    if (!isConnectFailure(e)) throw e;
    const state = await connectionOf(ctx, host);
    // A local supervisor started anew (or a connection made again) as we asked: its forward is there now.
    if (state === 'connected') return fn(api);
    throw new JaggersError(
      'E_SSH',
      `host ${host}: its supervisor does not answer through ${api.where}${state ? ` (the connection is ${state})` : ' (the local supervisor keeps no connection to it: run `jaggers up`)'}`,
    );
  }
}

/** Run `fn` against the supervisor that owns `agent`: its host's, or the local one. */
export function withAgentApi<T>(ctx: Context, agent: string, fn: (api: ApiClient) => Promise<T>, o: { readOnly?: boolean } = {}): Promise<T> {
  const on = hostOfAgent(ctx, agent);
  return on ? withHostApi(ctx, on.host, fn) : withApi(ctx, fn, o);
}
