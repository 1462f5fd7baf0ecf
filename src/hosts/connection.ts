// One host's SSH connection, kept up (issue 31; docs/hosts.md): a master connection that commands and
// forwarded sockets share, watched for its end, and made again with backoff when it drops. Every change
// of state is an event (connecting, connected, lost, retrying in N ms, closed). Pure over its ports:
// the ssh processes (src/hosts/ssh-master.ts) and the clock are handed in, so tests use fakes and a
// simulated clock.
import type { Clock, TimerHandle } from '../panes/clock.js';
import { JaggersError } from '../errors.js';

export type ConnectionState =
  | { state: 'connecting'; attempt: number }
  | { state: 'connected'; attempt: number }
  | { state: 'lost'; reason: string }
  | { state: 'retrying'; inMs: number; attempt: number; reason: string }
  | { state: 'closed' };

/** The master connection's process, as the connection sees it. */
export interface MasterProcess {
  /** Settles once: resolves when the connection is up (logged in, the remote shell answered), rejects with why not. */
  ready: Promise<void>;
  /** Resolves when the process has ended, with why (ssh's last words, or how it was ended). */
  exited: Promise<{ reason: string }>;
  /** End it (SIGTERM, then SIGKILL); `exited` resolves after. */
  kill(): void;
}

/** What one ssh run printed and how it ended. */
export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** A long-lived remote command (started over the master): its streams and its end. */
export interface RemoteProcess {
  stdin: NodeJS.WritableStream | null;
  stdout: NodeJS.ReadableStream | null;
  stderr: NodeJS.ReadableStream | null;
  /** Resolves when it has ended (its remote command ended, or the connection under it). */
  exited: Promise<RunResult>;
  kill(): void;
}

/** The ssh side of one host: the real one runs the system's ssh on a control socket (src/hosts/ssh-master.ts). */
export interface SshPorts {
  startMaster(): MasterProcess;
  /** Run argv on the host through the master, to its end. */
  run(argv: readonly string[], opts?: { timeoutMs?: number }): Promise<RunResult>;
  /** Start argv on the host through the master, its stdio piped. */
  start(argv: readonly string[]): RemoteProcess;
  /** Ask the master to forward the local unix socket `local` to `remote` on the host (`ssh -O forward -L`). */
  forward(local: string, remote: string): Promise<void>;
  /** Ask the master to stop that forwarding (`ssh -O cancel`) and remove the local socket. */
  cancel(local: string, remote: string): Promise<void>;
  /** Remove a forward's local socket file left behind by a master that has ended. */
  release(local: string): void;
}

export interface Backoff {
  /** The first retry's wait; each next one `factor` times the last, up to `maxMs`. */
  initialMs: number;
  factor: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, factor: 2, maxMs: 30_000 };

/**
 * How long an attempt may take to be connected (login, the remote shell's answer, the forwards) before
 * its master is ended and the attempt counts as failed: ssh's ConnectTimeout bounds only the TCP connect.
 */
export const DEFAULT_READY_TIMEOUT_MS = 30_000;

/** How long the `attempt`th retry in a row waits (1-based). */
export function backoffDelay(b: Backoff, attempt: number): number {
  return Math.min(b.maxMs, Math.round(b.initialMs * b.factor ** Math.max(0, attempt - 1)));
}

export type StateListener = (s: ConnectionState) => void;

export class HostConnection {
  private current: ConnectionState = { state: 'closed' };
  private started = false;
  private closing = false;
  private master: MasterProcess | null = null;
  private timer: TimerHandle | null = null;
  /** Failed attempts since the last time it was connected. */
  private failures = 0;
  private readonly listeners = new Set<StateListener>();
  /** Forwards to keep: made again after every reconnect. */
  private readonly forwards = new Map<string, string>();

  constructor(
    /** The host's name, for messages. */
    readonly name: string,
    private readonly ports: SshPorts,
    private readonly clock: Clock,
    private readonly backoff: Backoff = DEFAULT_BACKOFF,
    private readonly readyTimeoutMs = DEFAULT_READY_TIMEOUT_MS,
  ) {}

  get state(): ConnectionState {
    return this.current;
  }

  /** Listen to every change of state; returns the way to stop. */
  on(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Connect, and keep connecting: failures and drops are retried until close(). */
  open(): void {
    if (this.started) return;
    this.started = true;
    this.connect();
  }

  /** Resolves when connected (now or later); rejects when closed first. */
  whenConnected(): Promise<void> {
    if (this.current.state === 'connected') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = this.on((s) => {
        if (s.state === 'connected') resolve();
        else if (s.state === 'closed') reject(new JaggersError('E_SSH', `host ${this.name}: the connection was closed`));
        else return;
        off();
      });
    });
  }

  /** Run argv there now; not connected is an error naming the state (work waits on the caller's side, not here). */
  async run(argv: readonly string[], opts?: { timeoutMs?: number }): Promise<RunResult> {
    this.mustBeConnected('run a command');
    return this.ports.run(argv, opts);
  }

  /** Start a long-lived command there (`tmux -C`, a supervisor): it ends with the connection. */
  start(argv: readonly string[]): RemoteProcess {
    this.mustBeConnected('start a command');
    return this.ports.start(argv);
  }

  /** Forward local unix socket `local` to `remote` there, now if connected and again after each reconnect. */
  async forward(local: string, remote: string): Promise<void> {
    this.forwards.set(local, remote);
    if (this.current.state === 'connected') await this.ports.forward(local, remote);
  }

  async unforward(local: string): Promise<void> {
    const remote = this.forwards.get(local);
    this.forwards.delete(local);
    if (remote !== undefined && this.current.state === 'connected') await this.ports.cancel(local, remote).catch(() => {});
  }

  /** Stop retrying and end the master; resolves when it has ended. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const m = this.master;
    this.master = null;
    if (m) {
      m.kill();
      await m.exited;
    }
    for (const local of this.forwards.keys()) this.ports.release(local);
    this.set({ state: 'closed' });
  }

  private mustBeConnected(what: string): void {
    const s = this.current;
    if (s.state === 'connected') return;
    const why = s.state === 'retrying' ? `retrying in ${Math.ceil(s.inMs / 1000)} s (${s.reason})` : s.state === 'lost' ? `lost (${s.reason})` : s.state;
    throw new JaggersError('E_SSH', `host ${this.name}: cannot ${what}: the connection is ${why}`);
  }

  private set(s: ConnectionState): void {
    this.current = s;
    for (const l of [...this.listeners]) l(s);
  }

  private connect(): void {
    if (this.closing) return;
    const attempt = this.failures + 1;
    this.set({ state: 'connecting', attempt });
    const m = this.ports.startMaster();
    this.master = m;
    let up = false;
    let why: string | null = null;
    const deadline = this.clock.setTimeout(() => {
      if (this.master !== m || up) return;
      why = `host ${this.name}: not connected within ${Math.round(this.readyTimeoutMs / 1000)} s`;
      m.kill();
    }, this.readyTimeoutMs);
    m.ready.then(
      async () => {
        if (this.master !== m || this.closing) return;
        // The forwards the last connection had, again, before it counts as connected; one that fails
        // now is tried again after the next reconnect.
        for (const [local, remote] of this.forwards) await this.ports.forward(local, remote).catch(() => {});
        if (this.master !== m || this.closing) return;
        up = true;
        this.clock.clearTimeout(deadline);
        this.failures = 0;
        this.set({ state: 'connected', attempt });
      },
      () => {},
    );
    void m.exited.then((ended) => {
      this.clock.clearTimeout(deadline);
      if (this.master !== m || this.closing) return;
      const reason = why ?? ended.reason;
      this.master = null;
      if (up) this.set({ state: 'lost', reason });
      this.failures++;
      const inMs = backoffDelay(this.backoff, this.failures);
      this.set({ state: 'retrying', inMs, attempt: this.failures, reason });
      this.timer = this.clock.setTimeout(() => {
        this.timer = null;
        this.connect();
      }, inMs);
    });
  }
}
