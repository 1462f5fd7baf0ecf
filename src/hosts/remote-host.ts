// One host's supervisor, as the local supervisor runs it (issue 31; docs/hosts.md): over the host's
// connection (src/hosts/connection.ts) it checks the host as `host check` does, writes the remote
// project's jaggers.json (src/hosts/remote-project.ts), runs `jaggers up` there (window 0 of that host's
// own tmux server runs the supervisor), and forwards that supervisor's API socket to
// `.jaggers/hosts/<host>.sock` here, where the same API client talks to it. The connection is kept (and
// made again with backoff); the record of a started host lets the next local supervisor find it again.
// Once started, its supervisor is kept running (src/hosts/keeper.ts): started again there when it stops
// answering with the connection up.
import { isJaggersError, JaggersError } from '../errors.js';
import type { Clock } from '../panes/clock.js';
import type { ProjectFile } from '../project/project-file.js';
import { checkScript, judgeHost, parseCheckOutput, type CheckItem, type HostFacts } from './check.js';
import type { Backoff, ConnectionState, RunResult } from './connection.js';
import { describeSupervisor, SupervisorKeeper, type KeeperEvent, type SupervisorState } from './keeper.js';
import type { HostRecord } from './record.js';
import { agentsOn, remoteProjectFile, remoteRoot, remoteUpArgv, writeProjectScript } from './remote-project.js';
import type { HostSpec } from './schema.js';

/** What RemoteHost needs of a HostConnection. */
export interface HostLink {
  readonly state: ConnectionState;
  open(): void;
  close(): Promise<void>;
  on(listener: (s: ConnectionState) => void): () => void;
  run(argv: readonly string[], opts?: { timeoutMs?: number }): Promise<RunResult>;
  forward(local: string, remote: string): Promise<void>;
}

export interface RemoteHostPorts {
  name: string;
  spec: HostSpec;
  link: HostLink;
  /** The forwarded API socket's end here (`.jaggers/hosts/<host>.sock`). */
  localSocket: string;
  /** The API client on `localSocket`. */
  api: {
    call<T>(method: string, path: string, body?: unknown, opts?: { signal?: AbortSignal }): Promise<T>;
    /** Its event stream (work items for its agents follow their states there: src/work/remote-work.ts). */
    events?(path: string, onEvent: (e: { type: string; data: Record<string, unknown> }) => void, opts?: { signal?: AbortSignal }): Promise<void>;
  };
  /** This jaggers' version: the host's must be the same. */
  version: string;
  record: { read(): Promise<HostRecord | null>; write(r: HostRecord): Promise<void> };
  /** Make the local socket's folder (private) before the first forward. */
  prepare(): Promise<void>;
  /** Where the host's supervisor of the project `root` listens, by the host's facts. */
  remoteSocket(root: string, facts: HostFacts): string;
  /** Keep its supervisor running once started (src/hosts/keeper.ts): its clock and who is told of restarts; none: not kept. */
  keeper?: { clock: Clock; told(e: KeeperEvent): void; backoff?: Backoff; probeTimeoutMs?: number };
}

/** A window the host's supervisor opened, as `up` reports it here. */
export interface RemoteWindow {
  host: string;
  agent: string;
  terminalId: string;
  windowId: string;
  paneId: string;
  action: 'keep' | 'create' | 'respawn';
  launch: { sessionId: string | null; pin: string | null } | null;
}

export interface RemoteOpened {
  windows: RemoteWindow[];
  missing: { agent: string; command: string; path: string; install: string | null }[];
}

/** A host as `status` and the health show it. */
export interface HostView {
  name: string;
  ssh: string;
  /** The connection's state: connecting, connected, lost, retrying, closed. */
  state: ConnectionState['state'];
  /** The state in words: `retrying in 8 s (the connection dropped ...)`. */
  detail: string;
  /** The remote project's root there, once started. */
  root: string | null;
  /** Its supervisor as the local one keeps it (src/hosts/keeper.ts); absent while not kept (not started or found again yet). */
  supervisor?: { state: SupervisorState['state']; detail: string; restarts: number };
}

/** How long `jaggers up` there may take (its supervisor's start is bounded by 20 s, the agents' windows after). */
const REMOTE_UP_TIMEOUT_MS = 90_000;
/** How long the keeper waits for the host supervisor's health before it counts as not answering. */
const PROBE_TIMEOUT_MS = 10_000;

export function describeState(s: ConnectionState): string {
  switch (s.state) {
    case 'connecting':
      return s.attempt > 1 ? `connecting (attempt ${s.attempt})` : 'connecting';
    case 'connected':
      return 'connected';
    case 'lost':
      return `lost (${s.reason})`;
    case 'retrying':
      return `retrying in ${Math.ceil(s.inMs / 1000)} s (${s.reason})`;
    case 'closed':
      return 'closed';
  }
}

function codeOf(reason: string): 'E_SSH' | 'E_SSH_HOST_KEY' {
  return /host key/i.test(reason) ? 'E_SSH_HOST_KEY' : 'E_SSH';
}

function said(r: RunResult): string {
  const lines = `${r.stderr}\n${r.stdout}`.trim().split('\n');
  return lines.slice(-3).join(' | ').slice(0, 600);
}

/** What `jaggers up --json` there printed: its windows; a failure there is E_SSH with what it said. */
function parseRemoteUp(name: string, r: RunResult): RemoteOpened {
  let opened: { windows: Omit<RemoteWindow, 'host'>[]; missing: RemoteOpened['missing'] };
  try {
    opened = JSON.parse(r.stdout) as typeof opened;
    if (!Array.isArray(opened.windows)) throw new Error('no windows');
  } catch {
    throw new JaggersError('E_SSH', `host ${name}: \`jaggers up\` there failed (exit ${r.exitCode}): ${said(r)}`);
  }
  return {
    windows: opened.windows.map((w) => ({
      host: name,
      agent: w.agent,
      terminalId: w.terminalId,
      windowId: w.windowId,
      paneId: w.paneId,
      action: w.action,
      launch: w.launch ? { sessionId: w.launch.sessionId ?? null, pin: w.launch.pin ?? null } : null,
    })),
    missing: opened.missing ?? [],
  };
}

/** The agents a restart there opened or kept, in words: `far restarted in session 86f2d396-...`. */
export function describeOpened(o: RemoteOpened): string {
  const what = { keep: 'kept', create: 'opened', respawn: 'restarted' } as const;
  const parts = o.windows.map((w) => `${w.agent} ${what[w.action]}${w.launch?.sessionId ? ` in session ${w.launch.sessionId}` : ''}`);
  for (const m of o.missing) parts.push(`${m.agent} not started (${m.command} not found there)`);
  return parts.length ? parts.join(', ') : 'no agents';
}

export class RemoteHost {
  private root: string | null = null;
  /** The remote socket forwarded here: asked once (the connection makes it again after each reconnect). */
  private forwardedTo: string | null = null;
  /** Its connection was closed (a first connection that failed, or close()): a new RemoteHost is needed. */
  ended = false;
  /** Keeps its supervisor running once started (null: not kept, or let go for `down`). */
  private keeper: SupervisorKeeper | null = null;

  constructor(private readonly p: RemoteHostPorts) {}

  get name(): string {
    return this.p.name;
  }

  get api(): RemoteHostPorts['api'] {
    return this.p.api;
  }

  view(): HostView {
    const k = this.keeper;
    const v: HostView = { name: this.p.name, ssh: this.p.spec.ssh, state: this.p.link.state.state, detail: describeState(this.p.link.state), root: this.root };
    if (k) v.supervisor = { state: k.state.state, detail: describeSupervisor(k.state, k.lastRestart, this.p.keeper!.clock.now()), restarts: k.restartCount };
    return v;
  }

  /** Told each change of its connection's state (the views follow it: docs/web.md); returns the unsubscribe. */
  onState(listener: (v: HostView) => void): () => void {
    return this.p.link.on(() => listener(this.view()));
  }

  /**
   * Open the connection (kept from then on) and resolve once connected; the first attempt failing is an
   * error with ssh's reason (the connection goes on retrying only for a host started before).
   */
  async connect(): Promise<void> {
    const link = this.p.link;
    if (link.state.state === 'connected') return;
    const result = new Promise<void>((resolve, reject) => {
      const off = link.on((s) => {
        if (s.state === 'connected') resolve();
        else if (s.state === 'retrying') reject(new JaggersError(codeOf(s.reason), s.reason));
        else if (s.state === 'closed') reject(new JaggersError('E_SSH', `host ${this.p.name}: the connection was closed`));
        else return;
        off();
      });
    });
    link.open();
    await result;
  }

  /** The checks of `host check` there: every failing one, in one error. */
  async check(commands: readonly string[]): Promise<HostFacts> {
    const r = await this.p.link.run(['sh', '-c', checkScript({ dir: this.p.spec.dir, commands })], { timeoutMs: 60_000 });
    const facts = parseCheckOutput(r.stdout);
    if (!facts)
      throw new JaggersError(
        'E_SSH',
        `host ${this.p.name} (${this.p.spec.ssh}): logged in, but the check did not answer (exit ${r.exitCode}: ${said(r)}); is the login shell there a POSIX shell?`,
      );
    const failed: CheckItem[] = judgeHost(facts, this.p.version, '').filter((i) => !i.ok);
    if (failed.length)
      throw new JaggersError(
        'E_HOST_NOT_READY',
        `host ${this.p.name} (${this.p.spec.ssh}) is not ready: ${failed.map((i) => `${i.what}: ${i.detail}`).join('; ')} (\`jaggers host check ${this.p.name}\` lists it all)`,
      );
    return facts;
  }

  /**
   * Start (or find) the host's supervisor and open its agents: check the host, write the remote
   * project's jaggers.json, run `jaggers up` there, forward its API socket here and ask it once.
   */
  async up(project: ProjectFile, session: string, commands: readonly string[]): Promise<RemoteOpened> {
    const { name, link } = this.p;
    const started = await this.p.record.read();
    try {
      await this.connect();
    } catch (e) {
      // Never started: nothing there to keep a connection for.
      if (!started) await this.close();
      throw e;
    }
    const facts = await this.check(commands);
    const root = remoteRoot(facts.dir.path, session);
    const text = JSON.stringify(remoteProjectFile(project, name, session, facts.dir.path), null, 2);
    const wrote = await link.run(['sh', '-c', writeProjectScript(root, text)], { timeoutMs: 30_000 });
    if (wrote.exitCode !== 0) throw new JaggersError('E_SSH', `host ${name}: could not write ${root}/jaggers.json there: ${said(wrote)}`);
    const opened = parseRemoteUp(name, await link.run(remoteUpArgv(root), { timeoutMs: REMOTE_UP_TIMEOUT_MS }));
    const socket = this.p.remoteSocket(root, facts);
    // Forwarded once: asking the master again for the same socket would leave nobody listening on it.
    if (this.forwardedTo !== socket) {
      await this.p.prepare();
      await link.forward(this.p.localSocket, socket);
      this.forwardedTo = socket;
    }
    this.root = root;
    await this.p.record.write({ root, socket, startedAt: new Date().toISOString(), agents: agentsOn(project, name).map((a) => a.name) });
    this.keep();
    await this.p.api.call('GET', '/v1/health');
    return opened;
  }

  /**
   * A host the last supervisor started (its record): connect again and forward its socket, nothing
   * started; the connection retries with backoff while the host cannot be reached.
   */
  async resume(): Promise<boolean> {
    const rec = await this.p.record.read();
    if (!rec) return false;
    this.root = rec.root;
    await this.p.prepare();
    await this.p.link.forward(this.p.localSocket, rec.socket);
    this.forwardedTo = rec.socket;
    this.p.link.open();
    this.keep();
    return true;
  }

  /** Keep its supervisor running from now on (once; after `up` or `resume`). */
  private keep(): void {
    const k = this.p.keeper;
    if (!k || this.keeper || this.ended) return;
    const api = this.p.api;
    const probeMs = k.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
    this.keeper = new SupervisorKeeper({
      name: this.p.name,
      link: this.p.link,
      clock: k.clock,
      told: k.told,
      ...(k.backoff ? { backoff: k.backoff } : {}),
      probe: async (signal) => {
        try {
          await api.call('GET', '/v1/health', undefined, { signal: AbortSignal.any([signal, AbortSignal.timeout(probeMs)]) });
          return null;
        } catch (e) {
          if (signal.aborted) return 'not asked: the keeper stopped';
          if (isJaggersError(e)) return e.code === 'E_SUPERVISOR_DOWN' || e.code === 'E_SUPERVISOR_STOPPING' ? e.message : null;
          return (e as Error).name === 'AbortError' || (e as Error).name === 'TimeoutError' ? `no answer within ${probeMs / 1000} s` : (e as Error).message;
        }
      },
      // Only `hello` (once per supervisor start): the stream is quiet until it ends.
      watch: (signal) =>
        api.events?.('/v1/events?types=hello', () => {}, { signal }) ?? new Promise((r) => signal.addEventListener('abort', () => r(), { once: true })),
      restart: async () => {
        if (this.root === null) throw new JaggersError('E_SSH', `host ${this.p.name}: no remote project recorded to start again`);
        return describeOpened(parseRemoteUp(this.p.name, await this.p.link.run(remoteUpArgv(this.root), { timeoutMs: REMOTE_UP_TIMEOUT_MS })));
      },
    });
    this.keeper.start();
  }

  /** Stop keeping its supervisor (`down` stops it there next); resolves once a restart in flight ended. */
  async letGo(): Promise<void> {
    const k = this.keeper;
    this.keeper = null;
    await k?.close();
  }

  async close(): Promise<void> {
    this.ended = true;
    await this.letGo();
    return this.p.link.close();
  }
}
