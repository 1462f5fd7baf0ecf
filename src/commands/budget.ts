// `jaggers budget`: every budget (the session's, each agent's, task's and job's) with what it has spent;
// `jaggers budget raise`: more for one of them, journaled by the supervisor (docs/usage.md, Budgets).
import { withApi } from '../api/connect.js';
import { liveOrStored } from '../api/live-or-stored.js';
import type { Context } from '../context.js';
import type { BudgetScope } from '../usage/budget-schema.js';
import type { BudgetLine } from '../work/budget.js';
import type { BudgetsView, RaiseRequest } from '../work/budgets.js';
import { renderTable } from './render.js';

export async function budgets(ctx: Context): Promise<BudgetsView> {
  return liveOrStored(
    ctx,
    () => withApi(ctx, (api) => api.call<BudgetsView>('GET', '/v1/budgets'), { readOnly: true }),
    async (d) => {
      const { allBudgets } = await import('../work/budget.js');
      const { priceTable } = await import('../usage/prices.js');
      const p = await ctx.project();
      const agents: Record<string, NonNullable<NonNullable<typeof p>['budget']>> = {};
      for (const a of p?.agents ?? []) if (a.budget) agents[a.name] = a.budget;
      const prices = priceTable(p?.prices);
      return {
        budgets: allBudgets(d, { ...(p?.budget ? { session: p.budget } : {}), agents }, prices),
        prices: { taken: prices.taken, overridden: [...prices.overridden] },
      };
    },
  );
}

export async function raiseBudget(ctx: Context, scope: BudgetScope, name: string | undefined, o: { tokens?: number; usd?: number }): Promise<BudgetLine> {
  const body: RaiseRequest = {
    scope,
    ...(name !== undefined ? { name } : {}),
    ...(o.tokens !== undefined ? { tokens: o.tokens } : {}),
    ...(o.usd !== undefined ? { usd: o.usd } : {}),
    by: ctx.env.JAGGERS_TERMINAL_ID ?? 'user',
  };
  return withApi(ctx, (api) => api.call<BudgetLine>('POST', '/v1/budgets/raise', body));
}

const n = (x: number) => x.toLocaleString('en-US');
const usd = (x: number) => `$${x.toFixed(x < 1 ? 4 : 2)}`;

export function budgetName(l: Pick<BudgetLine, 'scope' | 'name'>): string {
  return l.scope === 'session' ? 'session' : `${l.scope} ${l.name}`;
}

/** `reached` when spent is at or past a limit: the next item of that budget waits `over_budget`. */
export function budgetState(l: BudgetLine): 'ok' | 'reached' {
  const t = l.limit.tokens !== undefined && l.spent.tokens >= l.limit.tokens;
  const u = l.limit.usd !== undefined && l.spent.usd >= l.limit.usd;
  return t || u ? 'reached' : 'ok';
}

export function renderBudgets(v: BudgetsView): string {
  if (v.budgets.length === 0)
    return 'no budgets: give one in jaggers.json ("budget", per agent or for the session), or with `assign`/`run --budget-tokens N --budget-usd N`\n';
  const rows = v.budgets.map((l) => [
    budgetName(l),
    l.limit.tokens !== undefined ? `${n(l.spent.tokens)} / ${n(l.limit.tokens)}` : `${n(l.spent.tokens)}`,
    l.limit.usd !== undefined ? `${usd(l.spent.usd)}${l.spent.unpriced.length ? ' + ?' : ''} / ${usd(l.limit.usd)}` : '-',
    budgetState(l),
  ]);
  const lines = [renderTable(['BUDGET', 'TOKENS', 'USD', 'STATE'], rows).trimEnd()];
  const unpriced = [...new Set(v.budgets.filter((l) => l.limit.usd !== undefined).flatMap((l) => l.spent.unpriced))].sort();
  if (unpriced.length) lines.push(`no price for ${unpriced.join(', ')}: not held to usd budgets (give one in jaggers.json "prices")`);
  return `${lines.join('\n')}\n`;
}

export function renderRaised(l: BudgetLine): string {
  const parts = [
    ...(l.limit.tokens !== undefined ? [`${n(l.spent.tokens)} of ${n(l.limit.tokens)} tokens`] : []),
    ...(l.limit.usd !== undefined ? [`${usd(l.spent.usd)} of ${usd(l.limit.usd)}`] : []),
  ];
  return `${budgetName(l)}: ${parts.join(', ')} (${budgetState(l)})\n`;
}
