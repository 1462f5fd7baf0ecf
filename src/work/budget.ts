// Budgets as the runner sees them: which budgets apply to a work item (its session's, its agent's, its
// task's, its own), what each has spent (the registry's usage sums, priced by the price table), and
// whether one is reached, so the item waits `over_budget` instead of going in. An item in flight is never
// asked: a turn is never cut. Pure: registry data, jaggers.json's budgets and prices in, a verdict out.
import type { Amount } from '../sessions/budgets.js';
import type { RegistryData } from '../sessions/registry.js';
import { budgetKey, type Budget, type BudgetScope } from '../usage/budget-schema.js';
import { costOf, type PriceTable } from '../usage/prices.js';
import { addByModel, sumTokens, totalOf, type ByModel } from '../usage/tokens.js';
import type { WorkItem } from './queue.js';

/** jaggers.json's budgets: the session's, and each agent's by name. */
export interface BudgetConfig {
  session?: Budget;
  agents: Readonly<Record<string, Budget>>;
}

export interface Spent {
  tokens: number;
  /** USD of the models that have a price. */
  usd: number;
  /** Models with tokens and no price: not held to a usd budget (their cost is unknown, never guessed). */
  unpriced: string[];
}

export interface BudgetLine {
  scope: BudgetScope;
  /** The agent's name, the task's or job's id; null for the session. */
  name: string | null;
  key: string;
  /** The budget as given plus every raise. */
  limit: Amount;
  /** What the raises added. */
  raised: Amount;
  spent: Spent;
}

import type { OverBudget } from '../usage/budget-schema.js';
export type { OverBudget };

const own = <T>(r: Readonly<Record<string, T>>, k: string): T | undefined => (Object.hasOwn(r, k) ? r[k] : undefined);

function spentOf(by: ByModel | undefined | null, prices: PriceTable): Spent {
  const models = by ?? {};
  return { tokens: sumTokens(totalOf(models)), ...costOf(prices, models) };
}

function plus(a: Amount | undefined, b: Amount | undefined): Amount {
  const out: Amount = {};
  if (a?.tokens !== undefined) out.tokens = a.tokens + (b?.tokens ?? 0);
  if (a?.usd !== undefined) out.usd = Math.round((a.usd + (b?.usd ?? 0)) * 1e6) / 1e6;
  return out;
}

/** The budget of a scope as configured (jaggers.json) or given (assign, run); undefined when none. */
export function givenBudget(data: RegistryData, cfg: BudgetConfig, scope: BudgetScope, name: string | null): Amount | undefined {
  switch (scope) {
    case 'session':
      return cfg.session;
    case 'agent':
      return name === null ? undefined : own(cfg.agents, name);
    case 'task':
    case 'job':
      return own(data.budgets.set, budgetKey(scope, name));
  }
}

/** What a scope spent so far. */
export function spentIn(data: RegistryData, prices: PriceTable, scope: BudgetScope, name: string | null): Spent {
  const u = data.usage;
  switch (scope) {
    case 'session':
      return spentOf(
        Object.values(u.agents).reduce<ByModel>((a, b) => addByModel(a, b), {}),
        prices,
      );
    case 'agent':
      return spentOf(name === null ? null : own(u.agents, name), prices);
    case 'task':
      return spentOf(name === null ? null : own(u.tasks, name), prices);
    case 'job':
      return spentOf(name === null ? null : own(data.jobs, name)?.usage, prices);
  }
}

/** One budget with its spend; null when the scope has none. */
export function budgetLine(data: RegistryData, cfg: BudgetConfig, prices: PriceTable, scope: BudgetScope, name: string | null): BudgetLine | null {
  const given = givenBudget(data, cfg, scope, name);
  if (!given) return null;
  const key = budgetKey(scope, name);
  const raised = own(data.budgets.raised, key) ?? {};
  return { scope, name, key, limit: plus(given, raised), raised, spent: spentIn(data, prices, scope, name) };
}

/** Every budget there is: the session's, each agent's, each task's and job's (those the registry keeps). */
export function allBudgets(data: RegistryData, cfg: BudgetConfig, prices: PriceTable): BudgetLine[] {
  const lines: (BudgetLine | null)[] = [budgetLine(data, cfg, prices, 'session', null)];
  for (const name of Object.keys(cfg.agents).sort()) lines.push(budgetLine(data, cfg, prices, 'agent', name));
  for (const key of Object.keys(data.budgets.set).sort()) {
    const [scope, ...rest] = key.split(':');
    const name = rest.join(':');
    if (scope === 'task' && own(data.tasks, name)) lines.push(budgetLine(data, cfg, prices, 'task', name));
    if (scope === 'job' && own(data.jobs, name)) lines.push(budgetLine(data, cfg, prices, 'job', name));
  }
  return lines.filter((l): l is BudgetLine => l !== null);
}

/** The budgets that apply to an item, widest first: the session's, its agent's, its task's, its own. */
export function budgetsOf(data: RegistryData, cfg: BudgetConfig, prices: PriceTable, item: WorkItem): BudgetLine[] {
  const agent = item.kind === 'job' ? (item.j.agent ?? item.j.target) : item.m.toAgent;
  const lines = [budgetLine(data, cfg, prices, 'session', null), budgetLine(data, cfg, prices, 'agent', agent)];
  if (item.kind === 'job') {
    if (item.j.task) lines.push(budgetLine(data, cfg, prices, 'task', item.j.task));
    lines.push(budgetLine(data, cfg, prices, 'job', item.j.id));
  }
  return lines.filter((l): l is BudgetLine => l !== null);
}

const n = (x: number) => x.toLocaleString('en-US');
const usd = (x: number) => `$${x.toFixed(x < 1 ? 4 : 2)}`;

export function describeBudget(l: Pick<BudgetLine, 'scope' | 'name'>): string {
  return l.scope === 'session' ? "the session's budget" : `${l.scope} ${l.name}'s budget`;
}

/** The command that lets the item go on. */
export function raiseHint(l: Pick<BudgetLine, 'scope' | 'name'>, what: 'tokens' | 'usd'): string {
  return `jaggers budget raise ${l.scope === 'session' ? 'session' : `${l.scope} ${l.name}`} --${what} <more>`;
}

/**
 * The first budget that applies to the item and is reached (spent at or past its limit); null when the
 * item may go in. An item in flight, or a compaction (it makes the context smaller), is never held.
 */
export function overBudget(data: RegistryData, cfg: BudgetConfig, prices: PriceTable, item: WorkItem): OverBudget | null {
  if (item.kind === 'job' && item.j.work === 'compact') return null;
  for (const l of budgetsOf(data, cfg, prices, item)) {
    const hit: ['tokens' | 'usd', number, number] | null =
      l.limit.tokens !== undefined && l.spent.tokens >= l.limit.tokens
        ? ['tokens', l.spent.tokens, l.limit.tokens]
        : l.limit.usd !== undefined && l.spent.usd >= l.limit.usd
          ? ['usd', l.spent.usd, l.limit.usd]
          : null;
    if (!hit) continue;
    const [what, spent, limit] = hit;
    const figures = what === 'tokens' ? `${n(spent)} of ${n(limit)} tokens spent` : `${usd(spent)} of ${usd(limit)} spent`;
    return {
      scope: l.scope,
      name: l.name,
      key: l.key,
      what,
      spent,
      limit,
      text: `over_budget: ${describeBudget(l)} is reached (${figures}); \`${raiseHint(l, what)}\` lets it go on`,
    };
  }
  return null;
}
