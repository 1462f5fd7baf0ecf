// A budget, as jaggers.json, `assign`, `run` and the API give it: tokens (all four kinds together) and/or
// USD (from the price table, ./prices.ts). Where it applies and what it holds: src/work/budget.ts. Pure.
import { z } from 'zod';

export const BUDGET_SCOPES = ['session', 'agent', 'task', 'job'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

const tokens = z.number().int('must be a whole number of tokens').positive().max(1e15);
const usd = z.number().positive().finite().max(1e9);

/** `{"tokens": 2000000, "usd": 25}`: at least one of the two. */
export const BudgetSchema = z
  .strictObject({ tokens: tokens.optional(), usd: usd.optional() })
  .refine((b) => b.tokens !== undefined || b.usd !== undefined, 'must give "tokens", "usd" or both');

export type Budget = z.infer<typeof BudgetSchema>;

/** `budget raise ... --tokens N --usd N`: how much more, at least one of the two. */
export const RaiseSchema = BudgetSchema;

/** The registry's key of a budget: `session`, `agent:coder`, `task:t-...`, `job:j-...`. */
export function budgetKey(scope: BudgetScope, name: string | null): string {
  return scope === 'session' ? 'session' : `${scope}:${name ?? ''}`;
}

/** Context use: the share of its model's window at which an event goes out (and, with autoCompact, the CLI compacts). */
export const CompactAtSchema = z.number().int().min(1).max(100);

export interface OverBudget {
  scope: BudgetScope;
  name: string | null;
  key: string;
  /** Which figure reached its limit. */
  what: 'tokens' | 'usd';
  spent: number;
  limit: number;
  /** In words: `agent coder's budget: 120,000 of 100,000 tokens spent; ...`. */
  text: string;
}
