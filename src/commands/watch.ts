// `ls --watch`, `status --watch`: redraw on every state change the supervisor streams (no timer).
import { withApi } from '../api/connect.js';
import { onceSoon } from '../coalesced.js';
import type { Context } from '../context.js';

/** Calls `draw` now and after each burst of state events; follows a restarted supervisor; ends with the session. */
export async function watchStates(ctx: Context, draw: () => Promise<void>, signal?: AbortSignal, types = 'state,hello'): Promise<void> {
  const redraw = onceSoon(() => void draw().catch(() => {}));
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
