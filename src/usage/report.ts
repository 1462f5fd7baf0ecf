// `jaggers usage`, `GET /v1/usage` and the MCP tool `usage`: the registry's token sums by agent, job,
// task, session, day or model, each with its cost. Pure: data in, a view out.
import type { RegistryData } from '../sessions/registry.js';
import { costOf, type PriceTable } from './prices.js';
import { addByModel, sumTokens, totalOf, type ByModel, type Tokens } from './tokens.js';
import type { UsageBy } from './by.js';

export { USAGE_BY, type UsageBy } from './by.js';

export interface UsageRow extends Tokens {
  key: string;
  /** All four kinds of token together. */
  total: number;
  /** USD of the models that have a price (docs/usage.md). */
  usd: number;
  /** Models with tokens and no price: their cost is not in `usd`. */
  unpriced: string[];
  models: ByModel;
}

export interface UsageView {
  by: UsageBy;
  rows: UsageRow[];
  total: UsageRow;
  /** Turns with usage recorded. */
  turns: number;
  prices: { taken: string; source: string; overridden: string[] };
  /** `by: job`: only the jobs the registry's snapshot still keeps are listed (the sums by agent, task, day keep all). */
  note?: string;
}

export function usageRow(key: string, models: ByModel, prices: PriceTable): UsageRow {
  const t = totalOf(models);
  return { key, ...t, total: sumTokens(t), ...costOf(prices, models), models };
}

function groups(data: RegistryData, by: UsageBy): Record<string, ByModel> {
  const u = data.usage;
  switch (by) {
    case 'agent':
      return u.agents;
    case 'task':
      return u.tasks;
    case 'session':
      return u.sessions;
    case 'day':
      return u.days;
    case 'job': {
      const out: Record<string, ByModel> = {};
      for (const j of Object.values(data.jobs)) if (j.usage) out[j.id] = j.usage;
      return out;
    }
    case 'model': {
      const out: Record<string, ByModel> = {};
      for (const [m, t] of Object.entries(allOf(data))) out[m] = { [m]: t };
      return out;
    }
  }
}

/** Every token recorded, per model (the sum over agents holds every turn). */
const allOf = (data: RegistryData): ByModel => Object.values(data.usage.agents).reduce<ByModel>((a, b) => addByModel(a, b), {});

export function usageReport(data: RegistryData, prices: PriceTable, by: UsageBy = 'agent'): UsageView {
  const rows = Object.entries(groups(data, by))
    .map(([k, m]) => usageRow(k, m, prices))
    .sort((a, b) => (by === 'day' ? a.key.localeCompare(b.key) : b.total - a.total || a.key.localeCompare(b.key)));
  return {
    by,
    rows,
    total: usageRow('total', allOf(data), prices),
    turns: data.usage.turns,
    prices: { taken: prices.taken, source: prices.source, overridden: [...prices.overridden] },
    ...(by === 'job' ? { note: 'jobs the registry still keeps (its last 500 ended ones); the other sums keep every turn' } : {}),
  };
}
