// What every usage reader keeps while it folds a CLI's file: the tokens per model so far, and the
// records counted. Pure.
import { addInto, type ByModel, type Tokens } from '../../usage/tokens.js';

export interface UsageState {
  byModel: ByModel;
  /** Usage records counted (API answers, after any dedupe). */
  records: number;
  /**
   * The last record counted: its prompt is how full the context is (docs/usage.md, Context); `at`: when
   * the CLI wrote it (ms since the epoch), where its record says.
   */
  last?: { model: string; tokens: Tokens; at?: number };
}

export const newUsageState = (): UsageState => ({ byModel: {}, records: 0 });

export function addRecord(s: UsageState, model: string, t: Tokens, at?: unknown): void {
  addInto(s.byModel, model, t);
  s.records++;
  const ms = typeof at === 'string' ? Date.parse(at) : NaN;
  s.last = Number.isFinite(ms) ? { model, tokens: t, at: ms } : { model, tokens: t };
}

/** A plain JSON object, else null. */
export const objectOf = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

export const isNumber = (v: unknown): v is number => typeof v === 'number' && !Number.isNaN(v);
