// Jobs and inbox messages in the registry snapshot: their records and the pure reducer steps that
// derive them from journal events. Final job states and delivered messages cannot change again, so a
// second finish or a second delivery is refused by the reducer, not merely avoided by the caller.
import { z } from 'zod';
import { JaggersError } from '../errors.js';
import { addByModel } from '../usage/tokens.js';
import { byModelSchema } from './token-schema.js';
import { DELIVERED_HOW, JOB_FINAL_STATES, JOB_KINDS, JOB_STATES, WORK_KINDS, type EventOf, type JournalEvent } from './events.js';

const id = z.string().min(1);
const isoTime = z.iso.datetime({ offset: true });

export const jobRecordSchema = z.object({
  id,
  name: z.string().nullable(),
  target: id,
  kind: z.enum(JOB_KINDS),
  terminalId: id.nullable(),
  /** The agent that runs it (the team agent, or the worker's name). */
  agent: z.string().nullable(),
  window: z.string().nullable(),
  from: id.nullable(),
  fromAgent: z.string().nullable(),
  prompt: z.string(),
  bytes: z.number().int().nonnegative(),
  timeoutMs: z.number().int().positive().nullable(),
  keep: z.boolean(),
  created: isoTime,
  state: z.enum(JOB_STATES),
  reason: z.string(),
  updated: isoTime,
  nonce: id.nullable(),
  artifact: z.string().nullable(),
  reply: z.string().nullable(),
  turn: z.number().int().positive().nullable(),
  pid: z.number().int().positive().nullable().default(null),
  task: z.string().nullable().default(null),
  workflow: z.string().nullable().default(null),
  cause: z.string().nullable().default(null),
  /** What kind of work item: job (assign), handoff, send, turn (a workflow's), flow (a scheduled run). */
  work: z.enum(WORK_KINDS).default('job'),
  headless: z.boolean().default(false),
  /** Its place in the registry's one order of work items (jobs and messages alike): per agent, first in first out. */
  seq: z.number().int().nonnegative().default(0),
  /** A failed item's error code, for whoever waits on it. */
  code: z.string().nullable().default(null),
  /**
   * `assign --worktree`: the worker's own git worktree (`.jaggers/worktrees/<job id>`, branch `jaggers/<job id>`)
   * and the base it was asked from; once the job ended, what its branch holds.
   */
  worktree: z
    .object({
      base: z.string().nullable(),
      result: z
        .object({
          branch: z.string(),
          base: z.string(),
          head: z.string(),
          commits: z.number().int().nonnegative(),
          files: z.number().int().nonnegative(),
          added: z.number().int().nonnegative(),
          removed: z.number().int().nonnegative(),
        })
        .nullable(),
    })
    .nullable()
    .default(null),
  history: z.array(z.object({ state: z.enum(JOB_STATES), at: isoTime, reason: z.string() })),
  /** An agent on another host (docs/hosts.md): its item is run there by that host's supervisor; null: this machine. */
  host: z.string().nullable().default(null),
  /** A turn for an agent on another host: files of this project its prompt names, carried there with it. */
  carry: z.array(z.string()).optional(),
  /** On a host's supervisor: for an agent of the machine that started it, in the outbox until taken home; its end comes back. */
  outbox: z.boolean().default(false),
  /** Taken home from that host's outbox (docs/hosts.md): its end is reported back there; null: asked here. */
  fromHost: z.string().nullable().default(null),
  /** The tokens its turn spent, per model (docs/usage.md); null: none recorded. */
  usage: byModelSchema.nullable().default(null),
  /**
   * Its turn was cut by a usage limit and it went back to wait (docs/limits.md): how many times, the last
   * time, the limit's reset as the CLI showed it, and the terminal whose limit it was. Null: never cut.
   */
  limited: z
    .object({
      cuts: z.number().int().positive(),
      at: isoTime,
      resetAt: isoTime.nullable(),
      said: z.string().nullable(),
      terminalId: id.nullable().default(null),
    })
    .nullable()
    .default(null),
});

export const MESSAGE_STATES = ['pending', 'claimed', 'delivered'] as const;

export const messageRecordSchema = z.object({
  id,
  to: id,
  toAgent: id,
  from: id.nullable(),
  fromAgent: z.string(),
  file: z.string(),
  bytes: z.number().int().nonnegative(),
  job: id.nullable(),
  created: isoTime,
  state: z.enum(MESSAGE_STATES),
  nonce: id.nullable(),
  /** How many times it was claimed for delivery (more than one: a crash or a failed attempt in between). */
  claims: z.number().int().nonnegative(),
  delivered: isoTime.nullable(),
  how: z.enum(DELIVERED_HOW).nullable(),
  seq: z.number().int().nonnegative().default(0),
  /** To an agent on another host (docs/hosts.md): delivered there by its supervisor; null: this machine. */
  host: z.string().nullable().default(null),
  /** On a host's supervisor: to an agent of the machine that started it, waiting in the outbox until taken home. */
  outbox: z.boolean().default(false),
  /** Its turn was cut by a usage limit and it waits to be delivered again (docs/limits.md); null: never cut. */
  limited: z
    .object({ cuts: z.number().int().positive(), at: isoTime, resetAt: isoTime.nullable(), said: z.string().nullable(), reason: z.string() })
    .nullable()
    .default(null),
});

export type JobRecord = z.infer<typeof jobRecordSchema>;
export type JobState = JobRecord['state'];
export type MessageRecord = z.infer<typeof messageRecordSchema>;

interface WorkData {
  /** The last work item's place in the order (see `seq` on jobs and messages). */
  seq: number;
  jobs: Record<string, JobRecord>;
  messages: Record<string, MessageRecord>;
}

export function isFinal(state: JobState): boolean {
  return (JOB_FINAL_STATES as readonly string[]).includes(state);
}

const own = <T>(records: Record<string, T>, key: string): T | undefined => (Object.hasOwn(records, key) ? records[key] : undefined);

function invalid(event: JournalEvent, why: string): JaggersError {
  return new JaggersError('E_REGISTRY', `event ${event.type} at ${event.ts}: ${why}`);
}

function createJob(data: WorkData, e: EventOf<'job-created'>): JobRecord {
  if (own(data.jobs, e.jobId)) throw invalid(e, `job "${e.jobId}" already exists`);
  return {
    id: e.jobId,
    name: e.name,
    target: e.target,
    kind: e.kind,
    terminalId: e.terminalId,
    agent: e.kind === 'agent' ? e.target : null,
    window: null,
    from: e.from,
    fromAgent: e.fromAgent,
    prompt: e.prompt,
    bytes: e.bytes,
    timeoutMs: e.timeoutMs,
    keep: e.keep,
    created: e.ts,
    state: 'queued',
    reason: 'recorded',
    updated: e.ts,
    nonce: null,
    artifact: null,
    reply: null,
    turn: null,
    pid: null,
    task: e.task ?? null,
    workflow: e.workflow ?? null,
    cause: null,
    work: e.work ?? (e.workflow && e.task ? 'turn' : 'job'),
    headless: e.headless ?? false,
    worktree: e.worktree ? { base: e.worktree.base, result: null } : null,
    host: e.host ?? null,
    ...(e.carry?.length ? { carry: e.carry } : {}),
    outbox: e.outbox ?? false,
    fromHost: e.fromHost ?? null,
    seq: data.seq + 1,
    code: null,
    history: [{ state: 'queued', at: e.ts, reason: 'recorded' }],
    usage: null,
    limited: null,
  };
}

function changeJob(data: WorkData, e: EventOf<'job-state'>): JobRecord {
  const j = own(data.jobs, e.jobId);
  if (!j) throw invalid(e, `unknown job "${e.jobId}"`);
  if (isFinal(j.state)) throw invalid(e, `job "${e.jobId}" is already ${j.state}; it cannot become ${e.state}`);
  return {
    ...j,
    state: e.state,
    reason: e.reason,
    updated: e.ts,
    terminalId: e.terminalId === undefined ? j.terminalId : e.terminalId,
    agent: e.agent ?? (e.worker ? null : j.agent),
    ...(e.worker ? { kind: 'worker' as const, target: e.worker.target } : {}),
    window: e.window ?? (e.worker ? null : j.window),
    // A queued item has no turn under way: the nonce of one that was cut or moved is not looked for again.
    nonce: e.nonce ?? (e.state === 'queued' ? null : j.nonce),
    artifact: e.artifact ?? j.artifact,
    reply: e.reply ?? j.reply,
    turn: e.turn ?? j.turn,
    pid: e.pid ?? j.pid,
    cause: e.cause ?? j.cause,
    code: e.code ?? j.code,
    worktree: j.worktree && e.worktree ? { ...j.worktree, result: e.worktree } : j.worktree,
    limited: e.limit ? { cuts: (j.limited?.cuts ?? 0) + 1, at: e.ts, ...e.limit, terminalId: j.terminalId } : j.limited,
    history: [...j.history, { state: e.state, at: e.ts, reason: e.reason }],
  };
}

function message(data: WorkData, e: JournalEvent & { messageId: string }): MessageRecord {
  const m = own(data.messages, e.messageId);
  if (!m) throw invalid(e, `unknown message "${e.messageId}"`);
  if (m.state === 'delivered') throw invalid(e, `message "${e.messageId}" was already delivered (${m.delivered})`);
  return m;
}

/**
 * Delivered messages and ended jobs the snapshot keeps, newest first; older ones stay in the journal (and
 * their files) only, so rewriting the snapshot on every change stays cheap after thousands of them. They
 * are dropped PRUNE_BATCH at a time, once there are that many more, so an ending seldom scans them all.
 */
export const KEEP_FINISHED = 500;
const PRUNE_BATCH = 100;

/**
 * How a work event is applied. `undefined`: a pure copy (the records of the data given are not touched).
 * An `Undo`: in place, each change noted so that `undo.restore()` puts the records back (the registry's
 * owner checks a batch of events this way before it writes them; nothing is pruned). `'commit'`: in
 * place, for good (the owner, once the events are in the journal). Copying a record table of hundreds
 * of entries on every event cost more than the rest of a message's bookkeeping.
 */
export type ApplyMode = undefined | Undo | 'commit';

/** How many times each record table was changed in place: what is derived from a table is kept until it changes. */
const tableChanges = new WeakMap<object, number>();
/**
 * The key each in-place change of a table touched (null: many, as a prune): `keys[i]` took the table from
 * version `base + i` to `base + i + 1`. Kept to MAX_LOG changes; what is derived from a table older than
 * that is derived again whole.
 */
const changeLogs = new WeakMap<object, { base: number; keys: (string | null)[] }>();
const MAX_LOG = 4096;

function changed(records: object, key: string | null): void {
  const v = tableChanges.get(records) ?? 0;
  let log = changeLogs.get(records);
  if (!log) changeLogs.set(records, (log = { base: v, keys: [] }));
  tableChanges.set(records, v + 1);
  log.keys.push(key);
  if (log.keys.length > MAX_LOG) {
    const drop = log.keys.length - MAX_LOG / 2;
    log.keys.splice(0, drop);
    log.base += drop;
  }
}

/** A number that differs after every in-place change of `records` (a copy is a new table: its own count). */
export function tableVersion(records: object): number {
  return tableChanges.get(records) ?? 0;
}

/** The keys of `records` changed in place since its `version` (repeats possible); null when that is not known. */
export function changesSince(records: object, version: number): string[] | null {
  const now = tableVersion(records);
  if (version === now) return [];
  const log = changeLogs.get(records);
  if (!log || version < log.base || version > now) return null;
  const keys = log.keys.slice(version - log.base);
  return keys.includes(null) ? null : (keys as string[]);
}

export class Undo {
  private readonly steps: Array<{ records: Record<string, unknown>; key: string; had: boolean; prev: unknown }> = [];
  note(records: Record<string, unknown>, key: string): void {
    this.steps.push({ records, key, had: Object.hasOwn(records, key), prev: records[key] });
  }
  /** Put back every noted record, the last change first. */
  restore(): void {
    for (let i = this.steps.length - 1; i >= 0; i--) {
      const { records, key, had, prev } = this.steps[i]!;
      if (had) records[key] = prev;
      else delete records[key];
      changed(records, key);
    }
    this.steps.length = 0;
  }
}

function put<R>(records: Record<string, R>, key: string, value: R, mode: ApplyMode): Record<string, R> {
  if (mode === undefined) return { ...records, [key]: value };
  if (mode !== 'commit') mode.note(records, key);
  records[key] = value;
  changed(records, key);
  return records;
}

/** How many finished records each table held when last counted, kept up to date by in-place endings. */
const finishedCount = new WeakMap<object, number>();

/**
 * The records after one of them finished: without their oldest finished ones once more than KEEP_FINISHED
 * + PRUNE_BATCH have finished (then down to KEEP_FINISHED). In place for a commit; a copy otherwise.
 */
function pruned<R>(records: Record<string, R>, finished: (r: R) => boolean, mode: ApplyMode): Record<string, R> {
  if (mode !== undefined && mode !== 'commit') return records;
  let n = mode === 'commit' ? finishedCount.get(records) : undefined;
  if (n === undefined) {
    n = 0;
    for (const id in records) if (finished(records[id]!)) n++;
  } else n++;
  if (n <= KEEP_FINISHED + PRUNE_BATCH) {
    if (mode === 'commit') finishedCount.set(records, n);
    return records;
  }
  const out = mode === 'commit' ? records : { ...records };
  let drop = n - KEEP_FINISHED;
  for (const id in records) {
    if (drop === 0) break;
    if (!finished(records[id]!)) continue;
    delete out[id];
    drop--;
  }
  changed(out, null);
  if (mode === 'commit') finishedCount.set(out, KEEP_FINISHED);
  return out;
}

type WorkEvent = EventOf<'job-created' | 'job-state' | 'message-created' | 'message-claimed' | 'message-delivered' | 'message-cut' | 'usage'>;

/** The jobs and messages after `e`; throws E_REGISTRY when it does not fit. */
export function applyWorkEvent<T extends WorkData>(data: T, e: WorkEvent, mode?: ApplyMode): T {
  switch (e.type) {
    case 'job-created':
      return { ...data, seq: data.seq + 1, jobs: put(data.jobs, e.jobId, createJob(data, e), mode) };
    case 'job-state': {
      const jobs = put(data.jobs, e.jobId, changeJob(data, e), mode);
      return { ...data, jobs: isFinal(e.state) ? pruned(jobs, (j) => isFinal(j.state), mode) : jobs };
    }
    case 'message-created': {
      if (own(data.messages, e.messageId)) throw invalid(e, `message "${e.messageId}" already exists`);
      const { messageId, to, toAgent, from, fromAgent, file, bytes, job } = e;
      const host = e.host ?? null;
      const m: MessageRecord = {
        id: messageId,
        to,
        toAgent,
        from,
        fromAgent,
        file,
        bytes,
        job,
        created: e.ts,
        state: 'pending',
        nonce: null,
        claims: 0,
        delivered: null,
        how: null,
        seq: data.seq + 1,
        host,
        outbox: e.outbox ?? false,
        limited: null,
      };
      return { ...data, seq: data.seq + 1, messages: put(data.messages, messageId, m, mode) };
    }
    case 'message-claimed': {
      const m = message(data, e);
      return { ...data, messages: put(data.messages, m.id, { ...m, state: 'claimed', nonce: e.nonce, claims: m.claims + 1 }, mode) };
    }
    case 'message-delivered': {
      const m = message(data, e);
      const messages = put(data.messages, m.id, { ...m, state: 'delivered' as const, delivered: e.ts, how: e.how }, mode);
      return { ...data, messages: pruned(messages, (x) => x.state === 'delivered', mode) };
    }
    case 'message-cut': {
      const m = own(data.messages, e.messageId);
      if (!m) throw invalid(e, `no message "${e.messageId}"`);
      if (m.state !== 'delivered') throw invalid(e, `message "${e.messageId}" is ${m.state}, not delivered`);
      // No longer a finished record: the count the prune goes by drops with it.
      const finished = mode === 'commit' ? finishedCount.get(data.messages) : undefined;
      if (finished) finishedCount.set(data.messages, finished - 1);
      const limited = { cuts: (m.limited?.cuts ?? 0) + 1, at: e.ts, ...e.limit, reason: e.reason };
      return { ...data, messages: put(data.messages, m.id, { ...m, state: 'pending', nonce: null, delivered: null, how: null, limited }, mode) };
    }
    case 'usage': {
      // A job pruned from the snapshot keeps its tokens in the other sums only.
      const j = e.jobId === null ? undefined : own(data.jobs, e.jobId);
      if (!j) return data;
      return { ...data, jobs: put(data.jobs, j.id, { ...j, usage: addByModel(j.usage ?? {}, e.turn) }, mode) };
    }
  }
}
