// Messages from a host's agents to agents of this machine (docs/hosts.md): a host's supervisor keeps a
// message for an agent of the team it does not have (jaggers.json's `home`, which the local side writes)
// in its outbox. This supervisor, following that host's event stream while its connection is up, takes
// each one by its id: stored here like any message (the same id is stored once here), then marked taken
// there (taken twice is taken once there). A cut or a restart on either side between the two finds it
// still in the outbox and takes it again: one message here.
import { isJaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import type { MessageRequest, OutboxMessage } from './inbox.js';
import type { HostReach } from './remote-work.js';
import type { MessageView } from '../api/types.js';
import type { Clock } from './ports.js';

export interface OutboxHomePorts {
  /** The host's supervisor, or null when this supervisor keeps no connection to it. */
  reach(host: string): HostReach | null;
  inbox: { send(req: MessageRequest): Promise<MessageView> };
  log: Log;
  clock: Clock;
}

export class OutboxHome {
  /** Hosts whose event stream is followed now. */
  private readonly following = new Map<string, AbortController>();
  /** Hosts whose outbox is being taken now, and those to look at again once that is done. */
  private readonly taking = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Streams ended in a row with the connection up (the host's supervisor gone or restarting), and the timer to follow again. */
  private readonly ended = new Map<string, { n: number; timer: unknown }>();
  private stopped = false;

  constructor(private readonly p: OutboxHomePorts) {}

  /** The host's connection changed (or this supervisor started): follow its stream and take its outbox while it is up. */
  follow(host: string): void {
    if (this.stopped || this.following.has(host)) return;
    const waiting = this.ended.get(host);
    if (waiting?.timer !== undefined) this.p.clock.clearTimeout(waiting.timer);
    if (waiting) waiting.timer = undefined;
    const r = this.p.reach(host);
    if (!r || r.view.state !== 'connected') return;
    const stop = new AbortController();
    this.following.set(host, stop);
    const since = this.p.clock.now();
    // Asked for before the outbox is read: a message put there meanwhile is an event on it.
    const stream =
      r.api.events?.(
        '/v1/events?types=message',
        (e) => {
          if (e.data.state === 'outbox') this.take(host);
          this.ended.delete(host);
        },
        { signal: stop.signal },
      ) ?? Promise.resolve();
    this.take(host);
    void stream
      .catch((e: Error) => this.p.log.debug({ host, err: e.message }, "host's event stream ended"))
      .finally(() => {
        if (this.following.get(host) === stop) this.following.delete(host);
        // Ended with the connection still up (the host's supervisor restarted, or gone): followed again
        // after a pause that doubles from 1 s up to 30 s (the connection's next change follows at once).
        if (stop.signal.aborted || this.stopped || this.p.reach(host)?.view.state !== 'connected') return;
        const e = this.ended.get(host) ?? { n: 0, timer: undefined };
        // A stream that lasted starts the pauses over.
        e.n = this.p.clock.now() - since > 30_000 ? 1 : e.n + 1;
        e.timer = this.p.clock.setTimeout(() => this.follow(host), Math.min(30_000, 1000 * 2 ** (e.n - 1)));
        this.ended.set(host, e);
      });
  }

  /** Take what the host's outbox holds now (one pass at a time per host; asked meanwhile, one more pass after). */
  take(host: string): Promise<void> {
    const running = this.taking.get(host);
    if (running) {
      this.again.add(host);
      return running;
    }
    const run = (async () => {
      do {
        this.again.delete(host);
        await this.pass(host);
      } while (this.again.has(host) && !this.stopped);
    })().finally(() => this.taking.delete(host));
    this.taking.set(host, run);
    return run;
  }

  private async pass(host: string): Promise<void> {
    const r = this.p.reach(host);
    if (!r || r.view.state !== 'connected') return;
    let waiting: OutboxMessage[];
    try {
      waiting = await r.api.call<OutboxMessage[]>('GET', '/v1/outbox');
    } catch (e) {
      this.p.log.warn({ host, err: (e as Error).message }, "host's outbox not read; read again at its next event or connection");
      return;
    }
    for (const m of waiting) {
      try {
        // A person there (no sender) stays a person; an agent there is `<agent>@<host>` here.
        const sender = m.from ? { from: m.fromAgent, fromHost: host } : {};
        await this.p.inbox.send({ id: m.id, to: m.toAgent, text: m.text, ...sender });
      } catch (e) {
        // Not for this machine as it is now (an agent removed since): it waits there, said in the log.
        this.p.log.warn({ host, message: m.id, to: m.toAgent, err: (e as Error).message }, "a host's outbox message cannot be stored here; it waits there");
        continue;
      }
      try {
        await r.api.call('POST', `/v1/outbox/${encodeURIComponent(m.id)}/taken`);
      } catch (e) {
        // Already gone from there (taken, its answer lost): it is here once either way.
        if (isJaggersError(e) && e.code === 'E_NOT_FOUND') continue;
        this.p.log.warn({ host, message: m.id, err: (e as Error).message }, 'outbox message stored here, not yet marked taken there; again at the next pass');
        return;
      }
      this.p.log.info({ host, message: m.id, to: m.toAgent, from: `${m.fromAgent}@${host}` }, "a host's outbox message taken home");
    }
  }

  stop(): void {
    this.stopped = true;
    for (const c of this.following.values()) c.abort();
    this.following.clear();
    for (const e of this.ended.values()) if (e.timer !== undefined) this.p.clock.clearTimeout(e.timer);
    this.ended.clear();
  }
}
