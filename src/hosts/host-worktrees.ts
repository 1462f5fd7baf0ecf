// Worktrees made on other hosts (docs/hosts.md, Worktrees on a host), for the local supervisor's
// `/v1/worktrees` routes, so the commands, MCP and the dashboard reach them as they reach this machine's:
// the list is this machine's then each host's (with `host`; a host that cannot be asked is left out),
// and `diff`, `merge` and `discard` of an agent on a host are asked of that host's
// supervisor through its forwarded socket.
import type { WorktreeView } from '../agents/isolation.js';
import { JaggersError, isJaggersError } from '../errors.js';
import { HOST_ASK_MS, type HostSource } from './host-agents.js';

type Api = HostSource['api'];

/** This machine's worktrees, and the host agents' through their hosts' supervisors. */
export interface HostWorktreesPorts {
  /** This machine's list (E_NOT_A_REPO when the project is outside git). */
  local(): Promise<WorktreeView[]>;
  hosts(): readonly HostSource[];
  /** The host jaggers.json puts `agent` on, or null: this machine. */
  hostOf(agent: string): Promise<string | null>;
}

const enc = encodeURIComponent;

export class HostWorktrees {
  constructor(private readonly p: HostWorktreesPorts) {}

  /**
   * This machine's worktrees, then each connected host's, each with its `host`. A host down or not
   * answering is left out (its connection says why: health, status); a project outside git here lists
   * its hosts' all the same.
   */
  async list(): Promise<WorktreeView[]> {
    const hosts = this.p.hosts();
    const here = await this.p.local().catch((e: unknown) => {
      if (hosts.length > 0 && isJaggersError(e) && e.code === 'E_NOT_A_REPO') return [];
      throw e;
    });
    if (hosts.length === 0) return here;
    const there = await Promise.all(
      hosts.map(async (h) => {
        const v = h.view();
        if (v.state !== 'connected') return [];
        const list = await h.api
          .call<WorktreeView[]>('GET', '/v1/worktrees', undefined, { signal: AbortSignal.timeout(HOST_ASK_MS) })
          .catch(() => [] as WorktreeView[]);
        return list.map((w) => ({ ...w, host: h.name }));
      }),
    );
    return [...here, ...there.flat()];
  }

  /**
   * `gc` here, then on each connected host's supervisor (its agents' and jobs' worktrees are there), each
   * removed or kept worktree of a host with its `host`. A host down or not answering is left out, as in
   * `list`; a project outside git here gc's its hosts' all the same.
   */
  async gc<R extends { removed: object[]; kept: object[] }>(local: () => Promise<R>, force: boolean): Promise<R> {
    const hosts = this.p.hosts();
    const here = await local().catch((e: unknown) => {
      if (hosts.length > 0 && isJaggersError(e) && e.code === 'E_NOT_A_REPO') return { removed: [], kept: [] } as unknown as R;
      throw e;
    });
    for (const h of hosts) {
      if (h.view().state !== 'connected') continue;
      const there = await h.api.call<R>('POST', '/v1/worktrees/gc', { force }).catch(() => null);
      if (!there) continue;
      here.removed.push(...there.removed.map((w) => ({ ...w, host: h.name })));
      here.kept.push(...there.kept.map((w) => ({ ...w, host: h.name })));
    }
    return here;
  }

  /**
   * Run `path` on the supervisor of the host `name` (an agent's) is on, with `host` added to its answer;
   * null when `name` is not an agent on a host (this machine's business).
   */
  async onHost<T extends object>(name: string, method: 'GET' | 'POST', path: (n: string) => string, body?: unknown): Promise<(T & { host: string }) | null> {
    const host = await this.p.hostOf(name);
    if (!host) return null;
    const h = this.p.hosts().find((x) => x.name === host);
    if (!h) throw new JaggersError('E_SSH', `${name} is an agent on host ${host}, and this supervisor keeps no connection to it (run \`jaggers up\`)`);
    const v = h.view();
    if (v.state !== 'connected') throw new JaggersError('E_SSH', `${name} is an agent on host ${host}: the connection is ${v.detail}`);
    const api: Api = h.api;
    const r = await api.call<T>(method, path(enc(name)), body);
    return { ...r, host };
  }
}
