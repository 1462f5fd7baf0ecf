// Journal events: the append-only `.jaggers/events.jsonl` holds one of these per line and is the truth
// the `sessions.json` snapshot is derived from.
import { z } from 'zod';
import { FINAL_STATES } from '../states.js';
import { byModelSchema } from './token-schema.js';

const id = z.string().min(1);
const isoTime = z.iso.datetime({ offset: true });

export const SESSION_PIN_HOW = ['pre-generated', 'discovered', 'resumed'] as const;
export const TURN_DIRECTIONS = ['prompt', 'reply'] as const;

const base = { ts: isoTime };

export const terminalCreatedEvent = z.object({
  ...base,
  type: z.literal('terminal-created'),
  terminalId: id,
  agent: id,
  profile: id,
  cwd: z.string(),
  task: z.string().min(1).nullable().optional(),
});

export const terminalWindowEvent = z.object({
  ...base,
  type: z.literal('terminal-window'),
  terminalId: id,
  window: z.string().regex(/^@\d+$/, 'must be a tmux window id like "@3"'),
});

export const terminalStateEvent = z.object({
  ...base,
  type: z.literal('terminal-state'),
  terminalId: id,
  state: id,
});

export const sessionPinnedEvent = z.object({
  ...base,
  type: z.literal('session-pinned'),
  terminalId: id,
  sessionId: id,
  how: z.enum(SESSION_PIN_HOW),
});

export const sessionForkedEvent = z.object({
  ...base,
  type: z.literal('session-forked'),
  terminalId: id,
  from: id,
  to: id,
  reason: z.string(),
});

export const taskCreatedEvent = z.object({
  ...base,
  type: z.literal('task-created'),
  taskId: id,
  workflow: id,
  /** `run --worktree`: every agent of the task works in one git worktree, `jaggers/<task id>`, made from `base`. */
  worktree: z.object({ base: z.string().min(1).nullable() }).optional(),
});

export const taskStatusEvent = z.object({
  ...base,
  type: z.literal('task-status'),
  taskId: id,
  status: id,
  /** Why, in words: the turn it is at, what the agent asks, why it failed. */
  reason: z.string().optional(),
  step: z.string().nullable().optional(),
  agent: z.string().nullable().optional(),
  /** The final artifact (the last reply), relative to the project. */
  final: z.string().nullable().optional(),
  outcome: z.string().nullable().optional(),
});

/** A workflow for a task (`jaggers run`): its definition is kept with the task, so a resume runs the same one. */
export const taskWorkflowEvent = z.object({
  ...base,
  type: z.literal('task-workflow'),
  taskId: id,
  workflow: id,
  /** Where the definition came from: `built-in` or the file, relative to the project. */
  source: z.string(),
  definition: z.record(z.string(), z.unknown()),
  text: z.string(),
  /** Role -> agent. */
  roles: z.record(z.string(), z.string()),
  /** Driven by the supervisor alone: it resumes the task on its own start. */
  detached: z.boolean(),
  /** Who started it (an agent's terminal id, through MCP or `run` in its pane): its result goes to that inbox. */
  from: z.string().nullable().optional(),
});

/** The workflow machine's persisted snapshot, after a transition. */
export const taskSnapshotEvent = z.object({
  ...base,
  type: z.literal('task-snapshot'),
  taskId: id,
  snapshot: z.record(z.string(), z.unknown()),
});

export const taskAgentEvent = z.object({
  ...base,
  type: z.literal('task-agent'),
  taskId: id,
  agent: id,
  terminalId: id,
});

export const turnEvent = z.object({
  ...base,
  type: z.literal('turn'),
  taskId: id.nullable(),
  agent: id,
  terminalId: id,
  sessionId: id.nullable(),
  turn: z.number().int().nonnegative(),
  handoverFile: z.string().min(1).nullable(),
  direction: z.enum(TURN_DIRECTIONS),
});

export const JOB_STATES = ['queued', 'starting', 'running', 'waiting_input', 'done', 'failed', 'cancelled'] as const;
export const JOB_FINAL_STATES = FINAL_STATES;
export const JOB_KINDS = ['agent', 'worker'] as const;
/**
 * What a work item is, beside where it runs (`JOB_KINDS`): an `assign` (job), a `handoff`, a `send`
 * (text typed as it is), a workflow's `turn`, a scheduled `flow` run, a `compact` (the CLI's own compaction
 * command, typed like a send, docs/usage.md). Messages are the inbox's items.
 */
export const WORK_KINDS = ['job', 'handoff', 'send', 'turn', 'flow', 'compact'] as const;
/** `sent-home`: an outbox message (below) the supervisor that started this host's took home, by its id. */
export const DELIVERED_HOW = ['verified', 'unverified', 'found-on-screen', 'found-in-transcript', 'sent-home'] as const;

/** A background job (`jaggers assign`): its prompt is a file, the journal holds what it is and where it went. */
export const jobCreatedEvent = z.object({
  ...base,
  type: z.literal('job-created'),
  jobId: id,
  name: z.string().min(1).nullable(),
  /** The agent or profile named at `assign`. */
  target: id,
  kind: z.enum(JOB_KINDS),
  /** The team agent's terminal (kind agent); a worker's is recorded when it is made. */
  terminalId: id.nullable(),
  /** Whoever assigned it: its result goes to this terminal's inbox. */
  from: id.nullable(),
  fromAgent: z.string().min(1).nullable(),
  /** The prompt's file, relative to the project. */
  prompt: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  timeoutMs: z.number().int().positive().nullable(),
  keep: z.boolean(),
  /** A workflow's turn: the task its handover files belong to, and the workflow. */
  task: id.nullable().optional(),
  workflow: id.optional(),
  /** What kind of work item it is (absent in journals written before there were kinds: a job). */
  work: z.enum(WORK_KINDS).optional(),
  /** Run by the CLI's headless mode in the pinned conversation instead of typed into the pane. */
  headless: z.boolean().optional(),
  /** `assign --worktree`: the job's worker works in a git worktree of its own, `jaggers/<job id>`, made from `base`. */
  worktree: z.object({ base: z.string().min(1).nullable() }).optional(),
  /**
   * An agent on another host (docs/hosts.md): the item is forwarded to that host's supervisor, which runs
   * it as its own item keyed by this one's id; its `terminalId` here is the queue's key, `<agent>@<host>`.
   */
  host: id.optional(),
  /** A workflow's turn for an agent on another host: files of this project its prompt names, carried there with it (src/work/carry.ts). */
  carry: z.array(z.string().min(1)).optional(),
  /**
   * On a host's supervisor: a job or handoff for an agent of the machine that started it (jaggers.json's
   * `home`, docs/hosts.md). It waits in the outbox, in no queue here, until that supervisor takes it home by
   * its id and runs it there; its end comes back here. `terminalId` is `<agent>@home`.
   */
  outbox: z.literal(true).optional(),
  /** Taken home from this host's outbox (docs/hosts.md): its end goes back to that host's supervisor. */
  fromHost: id.optional(),
});

export const jobStateEvent = z.object({
  ...base,
  type: z.literal('job-state'),
  jobId: id,
  state: z.enum(JOB_STATES),
  reason: z.string(),
  /** null: the item leaves its terminal (it moved to a worker of a profile, whose window is not open yet). */
  terminalId: id.nullable().optional(),
  agent: id.optional(),
  /** The item became a worker's job of the profile `target` (a usage limit's fallback profile, docs/limits.md). */
  worker: z.object({ target: id }).optional(),
  window: z.string().optional(),
  /** The nonce of the pointer prompt (set before it is typed, to find it again after a crash). */
  nonce: id.optional(),
  /** The handover file of the job's turn, and the reply's, relative to the project. */
  artifact: z.string().min(1).optional(),
  reply: z.string().min(1).optional(),
  turn: z.number().int().positive().optional(),
  /** The agent's process when its turn started: a different one later means the turn was lost with it. */
  pid: z.number().int().positive().optional(),
  /** `agent-lost`: the agent died or was restarted during the turn (a workflow restarts it and tries once more). */
  cause: z.enum(['agent-lost']).optional(),
  /** A failed item: the error code its waiter reports (`E_TIMEOUT`, `E_AGENT_WAITING`, `E_PANE_GONE`...). */
  code: z
    .string()
    .regex(/^E_[A-Z_]+$/)
    .optional(),
  /**
   * A turn cut by a usage limit (docs/limits.md): the item went back to wait for the limit's reset
   * (`resetAt`, null when the CLI showed none), as the CLI said it (`said`).
   */
  limit: z.object({ resetAt: isoTime.nullable(), said: z.string().nullable() }).optional(),
  /** A `--worktree` job's end: what its branch holds (its work committed first). */
  worktree: z
    .object({
      branch: z.string().min(1),
      base: z.string().min(1),
      head: z.string().min(1),
      commits: z.number().int().nonnegative(),
      files: z.number().int().nonnegative(),
      added: z.number().int().nonnegative(),
      removed: z.number().int().nonnegative(),
    })
    .optional(),
});

/** A message for a terminal's inbox: the text is in `file`, written and fsynced before this is recorded. */
export const messageCreatedEvent = z.object({
  ...base,
  type: z.literal('message-created'),
  messageId: id,
  to: id,
  toAgent: id,
  from: id.nullable(),
  fromAgent: z.string().min(1),
  file: z.string().min(1),
  bytes: z.number().int().nonnegative(),
  /** The job whose result this is. */
  job: id.nullable(),
  /** To an agent on another host (docs/hosts.md): delivered by that host's supervisor; `to` is `<agent>@<host>`. */
  host: id.optional(),
  /**
   * On a host's supervisor: to an agent of the machine that started it (jaggers.json's `home`, docs/hosts.md).
   * It waits in the outbox, in no queue here, until that supervisor takes it home by its id.
   */
  outbox: z.literal(true).optional(),
});

/** About to be typed, with this nonce: after a crash, the nonce on screen or in the transcript says it went in. */
export const messageClaimedEvent = z.object({
  ...base,
  type: z.literal('message-claimed'),
  messageId: id,
  nonce: id,
});

export const messageDeliveredEvent = z.object({
  ...base,
  type: z.literal('message-delivered'),
  messageId: id,
  how: z.enum(DELIVERED_HOW),
});

/**
 * A delivered message whose turn a usage limit cut (docs/limits.md): the CLI showed its limit instead of
 * an answer, so the message waits again in its agent's queue and is delivered anew after the reset.
 */
export const messageCutEvent = z.object({
  ...base,
  type: z.literal('message-cut'),
  messageId: id,
  reason: z.string(),
  limit: z.object({ resetAt: isoTime.nullable(), said: z.string().nullable() }),
});

/**
 * The tokens one turn spent, read from its CLI's own records when the turn's end is recorded (in the same
 * journal entry): `turn` is what `sessionId`'s records show beyond `session` as it was before.
 */
export const usageEvent = z.object({
  ...base,
  type: z.literal('usage'),
  terminalId: id,
  agent: id,
  sessionId: id,
  /** The work item whose turn it was, and its task. */
  jobId: id.nullable(),
  task: id.nullable(),
  /** The profile's usage reader (`claude`, `codex`...). */
  reader: id,
  /** This turn's tokens, per model. */
  turn: byModelSchema,
  /** The session's tokens so far, per model, this turn's included. */
  session: byModelSchema,
  /** The prompt of the session's last API answer (input and cache tokens): how full the model's context is. */
  context: z.object({ model: z.string().min(1), tokens: z.number().int().nonnegative() }).optional(),
});

const budgetKeyField = z.string().regex(/^(session|(agent|task|job):.+)$/, 'must be session, agent:<name>, task:<id> or job:<id>');
const budgetAmount = { tokens: z.number().nonnegative().optional(), usd: z.number().nonnegative().optional() };

/** A job's or task's budget, given at `assign` / `run` (docs/usage.md, Budgets). */
export const budgetSetEvent = z.object({ ...base, type: z.literal('budget-set'), key: budgetKeyField, ...budgetAmount });

/** `jaggers budget raise`: this much more for the budget `key`. */
export const budgetRaisedEvent = z.object({ ...base, type: z.literal('budget-raised'), key: budgetKeyField, ...budgetAmount, by: z.string().optional() });

export const journalEventSchema = z.discriminatedUnion('type', [
  terminalCreatedEvent,
  terminalWindowEvent,
  terminalStateEvent,
  sessionPinnedEvent,
  sessionForkedEvent,
  taskCreatedEvent,
  taskStatusEvent,
  taskWorkflowEvent,
  taskSnapshotEvent,
  taskAgentEvent,
  turnEvent,
  jobCreatedEvent,
  jobStateEvent,
  messageCreatedEvent,
  messageClaimedEvent,
  messageDeliveredEvent,
  messageCutEvent,
  usageEvent,
  budgetSetEvent,
  budgetRaisedEvent,
]);

export type JournalEvent = z.infer<typeof journalEventSchema>;
export type JournalEventType = JournalEvent['type'];
export type EventOf<T extends JournalEventType> = Extract<JournalEvent, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What callers hand to `Registry.record`: an event whose `ts` may be left for the registry's clock. */
export type NewJournalEvent = DistributiveOmit<JournalEvent, 'ts'> & { ts?: string };
