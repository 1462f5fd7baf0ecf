// What a million tokens cost, per model: the table that ships with jaggers (./prices.json, with the date
// it was taken and where from), overridden per model by jaggers.json's `"prices"`. A model in neither
// has no price: its tokens are counted and its cost is said to be unknown, never guessed. Pure.
import { z } from 'zod';
import shipped from './prices.json' with { type: 'json' };
import type { ByModel, Tokens } from './tokens.js';

const usd = z.number().nonnegative().finite();

/** One model's prices in jaggers.json: USD per million tokens; the cache prices default to the input price. */
export const PriceSchema = z.strictObject({ input: usd, output: usd, cacheRead: usd.optional(), cacheWrite: usd.optional() });
/** jaggers.json's `"prices"`: by model name, as the CLIs write it (`claude-sonnet-4-5`, `gpt-5-codex`...). */
export const PricesSchema = z.record(z.string().min(1).max(200), PriceSchema);

export type Price = Tokens;
export type PriceOverrides = z.infer<typeof PricesSchema>;

export interface PriceTable {
  /** When the shipped prices were taken (YYYY-MM-DD), and from where. */
  taken: string;
  source: string;
  models: Readonly<Record<string, Price>>;
  /** Models whose price comes from jaggers.json. */
  overridden: readonly string[];
}

const SHIPPED = shipped as { taken: string; source: string; models: Record<string, Price> };

export function priceTable(overrides: PriceOverrides = {}): PriceTable {
  const models: Record<string, Price> = { ...SHIPPED.models };
  for (const [m, p] of Object.entries(overrides))
    models[m] = { input: p.input, output: p.output, cacheRead: p.cacheRead ?? p.input, cacheWrite: p.cacheWrite ?? p.input };
  return { taken: SHIPPED.taken, source: SHIPPED.source, models, overridden: Object.keys(overrides) };
}

/** The model's price: by its name, else without a date suffix (`claude-sonnet-4-5-20250929` -> `claude-sonnet-4-5`). */
export function priceOf(t: PriceTable, model: string): Price | null {
  if (Object.hasOwn(t.models, model)) return t.models[model]!;
  const bare = model.replace(/-\d{8}$/, '');
  return bare !== model && Object.hasOwn(t.models, bare) ? t.models[bare]! : null;
}

export interface Cost {
  /** USD of the models that have a price. */
  usd: number;
  /** Models with tokens and no price: their cost is not in `usd`. */
  unpriced: string[];
}

export function costOf(t: PriceTable, by: ByModel): Cost {
  let total = 0;
  const unpriced: string[] = [];
  for (const [m, n] of Object.entries(by)) {
    const p = priceOf(t, m);
    if (!p) {
      if (n.input + n.output + n.cacheRead + n.cacheWrite > 0) unpriced.push(m);
      continue;
    }
    total += (n.input * p.input + n.output * p.output + n.cacheRead * p.cacheRead + n.cacheWrite * p.cacheWrite) / 1e6;
  }
  return { usd: Math.round(total * 1e6) / 1e6, unpriced: unpriced.sort() };
}
