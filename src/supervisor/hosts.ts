// The local supervisor's hosts (src/hosts/; issue 31; docs/hosts.md): one RemoteHost per host of jaggers.json that
// `up` started agents on, each on its own kept connection. Built from jaggers.json as it is when asked
// (a host whose entry changed gets a new connection); closed with the supervisor (the hosts' own
// supervisors go on: `jaggers down` stops them). A host's supervisor that stops answering with its
// connection up is started again there (src/hosts/keeper.ts), and told (`told`).
import path from 'node:path';
import { ApiClient } from '../api/client.js';
import { startedHosts } from '../api/hosts.js';
import { apiSocketPathOn, hostSocketPath } from '../api/paths.js';
import { JaggersError } from '../errors.js';
import { writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { Log } from '../logger.js';
import { realClock, type Clock } from '../panes/clock.js';
import type { KeeperEvent } from '../hosts/keeper.js';
import type { AgentSpec, ProjectFile } from '../project/project-file.js';
import { HostConnection } from '../hosts/connection.js';
import type { HostSource } from '../hosts/host-agents.js';
import { hostRecordPath, readHostRecord } from '../hosts/record.js';
import { agentsOn } from '../hosts/remote-project.js';
import { describeState, RemoteHost, type HostLink, type HostView, type RemoteOpened } from '../hosts/remote-host.js';
import type { HostSpec } from '../hosts/schema.js';
import { controlPathFor, prepareControlPath, sshPorts } from '../hosts/ssh-master.js';
import { sshSettings } from '../hosts/ssh.js';

export interface HostsPorts {
  jaggersDir: string;
  session: string;
  env: NodeJS.ProcessEnv;
  version: string;
  log: Log;
  /** The command a profile runs (the host must have it). */
  commandOf(profile: string): Promise<string>;
  /** A host's connection changed state (work items for its agents wait for it, docs/hosts.md). */
  changed?(name: string): void;
  /** A host's connection: the real one runs ssh (tests hand in fakes). */
  link?(name: string, spec: HostSpec): Promise<HostLink>;
  /** A host's supervisor started again, or a restart that failed (docs/hosts.md, Faults). */
  told?(e: KeeperEvent): void;
  /** The keepers' clock (default the real one). */
  clock?: Clock;
}

async function sshLink(p: HostsPorts, name: string, spec: HostSpec): Promise<HostLink> {
  const controlPath = controlPathFor(p.jaggersDir, name);
  await prepareControlPath(controlPath);
  const ports = sshPorts({ name, host: spec, settings: sshSettings(p.env), controlPath, env: p.env });
  return new HostConnection(name, ports, realClock);
}

export class Hosts {
  /** Each host's RemoteHost as it is being made (two callers at once get the same one), by its entry's JSON. */
  private readonly hosts = new Map<string, { spec: string; host: Promise<RemoteHost> }>();
  /** The ones made, for views(). */
  private readonly made = new Map<string, RemoteHost>();
  /** Each made host's API client on its forwarded socket (for sources()). */
  private readonly clients = new Map<string, ApiClient>();

  constructor(private readonly p: HostsPorts) {}

  private host(name: string, project: ProjectFile): Promise<RemoteHost> {
    const spec = project.hosts && Object.hasOwn(project.hosts, name) ? project.hosts[name] : undefined;
    if (!spec) return Promise.reject(new JaggersError('E_HOST_UNKNOWN', `no host ${JSON.stringify(name)} in jaggers.json`));
    const key = JSON.stringify(spec);
    const had = this.hosts.get(name);
    if (had && had.spec === key) return had.host;
    const host = (async () => {
      if (had) await (await had.host.catch(() => null))?.close();
      const link = await (this.p.link ?? ((n, s) => sshLink(this.p, n, s)))(name, spec);
      link.on((s) => {
        this.p.log.info({ host: name, state: s.state }, `host ${name}: ${describeState(s)}`);
        this.p.changed?.(name);
      });
      const localSocket = hostSocketPath(this.p.jaggersDir, name);
      const api = new ApiClient({ socketPath: localSocket }, this.p.session);
      this.clients.set(name, api);
      const made = new RemoteHost({
        name,
        spec,
        link,
        localSocket,
        api,
        version: this.p.version,
        record: {
          read: () => readHostRecord(this.p.jaggersDir, name),
          write: async (r) => {
            await ensurePrivateFolder(path.dirname(hostRecordPath(this.p.jaggersDir, name)));
            await writeFileAtomic(hostRecordPath(this.p.jaggersDir, name), `${JSON.stringify(r)}\n`);
          },
        },
        prepare: () => ensurePrivateFolder(path.dirname(localSocket)),
        // Where the host's jaggers listens: its apiSocketPath as that host has it (its temp folder and uid).
        remoteSocket: (root, facts) => apiSocketPathOn(path.posix.join(root, '.jaggers'), facts.tmp, facts.uid ?? 'u', path.posix),
        keeper: {
          clock: this.p.clock ?? realClock,
          told: (e) => {
            const line = `host ${e.host}: supervisor ${e.what} (was: ${e.was}): ${e.detail}`;
            if (e.what === 'restart-failed') this.p.log.warn({ host: e.host, attempt: e.attempt }, line);
            else this.p.log.info({ host: e.host, attempt: e.attempt }, line);
            this.p.told?.(e);
            // Items for its agents that waited for it go on now.
            if (e.what === 'restarted') this.p.changed?.(e.host);
          },
        },
      });
      this.made.set(name, made);
      return made;
    })();
    this.hosts.set(name, { spec: key, host });
    return host;
  }

  /** Start the agents `specs` names on their hosts (each host's whole team there, as `up` does); the failures in one error. */
  async up(specs: readonly AgentSpec[], project: ProjectFile): Promise<RemoteOpened> {
    const names = [...new Set(specs.flatMap((s) => (s.host === undefined ? [] : [s.host])))];
    const results = await Promise.allSettled(
      names.map(async (name) => {
        const commands = new Set<string>();
        for (const a of agentsOn(project, name)) commands.add(await this.p.commandOf(a.profile));
        const host = await this.host(name, project);
        try {
          return await host.up(project, this.p.session, [...commands]);
        } finally {
          // A host whose first connection failed is closed: the next `up` makes a new one.
          if (host.ended && this.made.get(name) === host) {
            this.hosts.delete(name);
            this.made.delete(name);
          }
        }
      }),
    );
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    if (failed.length) {
      const code = failed[0] instanceof JaggersError ? failed[0].code : 'E_SSH';
      throw new JaggersError(code, failed.map((e) => e.message).join('\n'));
    }
    const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    return { windows: ok.flatMap((o) => o.windows), missing: ok.flatMap((o) => o.missing) };
  }

  /** On start: the hosts the last supervisor started (their records) are connected again, nothing started. */
  async resumeAll(project: ProjectFile | null): Promise<void> {
    for (const name of Object.keys(project?.hosts ?? {})) {
      if (agentsOn(project, name).length === 0) continue;
      if (!(await readHostRecord(this.p.jaggersDir, name))) continue;
      try {
        const h = await this.host(name, project!);
        await h.resume();
      } catch (e) {
        this.p.log.warn({ host: name, err: (e as Error).message }, `host ${name}: cannot connect again`);
      }
    }
  }

  /** A host this supervisor keeps a connection to: its supervisor's API (through the forwarded socket) and its state; null: none. */
  reach(name: string): { api: RemoteHost['api']; view: HostView } | null {
    const h = this.made.get(name);
    return h && !h.ended ? { api: h.api, view: h.view() } : null;
  }

  /** The hosts this supervisor keeps a connection to. */
  views(): HostView[] {
    return [...this.made.values()].map((h) => h.view());
  }

  /** Each host as the views ask it (src/hosts/host-agents.ts): the dashboard's and MCP's host agents. */
  sources(): HostSource[] {
    return [...this.made.values()].flatMap((h) => {
      const api = this.clients.get(h.name);
      if (!api) return [];
      return [
        {
          name: h.name,
          view: () => h.view(),
          recorded: async () => (await readHostRecord(this.p.jaggersDir, h.name))?.agents ?? [],
          api,
          socketPath: hostSocketPath(this.p.jaggersDir, h.name),
          session: this.p.session,
          onState: (fn: (v: HostView) => void) => h.onState(fn),
        },
      ];
    });
  }

  /** The hosts whose records say `up` started agents there, but that this supervisor keeps no connection to (yet). */
  unkept(): { host: string; agents: string[] }[] {
    return startedHosts(this.p.jaggersDir)
      .filter((h) => !this.made.has(h.host))
      .map((h) => ({ host: h.host, agents: h.agents }));
  }

  /**
   * Stop keeping the hosts' supervisors running (`down` stops them there next: a supervisor it ends is not
   * started again); resolves once a restart in flight has ended. The connections stay.
   */
  async release(): Promise<string[]> {
    const all = [...this.made.values()];
    await Promise.all(all.map((h) => h.letGo()));
    return all.map((h) => h.name);
  }

  async close(): Promise<void> {
    const all = [...this.hosts.values()];
    this.hosts.clear();
    this.made.clear();
    await Promise.all(all.map(async (h) => (await h.host.catch(() => null))?.close().catch(() => {})));
  }
}
