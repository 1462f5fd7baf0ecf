import { setWindowOption } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { realClock, type Clock, type TimerHandle } from '../panes/clock.js';
import type { StatusChange } from '../panes/watcher.js';

/** The attention mark each window has now, as this process set it: unchanged, it is not set again. */
const attention = new Map<string, string | null>();

/** Note a mark set elsewhere (a notice of a failed turn), so the next state change clears it. */
export function noteAttention(windowId: string, value: string | null): void {
  attention.set(windowId, value);
}

/**
 * A window's state is set at most this often: a later change within the gap goes at its end, the last
 * one winning. tmux reads the option for the status line and for subscribers once a second, so a turn
 * shorter than that (busy, then done) showed as no change anyway; setting each cost a command.
 */
export const STATE_GAP_MS = 500;

type Shown = { state: string | null; want: string; timer: TimerHandle | null };

/**
 * Put a pane's state on its window as a user option, for the status line; the window is marked
 * (`@jaggers_attention`) while the agent waits for a person. A change of the mark goes at once, with
 * the state, in one burst of commands, so the status line's next redraw shows both; other changes of
 * the state go at most every STATE_GAP_MS per window. (What decided the state is the API's to tell:
 * `GET /v1/terminals/<agent>`; writing it into tmux on every change cost a command each.)
 */
export function statusLine(c: ControlClient, clock: Clock = realClock): (change: StatusChange) => Promise<void> {
  const windows = new Map<string, Shown>();
  const set = (target: string, w: Shown): Promise<void> => {
    w.state = w.want;
    w.timer = clock.setTimeout(() => {
      w.timer = null;
      if (w.want !== w.state) void set(target, w).catch(() => {});
      else windows.delete(target);
    }, STATE_GAP_MS);
    return setWindowOption(c, target, '@jaggers_state', w.want);
  };
  return async (change) => {
    const target = change.pane.windowId;
    const mark = change.status === 'waiting_input' ? 'waiting_input' : null;
    const same = attention.has(target) && attention.get(target) === mark;
    if (attention.size > 10_000) attention.clear();
    attention.set(target, mark);
    let w = windows.get(target);
    if (!w) windows.set(target, (w = { state: null, want: change.status, timer: null }));
    w.want = change.status;
    if (same && w.timer !== null) return; // within the gap: its end sets the latest state
    if (w.timer !== null) clock.clearTimeout(w.timer);
    await Promise.all([...(same ? [] : [setWindowOption(c, target, '@jaggers_attention', mark)]), set(target, w)]);
  };
}
