import { setWindowOption } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { StatusChange } from '../panes/watcher.js';

export interface PublishedStatus {
  state: string;
  since: string;
  rule: string | null;
  lines: string[];
  source: string;
  turns: number;
}

/**
 * Put a pane's status on its window as user options, for the status line and the e2e rig; the window is
 * marked (`@jaggers_attention`) while the agent waits for a person. The attention mark goes with the
 * state, in one burst of commands, so the status line's next redraw shows both.
 */
/** The attention mark each window has now, as this process set it: unchanged, it is not set again. */
const attention = new Map<string, string | null>();

/** Note a mark set elsewhere (a notice of a failed turn), so the next state change clears it. */
export function noteAttention(windowId: string, value: string | null): void {
  attention.set(windowId, value);
}

export async function publishStatus(c: ControlClient, change: StatusChange): Promise<void> {
  const why: PublishedStatus = {
    state: change.status,
    since: new Date(change.since).toISOString(),
    rule: change.rule,
    lines: change.lines.map((l) => l.slice(0, 300)),
    source: change.source,
    turns: change.turns,
  };
  const target = change.pane.windowId;
  const mark = change.status === 'waiting_input' ? 'waiting_input' : null;
  const same = attention.has(target) && attention.get(target) === mark;
  if (attention.size > 10_000) attention.clear();
  attention.set(target, mark);
  await Promise.all([
    ...(same ? [] : [setWindowOption(c, target, '@jaggers_attention', mark)]),
    setWindowOption(c, target, '@jaggers_state', change.status),
    setWindowOption(c, target, '@jaggers_why', JSON.stringify(why)),
  ]);
}

export function parsePublished(text: string | null): PublishedStatus | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as PublishedStatus;
  } catch {
    return null;
  }
}
