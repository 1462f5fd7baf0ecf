// `capture` and `send`: an agent's screen, and text typed into its pane through the supervisor's queue.
import { withApi } from '../api/connect.js';
import type { InputResult, ScreenView } from '../api/types.js';
import type { Context } from '../context.js';

export async function capture(ctx: Context, agent: string, opts: { ansi?: boolean; history?: number }): Promise<ScreenView> {
  const q = new URLSearchParams();
  if (opts.ansi) q.set('ansi', '1');
  if (opts.history) q.set('history', String(opts.history));
  const qs = q.size ? `?${q}` : '';
  return withApi(ctx, (api) => api.call<ScreenView>('GET', `/v1/terminals/${encodeURIComponent(agent)}/screen${qs}`), { readOnly: true });
}

/** Type text and press Enter; resolves once the screen shows the agent took it (busy, an echo, or the text gone from the input box). */
export async function send(ctx: Context, agent: string, text: string): Promise<InputResult> {
  return withApi(ctx, (api) => api.call<InputResult>('POST', `/v1/terminals/${encodeURIComponent(agent)}/input`, { text }));
}
