import { setWindowOption } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { StatusChange } from '../panes/watcher.js';

/** The attention mark each window has now, as this process set it: unchanged, it is not set again. */
const attention = new Map<string, string | null>();

/** Note a mark set elsewhere (a notice of a failed turn), so the next state change clears it. */
export function noteAttention(windowId: string, value: string | null): void {
  attention.set(windowId, value);
}

/**
 * Put a pane's state on its window as a user option, for the status line; the window is marked
 * (`@jaggers_attention`) while the agent waits for a person. The attention mark goes with the state, in
 * one burst of commands, so the status line's next redraw shows both. (What decided the state is the
 * API's to tell: `GET /v1/terminals/<agent>`; writing it into tmux on every change cost a command each.)
 */
export async function publishStatus(c: ControlClient, change: StatusChange): Promise<void> {
  const target = change.pane.windowId;
  const mark = change.status === 'waiting_input' ? 'waiting_input' : null;
  const same = attention.has(target) && attention.get(target) === mark;
  if (attention.size > 10_000) attention.clear();
  attention.set(target, mark);
  await Promise.all([...(same ? [] : [setWindowOption(c, target, '@jaggers_attention', mark)]), setWindowOption(c, target, '@jaggers_state', change.status)]);
}
