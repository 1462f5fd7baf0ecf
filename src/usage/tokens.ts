// Token counts, the one shape every CLI's usage reader gives and every sum is kept in. `input` is the
// prompt's tokens that were not read from a cache (claude's `input_tokens`; codex's and gemini's input
// less their cached part), so that cost = input, output, cache read and cache write each times its price.
// Pure.

export interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Tokens per model name (`unknown` when the record names none). */
export type ByModel = Record<string, Tokens>;

export const ZERO: Readonly<Tokens> = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

export const FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

export function addTokens(a: Tokens, b: Tokens): Tokens {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite };
}

/**
 * A model name as a key: `unknown` for one that cannot be an own key of a plain object (`__proto__`,
 * which an assignment and the journal's schema would both drop) or is empty; at most 200 characters.
 */
export const modelKey = (m: string): string => (m === '' || m === '__proto__' ? 'unknown' : m.slice(0, 200));

/** Adds `t` to `into[model]` in place (the readers' running sums). */
export function addInto(into: ByModel, model: string, t: Tokens): void {
  const key = modelKey(model);
  const cur = Object.hasOwn(into, key) ? into[key]! : { ...ZERO };
  into[key] = addTokens(cur, t);
}

/** `a + b`, per model: a new map. */
export function addByModel(a: ByModel, b: ByModel): ByModel {
  const out: ByModel = { ...a };
  for (const [m, t] of Object.entries(b)) addInto(out, m, t);
  return out;
}

/**
 * What `now` holds beyond `before`, per model and field, never below zero: a turn's usage from its
 * session's totals before and after it. Models with nothing new are left out.
 */
export function subtractByModel(now: ByModel, before: ByModel): ByModel {
  const out: ByModel = {};
  for (const [m, t] of Object.entries(now)) {
    const b = Object.hasOwn(before, m) ? before[m]! : ZERO;
    const d = {
      input: Math.max(0, t.input - b.input),
      output: Math.max(0, t.output - b.output),
      cacheRead: Math.max(0, t.cacheRead - b.cacheRead),
      cacheWrite: Math.max(0, t.cacheWrite - b.cacheWrite),
    };
    if (d.input + d.output + d.cacheRead + d.cacheWrite > 0) out[m] = d;
  }
  return out;
}

/** More than any session spends: a count above it is taken as this, so every sum stays a safe integer. */
const MAX_COUNT = 1e12;

/**
 * Whole, non-negative, finite counts (what the journal takes): a file's `1e999`, `-5` or `2.5` cannot
 * refuse a turn's end.
 */
export function wholeCounts(by: ByModel): ByModel {
  const whole = (x: number) => (Number.isFinite(x) && x > 0 ? Math.min(Math.round(x), MAX_COUNT) : 0);
  const out: ByModel = {};
  for (const [m, t] of Object.entries(by)) {
    const key = modelKey(m);
    const cur = Object.hasOwn(out, key) ? out[key]! : ZERO;
    const w = { input: whole(t.input), output: whole(t.output), cacheRead: whole(t.cacheRead), cacheWrite: whole(t.cacheWrite) };
    const sum = addTokens(cur, w);
    out[key] = { input: whole(sum.input), output: whole(sum.output), cacheRead: whole(sum.cacheRead), cacheWrite: whole(sum.cacheWrite) };
  }
  return out;
}

/** All models together. */
export function totalOf(by: ByModel): Tokens {
  let t: Tokens = { ...ZERO };
  for (const v of Object.values(by)) t = addTokens(t, v);
  return t;
}

export const sumTokens = (t: Tokens): number => t.input + t.output + t.cacheRead + t.cacheWrite;

/** The four kinds and their sum, all models together: what `status`, `jobs` and `show` print. */
export interface TokenTotal extends Tokens {
  total: number;
}

export function tokenTotal(by: ByModel | null | undefined): TokenTotal | null {
  if (!by) return null;
  const t = totalOf(by);
  return { ...t, total: sumTokens(t) };
}

/** A count from a CLI's file: a finite number, else 0 (ccusage's rule for codex's fields). */
export const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `5,350 (input 1,312, output 966, cache read 3,072, cache write 0)`. */
export function tokensText(t: TokenTotal): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${n(t.total)} (input ${n(t.input)}, output ${n(t.output)}, cache read ${n(t.cacheRead)}, cache write ${n(t.cacheWrite)})`;
}
