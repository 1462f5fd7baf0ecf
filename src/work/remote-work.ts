// Work for an agent on another host (docs/hosts.md): a job, a handoff or an inbox message for it is
// journaled here and joins a queue here like any other (its key `<agent>@<host>`), and the runner hands
// its head to this forwarding kind. It asks the host's supervisor, through the socket forwarded to
// `.jaggers/hosts/<host>.sock`, to record the item there under the same id (its API records an id once: a
// request sent again after a cut connection or a restart here is not a second item there), follows it
// there to its end, and copies its end (and a reply) back here, so `wait`, `result`, `jobs` and `inbox`
// show it as a local item. While the host's connection is down the item waits (the runner asks
// `blocked`); the connection's next change kicks the queue.
import type { JobResultView, JobView, MessageView } from '../api/types.js';
import { isJaggersError, JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import type { Log } from '../logger.js';
import { isFinal, type JobRecord, type JobState, type MessageRecord } from '../sessions/registry.js';
import { writeDurable } from './files.js';
import type { WorkJournal } from './journal.js';
import type { Clock, Dirs, Publish, Store } from './ports.js';
import { parseArtifact } from '../handover/artifact.js';
import { makeNonce } from '../delivery/sanitize.js';
import { publishMessage } from './run-message.js';
import path from 'node:path';
import type { NewJournalEvent } from '../sessions/events.js';
import { addByModel } from '../usage/tokens.js';
import { readCarried } from './carry.js';

/** The key of a remote agent's queue here (where a local agent's terminal id goes). */
export const remoteKey = (agent: string, host: string): string => `${agent}@${host}`;

/** What an agent of the machine that started this host's supervisor is keyed by here (`near@home`). */
export const HOME = 'home';

/** The reply of a remote item, copied here. */
export const remoteReplyFile = (jaggersDir: string, id: string): string => path.join(jaggersDir, 'jobs', `${id}.reply.md`);

/** A host's supervisor as the local one reaches it: its API (the forwarded socket) and the connection's state. */
export interface HostReach {
  api: {
    call<T>(method: string, path: string, body?: unknown, opts?: { signal?: AbortSignal }): Promise<T>;
    /** The host supervisor's event stream (its items' states as they change); resolves when it ends. */
    events?(path: string, onEvent: (e: { type: string; data: Record<string, unknown> }) => void, opts?: { signal?: AbortSignal }): Promise<void>;
  };
  view: { state: string; detail: string };
}

export interface RemoteWorkPorts {
  journal: WorkJournal;
  /** The registry (messages are journaled here directly) and the event stream. */
  store: Store;
  hub: Publish;
  dirs: Dirs;
  /** The host's supervisor, or null when this supervisor keeps no connection to it. */
  reach(host: string): HostReach | null;
  clock: Clock;
  log: Log;
  /** Whether a name is an agent of jaggers.json's team (a host knows those as its `home`; a worker it does not). */
  teamAgent?(name: string): Promise<boolean>;
  /** Seconds one wait there may take before it is asked again (default 30). */
  waitS?: number;
}

/** Errors after which the same request is sent again: nobody answered, or the answer was cut. */
const AGAIN = new Set(['E_SUPERVISOR_DOWN', 'E_SUPERVISOR_STOPPING', 'E_SSH', 'E_DISK_FULL']);

function transient(e: unknown): boolean {
  return isJaggersError(e) && AGAIN.has(e.code);
}

/** The state an item here shows while it runs there. */
function mirrored(there: JobState): JobState {
  return there === 'queued' ? 'starting' : there;
}

export class RemoteWork {
  /** Items whose host's supervisor did not answer while the connection was up: why, in words. */
  private readonly trouble = new Map<string, string>();
  private readonly tries = new Map<string, number>();
  /** The pauses under way, by host: a host supervisor started again ends them (`wake`). */
  private readonly pauses = new Map<string, Set<() => void>>();

  constructor(private readonly p: RemoteWorkPorts) {}

  /** The host's supervisor answers again (started again there: docs/hosts.md, Faults): its items ask now, not after their pause. */
  wake(host: string): void {
    for (const done of [...(this.pauses.get(host) ?? [])]) done();
  }

  /** Why an item for a host cannot go on now (the connection is not up), or null when it can. */
  blocked(host: string): string | null {
    const r = this.p.reach(host);
    if (!r) return `waits for host ${host}: this supervisor keeps no connection to it (run \`jaggers up\`)`;
    if (r.view.state !== 'connected') return `waits for host ${host}: the connection is ${r.view.detail}`;
    return null;
  }

  /** Why an item in flight waits for its host's supervisor (its connection up, nobody answering), or null. */
  waiting(j: JobRecord): string | null {
    return this.trouble.get(j.id) ?? null;
  }

  /**
   * Run the item from the phase the journal says it reached: record it there (again: it is recorded
   * once), follow it there to its end, copy that end here. Resolves without an end when the host cannot
   * be reached (the runner looks again at the connection's next change, or after a pause).
   */
  async run(given: JobRecord, signal: AbortSignal): Promise<void> {
    const { journal } = this.p;
    let j = journal.data.jobs[given.id] ?? given;
    if (isFinal(j.state) || !j.host) return;
    const host = j.host;
    const agent = j.agent ?? j.target;
    const reach = this.p.reach(host);
    if (!reach) return;
    try {
      if (j.state === 'queued') {
        const started = await journal.change(j.id, 'starting', `forwarding to ${agent} on host ${host}`);
        if (!started) return;
        j = started;
      }
      const text = await readConfinedText(this.p.dirs, j.prompt, `job ${j.id}: its prompt`);
      const body = { id: j.id, target: agent, text, ...(j.name ? { name: j.name } : {}), ...(j.timeoutMs ? { timeout: j.timeoutMs / 1000 } : {}) };
      // Its states there as they change (running, waiting for a person), shown here; its end comes from the wait.
      const follow = new AbortController();
      const stop = () => follow.abort();
      signal.addEventListener('abort', stop, { once: true });
      let mirroring = Promise.resolve();
      /** Events seen: an answer to a request sent before the last one is older than it, and not shown. */
      let seen = 0;
      const watching = reach.api
        .events?.(
          '/v1/events?types=job',
          (e) => {
            const state = e.data.state as JobState;
            if (e.data.id !== given.id || isFinal(state)) return;
            seen++;
            const view = { state, reason: String(e.data.reason ?? ''), waiting: null } as JobView;
            mirroring = mirroring.then(async () => void (await this.mirrorNow(given.id, view, host))).catch(() => {});
          },
          { signal: follow.signal },
        )
        .catch(() => {});
      try {
        let asked = seen;
        let there = await this.create(reach, j, text, body, signal);
        this.answered(j.id);
        const waitS = this.p.waitS ?? 30;
        while (!isFinal(there.state)) {
          await mirroring;
          if (seen === asked) await this.mirrorNow(j.id, there, host);
          j = journal.data.jobs[j.id] ?? j;
          if (isFinal(j.state) || signal.aborted) return;
          asked = seen;
          there = await reach.api.call<JobView>('GET', `/v1/jobs/${encodeURIComponent(j.id)}/wait?timeout=${waitS}`, undefined, { signal });
          this.answered(j.id);
        }
        follow.abort();
        await mirroring;
        j = journal.data.jobs[j.id] ?? j;
        if (isFinal(j.state)) return;
        await this.finish(j, there, reach, host, signal);
      } finally {
        follow.abort();
        signal.removeEventListener('abort', stop);
        await watching;
      }
    } catch (err) {
      if (signal.aborted) return;
      const x = err as JaggersError;
      // Not an answer of the host's (a bug, a failing disk here): the runner's business, as for a local item.
      if (!isJaggersError(err)) throw err;
      if (transient(err)) return this.pause(j.id, host, x, signal);
      this.answered(j.id);
      const code = typeof x.code === 'string' && /^E_[A-Z_]+$/.test(x.code) ? x.code : 'E_TURN_FAILED';
      await journal.change(j.id, 'failed', `host ${host}: ${x.message}`, { code });
    }
  }

  /**
   * Deliver an inbox message through the host's supervisor: claimed here, stored there under the same id
   * (once: its API stores an id once), delivered here once it is delivered there (how it was, there).
   * A refusal there throws (the runner tries again, then waits for the next event); the host out of
   * reach resolves without an end, as for a job.
   */
  async deliver(given: MessageRecord, signal: AbortSignal): Promise<void> {
    const { store, hub } = this.p;
    const m = store.data.messages[given.id] ?? given;
    if (m.state === 'delivered' || !m.host) return;
    const host = m.host;
    const reach = this.p.reach(host);
    if (!reach) return;
    const key = `m:${m.id}`;
    try {
      if (m.state === 'pending') {
        const claimed = await store.update((d) => {
          const cur = d.messages[m.id];
          if (!cur || cur.state !== 'pending') return { events: [], result: false };
          return { events: [{ type: 'message-claimed', messageId: m.id, nonce: makeNonce() }], result: true };
        });
        if (claimed) publishMessage(hub, store.data.messages[m.id]!, 'claimed');
      }
      const text = parseArtifact(await readConfinedText(this.p.dirs, m.file, `message ${m.id}`)).body;
      // Its delivery there, from that supervisor's event stream (asked for before the message is sent).
      let there: 'delivered' | null = null;
      let how: MessageRecord['how'] = null;
      let wake: () => void = () => {};
      const follow = new AbortController();
      const stop = () => follow.abort();
      signal.addEventListener('abort', stop, { once: true });
      const watching = reach.api
        .events?.(
          '/v1/events?types=message',
          (e) => {
            if (e.data.id !== m.id || e.data.state !== 'delivered') return;
            there = 'delivered';
            wake();
          },
          { signal: follow.signal },
        )
        .catch(() => {})
        .finally(() => wake());
      try {
        const waitMs = (this.p.waitS ?? 30) * 1000;
        for (;;) {
          // Sent again after each wait: the same id is stored once there, and the answer says how it stands.
          // From an agent of the team here: named, so a reply there goes home through that host's outbox.
          const from = m.from && (await this.p.teamAgent?.(m.fromAgent)) ? { from: m.fromAgent } : {};
          const rec = await reach.api.call<MessageView>('POST', '/v1/messages', { id: m.id, to: m.toAgent, text, ...from }, { signal });
          this.answered(key);
          if (rec.state === 'delivered') {
            how = rec.how;
            break;
          }
          if (there === 'delivered') continue;
          await new Promise<void>((resolve) => {
            const timer = this.p.clock.setTimeout(() => resolve(), waitMs);
            wake = () => {
              this.p.clock.clearTimeout(timer);
              resolve();
            };
            follow.signal.addEventListener('abort', wake, { once: true });
          });
          if (signal.aborted) return;
          // The stream ended (the connection dropped): the next request says whether the host is there.
        }
      } finally {
        follow.abort();
        signal.removeEventListener('abort', stop);
        await watching;
      }
      const rec = await store.update((d) => {
        const cur = d.messages[m.id];
        if (!cur || cur.state === 'delivered') return { events: [], result: null };
        return { events: [{ type: 'message-delivered', messageId: m.id, how: how ?? 'verified' }], result: cur };
      });
      if (!rec) return;
      this.p.log.info({ message: m.id, agent: m.toAgent, host, how }, 'message delivered on its host');
      publishMessage(hub, { ...rec, state: 'delivered', how: how ?? 'verified' }, 'delivered');
    } catch (err) {
      if (signal.aborted) return;
      if (!isJaggersError(err)) throw err;
      if (transient(err)) return this.pause(key, host, err, signal);
      this.answered(key);
      throw new JaggersError(isJaggersError(err) ? err.code : 'E_API', `message ${m.id} to ${m.toAgent} on host ${host}: ${(err as Error).message}`);
    }
  }

  /**
   * Record the item there (its id recorded once there). A handoff, or a workflow's turn, goes through
   * that supervisor's handoffs (its handover file written there, with the files the turn carries),
   * answered once its prompt went in; then its record.
   */
  private async create(reach: HostReach, j: JobRecord, text: string, body: Record<string, unknown>, signal: AbortSignal): Promise<JobView> {
    if (j.work !== 'handoff' && j.work !== 'turn') return reach.api.call<JobView>('POST', '/v1/jobs', body, { signal });
    const files = j.carry?.length ? await readCarried(this.p.dirs, j.carry, `job ${j.id}`) : [];
    const handoff = {
      id: j.id,
      agent: j.agent ?? j.target,
      message: text,
      wait: false,
      ...(j.headless ? { headless: true } : {}),
      ...(j.task ? { task: j.task } : {}),
      ...(j.workflow ? { workflow: j.workflow } : {}),
      ...(j.timeoutMs ? { timeout: j.timeoutMs / 1000 } : {}),
      ...(files.length ? { files } : {}),
    };
    await reach.api.call('POST', '/v1/handoffs', handoff, { signal });
    return reach.api.call<JobView>('GET', `/v1/jobs/${encodeURIComponent(j.id)}`, undefined, { signal });
  }

  /** Cancel the item there too (best effort: it is cancelled here whatever the host says). */
  async cancel(j: JobRecord): Promise<void> {
    const r = j.host ? this.p.reach(j.host) : null;
    if (!r || r.view.state !== 'connected') return;
    await r.api.call('POST', `/v1/jobs/${encodeURIComponent(j.id)}/cancel`).catch((e: Error) => {
      this.p.log.warn({ job: j.id, host: j.host, err: e.message }, 'could not cancel the item on its host');
    });
  }

  /** Show here the state the item has there (journaled only when it changed); null when it ended here. */
  private async mirrorNow(id: string, there: Pick<JobView, 'state' | 'reason' | 'waiting'>, host: string): Promise<JobRecord | null> {
    const j = this.p.journal.data.jobs[id];
    if (!j || isFinal(j.state)) return null;
    const agent = j.agent ?? j.target;
    const state = mirrored(there.state);
    const reason =
      there.state === 'queued'
        ? `forwarded to ${agent} on host ${host}; queued there${there.waiting ? ` (${there.waiting})` : ''}`
        : `on host ${host}: ${there.reason}`;
    if (j.state === state && j.reason === reason) return j;
    return this.p.journal.change(j.id, state, reason);
  }

  /** The item ended there: its end here, with its reply copied into `.jaggers/jobs/<id>.reply.md`. */
  private async finish(j: JobRecord, there: JobView, reach: HostReach, host: string, signal: AbortSignal): Promise<void> {
    const { journal, dirs } = this.p;
    const agent = j.agent ?? j.target;
    if (there.state !== 'done') {
      await journal.change(j.id, there.state, `on host ${host}: ${there.reason}`, there.code ? { code: there.code } : {});
      return;
    }
    const r = await reach.api.call<JobResultView>('GET', `/v1/jobs/${encodeURIComponent(j.id)}/result`, undefined, { signal });
    this.answered(j.id);
    await this.countUsage(j, there, host);
    let reply: string | undefined;
    if (r.reply !== null) {
      const file = remoteReplyFile(dirs.jaggersDir, j.id);
      const head = ['---', `job: ${j.id}`, `agent: ${agent}`, `host: ${host}`, ...(r.artifact ? [`artifact: ${JSON.stringify(r.artifact)}`] : []), '---'];
      await writeDurable(file, `${head.join('\n')}\n${r.reply}\n`);
      reply = path.relative(dirs.projectRoot, file);
    }
    await journal.change(j.id, 'done', `${agent} on host ${host}: ${there.reason}`, reply ? { reply } : {}, r.reply);
  }

  /**
   * The tokens its turn spent there (its record there), counted here too: by agent and session
   * `<agent>@<host>`, its task, the day and the job; once (an end copied again after a restart here finds
   * the job's tokens counted).
   */
  private async countUsage(j: JobRecord, there: JobView, host: string): Promise<void> {
    const turn = there.usage;
    if (!turn || Object.keys(turn).length === 0) return;
    const key = remoteKey(j.agent ?? j.target, host);
    await this.p.store.update((d) => {
      const cur = d.jobs[j.id];
      if (!cur || isFinal(cur.state) || cur.usage) return { events: [], result: null };
      const before = Object.hasOwn(d.usage.sessions, key) ? d.usage.sessions[key]! : {};
      const usage: NewJournalEvent = {
        type: 'usage',
        terminalId: key,
        agent: key,
        sessionId: key,
        jobId: j.id,
        task: cur.task,
        reader: 'remote',
        turn,
        session: addByModel(before, turn),
      };
      return { events: [usage], result: null };
    });
  }

  /** A job's id, or `m:<id>` for a message. */
  private answered(key: string): void {
    this.trouble.delete(key);
    this.tries.delete(key);
  }

  /**
   * The host's supervisor did not answer. With the connection down the runner waits for it (`blocked`);
   * with the connection up, after a pause that doubles from 1 s up to 30 s.
   */
  private async pause(key: string, host: string, e: Error, signal: AbortSignal): Promise<void> {
    const r = this.p.reach(host);
    if (!r || r.view.state !== 'connected') {
      this.trouble.delete(key);
      return;
    }
    const n = (this.tries.get(key) ?? 0) + 1;
    this.tries.set(key, n);
    const ms = Math.min(30_000, 1000 * 2 ** (n - 1));
    this.trouble.set(key, `waits for host ${host}'s supervisor: ${e.message}; asked again in ${Math.round(ms / 1000)} s`);
    this.p.log.warn({ item: key, host, tries: n, err: e.message }, "the host's supervisor did not answer; asked again");
    const waiting = this.pauses.get(host) ?? new Set<() => void>();
    this.pauses.set(host, waiting);
    await new Promise<void>((resolve) => {
      const done = () => {
        this.p.clock.clearTimeout(timer);
        signal.removeEventListener('abort', done);
        waiting.delete(done);
        resolve();
      };
      const timer = this.p.clock.setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      waiting.add(done);
    });
  }
}
