// Messages and work from a host's agents to agents of this machine (docs/hosts.md): a host's supervisor
// keeps a message, a job (`assign`) or a handoff for an agent of the team it does not have (jaggers.json's
// `home`, which the local side writes) in its outbox. This supervisor, following that host's event stream
// while its connection is up, takes each one by its id: stored here like any message or item (the same id
// is recorded once here), then marked taken there (taken twice is taken once there). A cut or a restart on
// either side between the two finds it still in the outbox and takes it again: one message or item here.
// An item taken home runs here; its states and its end (with the reply) are reported back there, again at
// each pass until the host has its end (src/work/outbox.ts applies a report once).
import { isJaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import type { MessageRequest } from './inbox.js';
import type { JobRequest } from './jobs.js';
import type { OutboxItem, OutboxJob, OutboxReport } from './outbox.js';
import { HOME, type HostReach } from './remote-work.js';
import type { JobView, MessageView } from '../api/types.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import type { Clock, Subscribe } from './ports.js';

export interface OutboxHomePorts {
  /** The host's supervisor, or null when this supervisor keeps no connection to it. */
  reach(host: string): HostReach | null;
  inbox: { send(req: MessageRequest): Promise<MessageView> };
  /** Items here: recorded (a handoff gets its deadline), found by id, their reply, cancelled. */
  work?: {
    create(req: JobRequest): Promise<JobView>;
    get(id: string): JobRecord | undefined;
    reply(id: string): Promise<string | null>;
    cancel(id: string, by: string): Promise<unknown>;
  };
  /** This supervisor's events: each change of an item taken home from a host is told there. */
  hub?: Subscribe;
  log: Log;
  clock: Clock;
}

/** Errors after which an item is left in the outbox and taken at the next pass (nobody answered; the disk here). */
const AGAIN = new Set(['E_SUPERVISOR_DOWN', 'E_SUPERVISOR_STOPPING', 'E_SSH', 'E_DISK_FULL']);

export class OutboxHome {
  /** Hosts whose event stream is followed now. */
  private readonly following = new Map<string, AbortController>();
  /** Hosts whose outbox is being taken now, and those to look at again once that is done. */
  private readonly taking = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Streams ended in a row with the connection up (the host's supervisor gone or restarting), and the timer to follow again. */
  private readonly ended = new Map<string, { n: number; timer: unknown }>();
  private stopped = false;

  private readonly off: () => void;

  constructor(private readonly p: OutboxHomePorts) {
    this.off =
      p.hub?.subscribe((e) => {
        if (e.type === 'job' && typeof e.data.fromHost === 'string') this.changed(e.data.fromHost);
      }) ?? (() => {});
  }

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
        '/v1/events?types=message,job',
        (e) => {
          if (e.type === 'message' && e.data.state === 'outbox') this.take(host);
          // An item put in the outbox; one cancelled there while it runs here is cancelled here too.
          if (e.type === 'job' && e.data.outbox === true) this.jobEvent(host, e.data);
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

  /** An item here from a host's outbox changed: its host is told at the next pass (now). */
  private changed(host: string): void {
    if (!this.stopped) void this.take(host);
  }

  private jobEvent(host: string, data: Record<string, unknown>): void {
    const id = String(data.id);
    const here = this.p.work?.get(id);
    if (data.state === 'cancelled' && here && here.fromHost === host && !isFinal(here.state)) {
      void this.p
        .work!.cancel(id, `its asker on host ${host}`)
        .catch((e: Error) => this.p.log.warn({ host, job: id, err: e.message }, 'could not cancel an item taken home'));
      return;
    }
    if (data.state === 'queued') void this.take(host);
  }

  private async pass(host: string): Promise<void> {
    const r = this.p.reach(host);
    if (!r || r.view.state !== 'connected') return;
    let waiting: OutboxItem[];
    try {
      waiting = await r.api.call<OutboxItem[]>('GET', '/v1/outbox');
    } catch (e) {
      this.p.log.warn({ host, err: (e as Error).message }, "host's outbox not read; read again at its next event or connection");
      return;
    }
    for (const m of waiting) {
      if (m.item === 'job') {
        if (!(await this.job(host, r, m))) return;
        continue;
      }
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

  /**
   * One item of the host's outbox: recorded here under its id (once), marked taken there, and how it stands
   * here reported there. False when the host stopped answering (the pass ends; the next one goes on).
   */
  private async job(host: string, r: HostReach, it: OutboxJob): Promise<boolean> {
    const work = this.p.work;
    if (!work) return true;
    const agent = it.agent ?? it.target;
    let here = work.get(it.id);
    if (!here && it.taken) {
      // Taken, and no record of it here (the registry here lost or pruned it): its asker is told.
      return this.report(host, r, it.id, { state: 'failed', reason: `taken home, but no record of it is here any more: assign it again`, code: 'E_NOT_FOUND' });
    }
    if (!here) {
      try {
        await work.create({
          id: it.id,
          target: agent,
          text: it.text,
          work: it.work === 'handoff' ? 'handoff' : 'job',
          ...(it.name ? { name: it.name } : {}),
          ...(it.timeoutMs ? { timeout: it.timeoutMs / 1000 } : {}),
          ...(it.headless ? { headless: true } : {}),
          ...(it.work === 'handoff' && it.task ? { task: it.task, workflow: it.workflow ?? 'handoff' } : {}),
          // A person there (no sender) stays a person; an agent there is `<agent>@<host>` here.
          ...(it.from && it.fromAgent ? { from: it.fromAgent } : {}),
          fromHost: host,
        });
      } catch (e) {
        if (!isJaggersError(e) || AGAIN.has(e.code)) {
          this.p.log.warn({ host, job: it.id, to: agent, err: (e as Error).message }, "a host's outbox item cannot be recorded here now; it waits there");
          return true;
        }
        // Refused here (an agent this machine does not have, a headless run it cannot do): its asker is told, with the code.
        this.p.log.warn({ host, job: it.id, to: agent, err: e.message }, "a host's outbox item refused here; failed there");
        return this.report(host, r, it.id, { state: 'failed', reason: `refused: ${e.message}`, code: e.code });
      }
      here = work.get(it.id);
      this.p.log.info(
        { host, job: it.id, work: it.work, to: agent, from: it.fromAgent ? `${it.fromAgent}@${host}` : 'user' },
        "a host's outbox item taken home",
      );
    }
    if (!it.taken) {
      try {
        await r.api.call('POST', `/v1/outbox/${encodeURIComponent(it.id)}/taken`);
      } catch (e) {
        // Gone from there meanwhile (cancelled there): its event cancels it here.
        if (isJaggersError(e) && e.code === 'E_NOT_FOUND') return true;
        this.p.log.warn({ host, job: it.id, err: (e as Error).message }, 'outbox item recorded here, not yet marked taken there; again at the next pass');
        return false;
      }
    }
    if (!here) return true;
    const ended = isFinal(here.state);
    const report: OutboxReport = { state: here.state, reason: here.reason, ...(here.code ? { code: here.code } : {}) };
    if (ended && here.state === 'done') report.reply = await work.reply(here.id);
    // Not started here (it shows taken there), or shown there as it is here: nothing to tell.
    if (!ended && (here.state === 'queued' || (it.state === here.state && it.reason === `on ${HOME}: ${here.reason}`))) return true;
    return this.report(host, r, it.id, report);
  }

  private async report(host: string, r: HostReach, id: string, report: OutboxReport): Promise<boolean> {
    try {
      await r.api.call('POST', `/v1/outbox/${encodeURIComponent(id)}/state`, report);
    } catch (e) {
      if (isJaggersError(e) && e.code === 'E_NOT_FOUND') return true;
      this.p.log.warn({ host, job: id, err: (e as Error).message }, 'how an item taken home stands not told there yet; again at the next pass');
      return !(isJaggersError(e) && AGAIN.has(e.code));
    }
    if (isFinal(report.state)) this.p.log.info({ host, job: id, state: report.state }, 'an item taken home ended; its end is on its host');
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.off();
    for (const c of this.following.values()) c.abort();
    this.following.clear();
    for (const e of this.ended.values()) if (e.timer !== undefined) this.p.clock.clearTimeout(e.timer);
    this.ended.clear();
  }
}
