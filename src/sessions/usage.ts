// Token usage in the registry: each turn's tokens are journaled with the turn (a `usage` event, in the
// same journal entry as the work item's end), and the snapshot keeps the sums per agent, task, session
// and day (UTC), and on the work item itself. A session's sum is also where the next turn's tokens are
// counted from: a turn's tokens are what the session's records show beyond it (src/work/usage.ts).
import { z } from 'zod';
import { addByModel, type ByModel } from '../usage/tokens.js';
import type { EventOf } from './events.js';
import { byModelSchema } from './token-schema.js';

const count = z.number().int().nonnegative();

export const usageSummarySchema = z.object({
  /** Per session id: every token its recorded turns spent. */
  sessions: z.record(z.string(), byModelSchema).default({}),
  agents: z.record(z.string(), byModelSchema).default({}),
  tasks: z.record(z.string(), byModelSchema).default({}),
  /** Per UTC day (`YYYY-MM-DD`) of the turn's end. */
  days: z.record(z.string(), byModelSchema).default({}),
  /** Turns with usage recorded. */
  turns: count.default(0),
  /** Per terminal: the prompt tokens of its session's last API answer, and the model (docs/usage.md, Context). */
  context: z.record(z.string(), z.object({ model: z.string(), tokens: count, at: z.string() })).default({}),
});

export type UsageSummary = z.infer<typeof usageSummarySchema>;

export const emptyUsage = (): UsageSummary => ({ sessions: {}, agents: {}, tasks: {}, days: {}, turns: 0, context: {} });

const plus = (records: Record<string, ByModel>, key: string, by: ByModel): Record<string, ByModel> => ({
  ...records,
  [key]: addByModel(Object.hasOwn(records, key) ? records[key]! : {}, by),
});

/** The sums after one turn's usage. Pure. */
export function applyUsage(u: UsageSummary, e: EventOf<'usage'>): UsageSummary {
  return {
    sessions: { ...u.sessions, [e.sessionId]: e.session },
    agents: plus(u.agents, e.agent, e.turn),
    tasks: e.task ? plus(u.tasks, e.task, e.turn) : u.tasks,
    days: plus(u.days, e.ts.slice(0, 10), e.turn),
    turns: u.turns + 1,
    context: e.context ? { ...u.context, [e.terminalId]: { ...e.context, at: e.ts } } : u.context,
  };
}
