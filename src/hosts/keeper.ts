// A host's supervisor kept running (issue 31; docs/hosts.md, Faults): while the host's connection is up,
// the local supervisor holds an event stream of the host's supervisor open through the forwarded socket;
// when that stream ends with the connection still up (the supervisor was killed, its tmux server died,
// the host rebooted and came back), or the connection comes back, it asks the supervisor's health, and
// one that does not answer is started again there (`jaggers up` in the remote project: the host's own
// registry, so its agents come back in their pinned conversations and nothing runs twice), waiting 1 s
// before the first restart and twice as long before each next one in a row, up to 30 s. Every restart is
// told (an event). Pure over its ports: the connection, the API asked, the restart and the clock are
// handed in, so tests use fakes and a simulated clock.
import type { Clock, TimerHandle } from '../panes/clock.js';
import { backoffDelay, DEFAULT_BACKOFF, type Backoff, type ConnectionState } from './connection.js';

/** The host's supervisor as the keeper sees it. */
export type SupervisorState =
  /** Not asked yet, or its connection is down (nothing can be known through it). */
  | { state: 'unknown' }
  | { state: 'answering' }
  /** It did not answer with the connection up: asked again, and started again if still silent, at `at`. */
  | { state: 'not-answering'; reason: string; at: number; attempt: number }
  | { state: 'restarting'; reason: string; attempt: number }
  | { state: 'stopped' };

/** What the keeper tells: a restart begun, done (it answers again) or failed (tried again after the backoff). */
export interface KeeperEvent {
  host: string;
  what: 'restarting' | 'restarted' | 'restart-failed';
  /** Why it was started again: how it did not answer. */
  was: string;
  /** What the restart said (the agents there) or why it failed. */
  detail: string;
  /** Restarts in a row, this one included. */
  attempt: number;
}

export interface KeeperPorts {
  name: string;
  link: { readonly state: ConnectionState; on(listener: (s: ConnectionState) => void): () => void };
  /** Ask the supervisor there once: null when it answers, else how it did not (nobody at the socket, the stream cut, no answer in time). */
  probe(signal: AbortSignal): Promise<string | null>;
  /** Hold its event stream open until it ends (the supervisor gone, the connection dropped) or `signal` aborts. */
  watch(signal: AbortSignal): Promise<void>;
  /** Start it again there; resolves with what it said (the agents it opened or kept), rejects with why not. */
  restart(): Promise<string>;
  clock: Clock;
  told(e: KeeperEvent): void;
  backoff?: Backoff;
}

/** The last restart that brought it back, for the views. */
export interface LastRestart {
  at: number;
  was: string;
  detail: string;
}

export class SupervisorKeeper {
  private current: SupervisorState = { state: 'unknown' };
  private readonly stop = new AbortController();
  private loop: Promise<void> | null = null;
  /** Restarts in a row: reset once it stayed up for the backoff's longest wait. */
  private streak = 0;
  private last: LastRestart | null = null;
  private restarts = 0;

  constructor(private readonly p: KeeperPorts) {}

  get state(): SupervisorState {
    return this.current;
  }

  get lastRestart(): LastRestart | null {
    return this.last;
  }

  /** How many times it was started again (successfully) by this keeper. */
  get restartCount(): number {
    return this.restarts;
  }

  /** Start keeping it (once). */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stop keeping it: resolves once a restart in flight has ended (nothing is started after). */
  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    this.current = { state: 'stopped' };
  }

  private get backoff(): Backoff {
    return this.p.backoff ?? DEFAULT_BACKOFF;
  }

  private connected(): boolean {
    return this.p.link.state.state === 'connected';
  }

  private async run(): Promise<void> {
    const signal = this.stop.signal;
    /** The last stream ended at once: one that keeps doing so while the supervisor answers is not asked about in a tight loop. */
    let quick = false;
    while (!signal.aborted) {
      if (!this.connected()) {
        this.current = { state: 'unknown' };
        await this.until((s) => s.state === 'connected');
        continue;
      }
      const why = await this.p.probe(signal);
      if (signal.aborted) return;
      if (why === null) {
        this.current = { state: 'answering' };
        if (quick && !(await this.pause(this.backoff.initialMs))) continue;
        const since = this.p.clock.now();
        await this.p.watch(signal).catch(() => {});
        if (signal.aborted) return;
        const lasted = this.p.clock.now() - since;
        // Up for a while: the next restart is the first of a new row.
        if (lasted >= this.backoff.maxMs) this.streak = 0;
        quick = lasted < this.backoff.initialMs;
        continue;
      }
      quick = false;
      // The connection dropped under it: not the supervisor's fault; asked again once it is back.
      if (!this.connected()) continue;
      this.streak++;
      const inMs = backoffDelay(this.backoff, this.streak);
      this.current = { state: 'not-answering', reason: why, at: this.p.clock.now() + inMs, attempt: this.streak };
      if (!(await this.pause(inMs))) continue;
      // Asked again before starting it: it may have been booting, or someone started it meanwhile.
      const still = await this.p.probe(signal);
      if (signal.aborted) return;
      if (still === null || !this.connected()) continue;
      await this.restartNow(still);
    }
  }

  private async restartNow(was: string): Promise<void> {
    const attempt = this.streak;
    this.current = { state: 'restarting', reason: was, attempt };
    this.p.told({
      host: this.p.name,
      what: 'restarting',
      was,
      detail: `host ${this.p.name}: its supervisor does not answer (${was}): starting it again`,
      attempt,
    });
    let said: string;
    try {
      said = await this.p.restart();
    } catch (e) {
      this.p.told({ host: this.p.name, what: 'restart-failed', was, detail: (e as Error).message, attempt });
      return;
    }
    // Started: it answers now, or the next round finds it silent and tries again (after a longer wait).
    const after = this.stop.signal.aborted ? 'stopped' : await this.p.probe(this.stop.signal);
    if (after !== null) {
      if (after !== 'stopped')
        this.p.told({ host: this.p.name, what: 'restart-failed', was, detail: `started there, but it does not answer here: ${after}`, attempt });
      return;
    }
    this.restarts++;
    this.last = { at: this.p.clock.now(), was, detail: said };
    this.p.told({ host: this.p.name, what: 'restarted', was, detail: said, attempt });
  }

  /** Wait `ms`; false when the connection changed (or the keeper stopped) first. */
  private pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const done = (v: boolean) => {
        if (timer !== null) this.p.clock.clearTimeout(timer);
        off();
        this.stop.signal.removeEventListener('abort', aborted);
        resolve(v);
      };
      const aborted = () => done(false);
      const off = this.p.link.on((s) => {
        if (s.state !== 'connected') done(false);
      });
      this.stop.signal.addEventListener('abort', aborted, { once: true });
      timer = this.p.clock.setTimeout(() => done(true), ms);
    });
  }

  /** Wait for a state of the connection `ok` accepts (or the keeper stopping). */
  private until(ok: (s: ConnectionState) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        off();
        this.stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const off = this.p.link.on((s) => {
        if (ok(s)) done();
      });
      this.stop.signal.addEventListener('abort', done, { once: true });
      if (ok(this.p.link.state) || this.stop.signal.aborted) done();
    });
  }
}

/** The keeper's state in words, for `status` and the health. */
export function describeSupervisor(s: SupervisorState, last: LastRestart | null, now: number): string {
  const restarted = last ? `; restarted at ${new Date(last.at).toISOString()} (was: ${last.was})` : '';
  switch (s.state) {
    case 'unknown':
      return `not known (the connection is not up)${restarted}`;
    case 'answering':
      return last ? `restarted at ${new Date(last.at).toISOString()} (was: ${last.was})` : 'answering';
    case 'not-answering':
      return `not answering (${s.reason}); started again in ${Math.max(0, Math.ceil((s.at - now) / 1000))} s unless it answers${s.attempt > 1 ? ` (restart ${s.attempt} in a row)` : ''}`;
    case 'restarting':
      return `restarting (was: ${s.reason})`;
    case 'stopped':
      return 'not kept';
  }
}
