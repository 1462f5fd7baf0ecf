// Journal events: the append-only `.jaggers/events.jsonl` holds one of these per line and is the truth
// the `sessions.json` snapshot is derived from.
import { z } from 'zod';

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
});

export const taskStatusEvent = z.object({
  ...base,
  type: z.literal('task-status'),
  taskId: id,
  status: id,
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

export const journalEventSchema = z.discriminatedUnion('type', [
  terminalCreatedEvent,
  terminalWindowEvent,
  terminalStateEvent,
  sessionPinnedEvent,
  sessionForkedEvent,
  taskCreatedEvent,
  taskStatusEvent,
  taskAgentEvent,
  turnEvent,
]);

export type JournalEvent = z.infer<typeof journalEventSchema>;
export type JournalEventType = JournalEvent['type'];
export type EventOf<T extends JournalEventType> = Extract<JournalEvent, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What callers hand to `Registry.record`: an event whose `ts` may be left for the registry's clock. */
export type NewJournalEvent = DistributiveOmit<JournalEvent, 'ts'> & { ts?: string };
