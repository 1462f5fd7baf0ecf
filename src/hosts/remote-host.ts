// One host's supervisor, as the local supervisor runs it (issue 31; docs/hosts.md): over the host's
// connection (src/hosts/connection.ts) it checks the host as `host check` does, writes the remote
// project's jaggers.json (src/hosts/remote-project.ts), runs `jaggers up` there (window 0 of that host's
// own tmux server runs `jaggers supervise`), and forwards that supervisor's API socket to
// `.jaggers/hosts/<host>.sock` here, where the same API client talks to it. The connection is kept (and
// made again with backoff); the record of a started host lets the next local supervisor find it again.
import { JaggersError } from '../errors.js';
import type { ProjectFile } from '../project/project-file.js';
import { checkScript, judgeHost, parseCheckOutput, type CheckItem, type HostFacts } from './check.js';
import type { ConnectionState, RunResult } from './connection.js';
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
}

/** How long `jaggers up` there may take (its supervisor's start is bounded by 20 s, the agents' windows after). */
const REMOTE_UP_TIMEOUT_MS = 90_000;

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

export class RemoteHost {
  private root: string | null = null;
  /** The remote socket forwarded here: asked once (the connection makes it again after each reconnect). */
  private forwardedTo: string | null = null;
  /** Its connection was closed (a first connection that failed, or close()): a new RemoteHost is needed. */
  ended = false;

  constructor(private readonly p: RemoteHostPorts) {}

  get name(): string {
    return this.p.name;
  }

  get api(): RemoteHostPorts['api'] {
    return this.p.api;
  }

  view(): HostView {
    return { name: this.p.name, ssh: this.p.spec.ssh, state: this.p.link.state.state, detail: describeState(this.p.link.state), root: this.root };
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
    const r = await link.run(remoteUpArgv(root), { timeoutMs: REMOTE_UP_TIMEOUT_MS });
    let opened: { windows: Omit<RemoteWindow, 'host'>[]; missing: RemoteOpened['missing'] };
    try {
      opened = JSON.parse(r.stdout) as typeof opened;
      if (!Array.isArray(opened.windows)) throw new Error('no windows');
    } catch {
      throw new JaggersError('E_SSH', `host ${name}: \`jaggers up\` there failed (exit ${r.exitCode}): ${said(r)}`);
    }
    const socket = this.p.remoteSocket(root, facts);
    // Forwarded once: asking the master again for the same socket would leave nobody listening on it.
    if (this.forwardedTo !== socket) {
      await this.p.prepare();
      await link.forward(this.p.localSocket, socket);
      this.forwardedTo = socket;
    }
    this.root = root;
    await this.p.record.write({ root, socket, startedAt: new Date().toISOString(), agents: agentsOn(project, name).map((a) => a.name) });
    await this.p.api.call('GET', '/v1/health');
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
    return true;
  }

  close(): Promise<void> {
    this.ended = true;
    return this.p.link.close();
  }
}
