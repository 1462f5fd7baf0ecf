// How full an agent's context is: the prompt of its session's last API answer (input and cache tokens,
// as the usage readers give them) as a share of its model's window. The windows ship in
// ./context-windows.json (with the date and source); jaggers.json's `"contextWindows"` overrides or adds
// per model. A model in neither has no known window: its share is unknown, never guessed. Pure.
import { z } from 'zod';
import shipped from './context-windows.json' with { type: 'json' };

export const ContextWindowsSchema = z.record(z.string().min(1).max(200), z.number().int().positive().max(1e9));
export type ContextWindowOverrides = z.infer<typeof ContextWindowsSchema>;

const SHIPPED = shipped as { taken: string; source: string; models: Record<string, number> };

/** The default threshold, in percent, at which a `context` event goes out (setting `compactAt`). */
export const DEFAULT_COMPACT_AT = 85;

export function contextWindows(overrides: ContextWindowOverrides = {}): Readonly<Record<string, number>> {
  return { ...SHIPPED.models, ...overrides };
}

/** The model's window: by its name, else without a date suffix; null when unknown. */
export function windowOf(windows: Readonly<Record<string, number>>, model: string): number | null {
  if (Object.hasOwn(windows, model)) return windows[model]!;
  const bare = model.replace(/-\d{8}$/, '');
  return bare !== model && Object.hasOwn(windows, bare) ? windows[bare]! : null;
}

export interface ContextUse {
  model: string;
  tokens: number;
  /** The model's window; null when unknown. */
  window: number | null;
  /** tokens / window, in percent with one decimal; null when the window is unknown. */
  percent: number | null;
}

export function contextUse(windows: Readonly<Record<string, number>>, last: { model: string; tokens: number }): ContextUse {
  const window = windowOf(windows, last.model);
  const percent = window ? Math.round((last.tokens / window) * 1000) / 10 : null;
  return { model: last.model, tokens: last.tokens, window, percent };
}

export interface ContextView extends ContextUse {
  /** The threshold in percent. */
  compactAt: number;
}
