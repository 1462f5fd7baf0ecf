// The `sessions.json` snapshot: its schema and the pure reducer that derives it from journal events.
import { z } from 'zod';
import { JaggersError, unreachable } from '../errors.js';
import { isFinalState } from '../states.js';
import type { EventOf, JournalEvent } from './events.js';
import { applyUsage, emptyUsage, usageSummarySchema } from './usage.js';
import { applyBudget, budgetsSchema, emptyBudgets } from './budgets.js';
import { applyWorkEvent, jobRecordSchema, messageRecordSchema, type ApplyMode, type JobRecord } from './work.js';

const id = z.string().min(1);

export const terminalRecordSchema = z.object({
  terminalId: id,
  agent: id,
  profile: id,
  cwd: z.string(),
  task: id.nullable(),
  sessionId: id.nullable(),
  /** Earlier session ids of this terminal, oldest first. */
  sessionHistory: z.array(id),
  window: z.string().nullable(),
  created: z.iso.datetime({ offset: true }),
  lastState: z.string().nullable(),
  /** Replies recorded in the current session: 0 means the CLI may not have written a conversation yet. */
  turns: z.number().int().nonnegative().default(0),
});

export const taskAgentSchema = z.object({
  terminalId: id,
  sessionId: id.nullable(),
  turns: z.number().int().nonnegative(),
});

const isoTime = z.iso.datetime({ offset: true });

export const taskRecordSchema = z.object({
  id,
  workflow: id,
  status: id,
  created: isoTime,
  agents: z.record(z.string(), taskAgentSchema),
  /** A workflow task (`jaggers run`): what it is and where it stands. */
  text: z.string().nullable().default(null),
  source: z.string().nullable().default(null),
  definition: z.record(z.string(), z.unknown()).nullable().default(null),
  roles: z.record(z.string(), z.string()).default({}),
  detached: z.boolean().default(false),
  /** The terminal id of the agent that started it: the final answer goes to its inbox. */
  from: z.string().nullable().default(null),
  reason: z.string().nullable().default(null),
  step: z.string().nullable().default(null),
  agent: z.string().nullable().default(null),
  final: z.string().nullable().default(null),
  outcome: z.string().nullable().default(null),
  updated: isoTime.nullable().default(null),
  /** The machine's latest persisted snapshot, and the latest one taken while it still ran (a failed task resumes from it). */
  snapshot: z.record(z.string(), z.unknown()).nullable().default(null),
  resumable: z.record(z.string(), z.unknown()).nullable().default(null),
  history: z.array(z.object({ status: z.string(), at: isoTime, reason: z.string() })).default([]),
  /** `run --worktree`: its agents work in one git worktree (`.jaggers/worktrees/<task id>`), made from `base`. */
  worktree: z.object({ base: z.string().nullable() }).nullable().default(null),
});

export const registrySchema = z
  .object({
    version: z.literal(1),
    /** How much of events.jsonl this snapshot reflects, so a reader can catch up after a crash. */
    journal: z.object({ bytes: z.number().int().nonnegative(), lines: z.number().int().nonnegative() }),
    terminals: z.record(z.string(), terminalRecordSchema),
    tasks: z.record(z.string(), taskRecordSchema),
    /** Background jobs (`jaggers assign`) and inbox messages, in the order they were recorded. */
    jobs: z.record(z.string(), jobRecordSchema).default({}),
    messages: z.record(z.string(), messageRecordSchema).default({}),
    /** The last work item's place in the one order of jobs and messages. */
    seq: z.number().int().nonnegative().default(0),
    /** Tokens spent, summed per session, agent, task and day (src/sessions/usage.ts). */
    usage: usageSummarySchema.default(emptyUsage()),
    /** Job and task budgets, and raises (src/sessions/budgets.ts). */
    budgets: budgetsSchema.default(emptyBudgets()),
  })
  .superRefine((data, ctx) => {
    for (const [key, t] of Object.entries(data.terminals)) {
      if (t.terminalId !== key) {
        ctx.addIssue({ code: 'custom', path: ['terminals', key, 'terminalId'], message: `must equal its key "${key}"`, input: t.terminalId });
      }
    }
    for (const [key, t] of Object.entries(data.tasks)) {
      if (t.id !== key) ctx.addIssue({ code: 'custom', path: ['tasks', key, 'id'], message: `must equal its key "${key}"`, input: t.id });
    }
  });

export type TerminalRecord = z.infer<typeof terminalRecordSchema>;
export type TaskAgentRecord = z.infer<typeof taskAgentSchema>;
export type TaskRecord = z.infer<typeof taskRecordSchema>;
export type RegistryData = z.infer<typeof registrySchema>;

export function emptyRegistry(): RegistryData {
  return {
    version: 1,
    journal: { bytes: 0, lines: 0 },
    terminals: {},
    tasks: {},
    jobs: {},
    messages: {},
    seq: 0,
    usage: emptyUsage(),
    budgets: emptyBudgets(),
  };
}

function invalid(event: JournalEvent, why: string): JaggersError {
  return new JaggersError('E_REGISTRY', `event ${event.type} at ${event.ts}: ${why}`);
}

/** A record by its key, its own only: a task or agent named `constructor` is not Object's. */
function own<T>(records: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(records, key) ? records[key] : undefined;
}

function terminalOf(data: RegistryData, event: JournalEvent & { terminalId: string }): TerminalRecord {
  const t = own(data.terminals, event.terminalId);
  if (!t) throw invalid(event, `unknown terminal "${event.terminalId}"`);
  return t;
}

function taskOf(data: RegistryData, event: JournalEvent & { taskId: string }): TaskRecord {
  const t = own(data.tasks, event.taskId);
  if (!t) throw invalid(event, `unknown task "${event.taskId}"`);
  return t;
}

function withTerminal(data: RegistryData, t: TerminalRecord): RegistryData {
  return { ...data, terminals: { ...data.terminals, [t.terminalId]: t } };
}

function withTask(data: RegistryData, t: TaskRecord): RegistryData {
  return { ...data, tasks: { ...data.tasks, [t.id]: t } };
}

function newTask(id: string, workflow: string, ts: string): TaskRecord {
  return {
    id,
    workflow,
    status: 'created',
    created: ts,
    agents: {},
    text: null,
    source: null,
    definition: null,
    roles: {},
    detached: false,
    from: null,
    reason: null,
    step: null,
    agent: null,
    final: null,
    outcome: null,
    updated: null,
    snapshot: null,
    resumable: null,
    history: [],
    worktree: null,
  };
}

/** Point every task agent that runs in `terminalId` at its terminal's new session. */
function followSession(data: RegistryData, terminalId: string, sessionId: string): RegistryData {
  let out = data;
  for (const task of Object.values(data.tasks)) {
    let agents: TaskRecord['agents'] | null = null;
    for (const [name, a] of Object.entries(task.agents)) {
      if (a.terminalId !== terminalId || a.sessionId === sessionId) continue;
      agents ??= { ...task.agents };
      agents[name] = { ...a, sessionId };
    }
    if (agents) out = withTask(out, { ...task, agents });
  }
  return out;
}

function pinSession(data: RegistryData, event: EventOf<'session-pinned'>): RegistryData {
  const t = terminalOf(data, event);
  const moved = t.sessionId !== event.sessionId;
  const history = t.sessionId !== null && moved ? [...t.sessionHistory, t.sessionId] : t.sessionHistory;
  const next = withTerminal(data, { ...t, sessionId: event.sessionId, sessionHistory: history, turns: moved ? 0 : t.turns });
  return followSession(next, t.terminalId, event.sessionId);
}

function forkSession(data: RegistryData, event: EventOf<'session-forked'>): RegistryData {
  const t = terminalOf(data, event);
  if (t.sessionId !== event.from) {
    throw invalid(event, `terminal "${t.terminalId}" is on session ${t.sessionId ?? '(none)'}, not on "${event.from}" that forked`);
  }
  const next = withTerminal(data, { ...t, sessionId: event.to, sessionHistory: [...t.sessionHistory, event.from], turns: 0 });
  return followSession(next, t.terminalId, event.to);
}

function countTurn(data: RegistryData, event: EventOf<'turn'>): RegistryData {
  let terminal = terminalOf(data, event);
  if (event.direction === 'reply' && event.sessionId !== null && event.sessionId === terminal.sessionId) {
    terminal = { ...terminal, turns: terminal.turns + 1 };
    data = withTerminal(data, terminal);
  }
  if (event.taskId === null) return data;
  const task = taskOf(data, { ...event, taskId: event.taskId });
  if (event.direction !== 'reply') return data;
  const prev = own(task.agents, event.agent) ?? { terminalId: terminal.terminalId, sessionId: terminal.sessionId, turns: 0 };
  return withTask(data, { ...task, agents: { ...task.agents, [event.agent]: { ...prev, turns: prev.turns + 1 } } });
}

/**
 * A task that no workflow runs (a handoff's, the demo's, `up --task`'s, a job's own) ends with each of its
 * work items: its status, reason and agent become the item's, and a done item's reply its final file. So
 * `tasks` and `show` stay true after the items themselves are pruned from the snapshot. `j` is the item as
 * it was before the change (read before it is applied: in place, the change may prune it); `after`, the result.
 */
function itemEnded(j: JobRecord | undefined, after: RegistryData, event: EventOf<'job-state'>): RegistryData {
  if (!j || !isFinalState(event.state)) return after;
  const task = own(after.tasks, j.task ?? j.id);
  if (!task || task.definition) return after;
  const reply = event.reply ?? j.reply;
  return withTask(after, {
    ...task,
    status: event.state,
    reason: event.reason,
    agent: event.agent ?? j.agent ?? j.target,
    final: event.state === 'done' && reply ? reply : task.final,
    updated: event.ts,
    history: [...task.history, { status: event.state, at: event.ts, reason: event.reason }],
  });
}

/**
 * The snapshot after `event`; throws E_REGISTRY when the event does not fit the data. Pure unless `mode`
 * says otherwise: then jobs and messages change in place (see ApplyMode); everything else is copied.
 */
export function applyEvent(data: RegistryData, event: JournalEvent, mode?: ApplyMode): RegistryData {
  switch (event.type) {
    case 'terminal-created': {
      if (own(data.terminals, event.terminalId)) throw invalid(event, `terminal "${event.terminalId}" already exists`);
      const { terminalId, agent, profile, cwd } = event;
      const task = event.task ?? null;
      return withTerminal(data, {
        terminalId,
        agent,
        profile,
        cwd,
        task,
        sessionId: null,
        sessionHistory: [],
        window: null,
        created: event.ts,
        lastState: null,
        turns: 0,
      });
    }
    case 'terminal-window':
      return withTerminal(data, { ...terminalOf(data, event), window: event.window });
    case 'terminal-state':
      return withTerminal(data, { ...terminalOf(data, event), lastState: event.state });
    case 'session-pinned':
      return pinSession(data, event);
    case 'session-forked':
      return forkSession(data, event);
    case 'task-created':
      if (own(data.tasks, event.taskId)) throw invalid(event, `task "${event.taskId}" already exists`);
      return withTask(data, { ...newTask(event.taskId, event.workflow, event.ts), worktree: event.worktree ?? null });
    case 'task-status': {
      const t = taskOf(data, event);
      const reason = event.reason ?? null;
      return withTask(data, {
        ...t,
        status: event.status,
        reason,
        step: event.step === undefined ? t.step : event.step,
        agent: event.agent === undefined ? t.agent : event.agent,
        final: event.final === undefined ? t.final : event.final,
        outcome: event.outcome === undefined ? t.outcome : event.outcome,
        updated: event.ts,
        history: [...t.history, { status: event.status, at: event.ts, reason: reason ?? '' }],
      });
    }
    case 'task-workflow': {
      const t = taskOf(data, event);
      if (t.definition) throw invalid(event, `task "${event.taskId}" already runs workflow ${t.workflow}`);
      const { workflow, source, definition, text, roles, detached } = event;
      return withTask(data, { ...t, workflow, source, definition, text, roles, detached, from: event.from ?? null, updated: event.ts });
    }
    case 'task-snapshot': {
      const t = taskOf(data, event);
      const active = event.snapshot.status === 'active';
      return withTask(data, { ...t, snapshot: event.snapshot, resumable: active ? event.snapshot : t.resumable, updated: event.ts });
    }
    case 'task-agent': {
      const task = taskOf(data, event);
      const terminal = terminalOf(data, event);
      const turns = own(task.agents, event.agent)?.turns ?? 0;
      const agent: TaskAgentRecord = { terminalId: terminal.terminalId, sessionId: terminal.sessionId, turns };
      return withTask(data, { ...task, agents: { ...task.agents, [event.agent]: agent } });
    }
    case 'turn':
      return countTurn(data, event);
    case 'job-state':
      return itemEnded(own(data.jobs, event.jobId), applyWorkEvent(data, event, mode), event);
    case 'job-created':
    case 'message-created':
    case 'message-claimed':
    case 'message-delivered':
    case 'message-cut':
      return applyWorkEvent(data, event, mode);
    case 'usage':
      return applyWorkEvent({ ...data, usage: applyUsage(data.usage, event) }, event, mode);
    case 'budget-set':
    case 'budget-raised':
      return { ...data, budgets: applyBudget(data.budgets, event) };
    default:
      return unreachable(event);
  }
}

/** Fold many events; stops at the first that does not fit. */
export function applyEvents(data: RegistryData, events: readonly JournalEvent[]): RegistryData {
  return events.reduce((d, e) => applyEvent(d, e), data);
}
