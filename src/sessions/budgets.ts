// Budgets in the registry: a job's or task's budget (given at `assign` / `run`, journaled with it) and
// every raise (`jaggers budget raise`), per budget key (src/usage/budget-schema.ts). The supervisor, the
// registry's one writer, records them; agents' and the session's budgets are jaggers.json's, their
// raises are kept here. Pure.
import { z } from 'zod';
import type { EventOf } from './events.js';

const amount = z.object({ tokens: z.number().nonnegative().optional(), usd: z.number().nonnegative().optional() });

export const budgetsSchema = z.object({
  /** Job and task budgets as given, by key (`job:j-...`, `task:t-...`). */
  set: z.record(z.string(), amount).default({}),
  /** What the raises added, by key. */
  raised: z.record(z.string(), amount).default({}),
});

export type BudgetsRecord = z.infer<typeof budgetsSchema>;
export type Amount = z.infer<typeof amount>;

export const emptyBudgets = (): BudgetsRecord => ({ set: {}, raised: {} });

const plus = (a: Amount | undefined, b: Amount): Amount => {
  const out: Amount = { ...a };
  if (b.tokens !== undefined) out.tokens = (out.tokens ?? 0) + b.tokens;
  if (b.usd !== undefined) out.usd = Math.round(((out.usd ?? 0) + b.usd) * 1e6) / 1e6;
  return out;
};

export function applyBudget(b: BudgetsRecord, e: EventOf<'budget-set'> | EventOf<'budget-raised'>): BudgetsRecord {
  const given: Amount = { ...(e.tokens !== undefined ? { tokens: e.tokens } : {}), ...(e.usd !== undefined ? { usd: e.usd } : {}) };
  if (e.type === 'budget-set') return { ...b, set: { ...b.set, [e.key]: given } };
  return { ...b, raised: { ...b.raised, [e.key]: plus(Object.hasOwn(b.raised, e.key) ? b.raised[e.key] : undefined, given) } };
}
