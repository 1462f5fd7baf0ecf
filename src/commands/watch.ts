// `ls --watch`, `status --watch`: redraw on every state change the supervisor streams (no timer).
import { hostApi, withApi } from '../api/connect.js';
import { startedHosts } from '../api/hosts.js';
import { onceSoon } from '../coalesced.js';
import type { Context } from '../context.js';

/** Calls `draw` now and after each burst of state events; follows a restarted supervisor; ends with the session. */
export async function watchStates(ctx: Context, draw: () => Promise<void>, signal?: AbortSignal, types = 'state,hello'): Promise<void> {
  const redraw = onceSoon(() => void draw().catch(() => {}));
  // The hosts' agents (docs/hosts.md): each host's supervisor's events too, through its forwarded socket.
  for (const h of startedHosts(ctx.jaggersDir)) void followHost(ctx, h.host, types, redraw, signal);
  let last: number | undefined;
  while (!signal?.aborted) {
    await withApi(
      ctx,
      (api) => {
        redraw();
        return api.events(
          `/v1/events?types=${types}`,
          (e) => {
            last = e.id;
            redraw();
          },
          { signal, ...(last !== undefined ? { lastEventId: last } : {}) },
        );
      },
      { readOnly: true },
    );
  }
}

/**
 * A host supervisor's state events, each a redraw; its stream ending (the connection dropped, the host's
 * supervisor gone) is one too, as `status` then says so; asked again a second later while watching.
 */
async function followHost(ctx: Context, host: string, types: string, redraw: () => void, signal?: AbortSignal): Promise<void> {
  const api = hostApi(ctx, host);
  while (!signal?.aborted) {
    await api.events(`/v1/events?types=${types}`, () => redraw(), { ...(signal ? { signal } : {}) }).catch(() => {});
    if (signal?.aborted) return;
    redraw();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}
