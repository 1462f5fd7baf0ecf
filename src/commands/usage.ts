// `jaggers usage`: the tokens the agents spent and what they cost, by agent, job, task, session, day or
// model (docs/usage.md). From the supervisor, or from `.jaggers/` when no session runs.
import { withApi } from '../api/connect.js';
import { liveOrStored } from '../api/live-or-stored.js';
import type { Context } from '../context.js';
import type { UsageBy, UsageRow, UsageView } from '../usage/report.js';
import { renderTable } from './render.js';

export async function usage(ctx: Context, by: UsageBy): Promise<UsageView> {
  return liveOrStored(
    ctx,
    () => withApi(ctx, (api) => api.call<UsageView>('GET', `/v1/usage?by=${by}`), { readOnly: true }),
    async (d) => {
      const { usageReport } = await import('../usage/report.js');
      const { priceTable } = await import('../usage/prices.js');
      return usageReport(d, priceTable((await ctx.project())?.prices), by);
    },
  );
}

const n = (x: number) => x.toLocaleString('en-US');

/** `$1.2345`; with `+ ?` when some model has no price (named below the table). */
export function costText(r: Pick<UsageRow, 'usd' | 'unpriced' | 'total'>): string {
  if (r.total === 0) return '-';
  const usd = r.usd > 0 || r.unpriced.length === 0 ? `$${r.usd.toFixed(4)}` : '';
  return r.unpriced.length === 0 ? usd : usd ? `${usd} + ?` : '?';
}

/** One line for `status`, `show` and `jobs`: `12,345 tokens ($0.0123)`. */
export function usageLine(r: Pick<UsageRow, 'usd' | 'unpriced' | 'total'>): string {
  return `${n(r.total)} tokens (${costText(r)})`;
}

export function renderUsage(v: UsageView): string {
  if (v.turns === 0) return "no usage recorded yet: it is read from the CLIs' own records when a turn ends (docs/usage.md)\n";
  const row = (r: UsageRow) => [r.key, n(r.input), n(r.output), n(r.cacheRead), n(r.cacheWrite), n(r.total), costText(r)];
  const table = renderTable([v.by.toUpperCase(), 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'TOTAL', 'COST'], [...v.rows.map(row), row(v.total)]);
  const lines = [table.trimEnd()];
  if (v.total.unpriced.length > 0) lines.push(`no price for ${v.total.unpriced.join(', ')}: give one in jaggers.json "prices" (USD per million tokens)`);
  lines.push(`prices taken ${v.prices.taken}${v.prices.overridden.length ? `; from jaggers.json: ${v.prices.overridden.join(', ')}` : ''}`);
  if (v.note) lines.push(v.note);
  return `${lines.join('\n')}\n`;
}
