// After a `compact` item's command went in: until the CLI is done compacting, so that the agent's next
// item is not typed into a compaction (opencode 1.18.33 took a prompt typed then as read, and its turn
// "ended" with the compaction's own idle, the prompt never sent to the model). The compaction is over
// when the pane was busy after the command and is ready again; a pane that shows no busy within
// `busyWithinMs` (a command that ended at once, or a CLI whose compaction draws nothing jaggers reads
// as busy) is taken as done when ready. A question on screen, a limit or the pane's end stop the wait
// too: the next item's delivery says what the agent waits for.
import { JaggersError } from '../errors.js';
import type { PaneStatusSource } from '../delivery/ports.js';

export interface CompactionWait {
  paneId: string;
  agent: string;
  /** The statuses in which the agent takes input (its profile's `delivery.ready`). */
  ready: readonly string[];
  busyWithinMs?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Resolves with how it ended: `busy-then-ready`, `ready` (no busy seen), or the status that stopped it. */
export function compactionOver(status: PaneStatusSource, w: CompactionWait): Promise<string> {
  const { busyWithinMs = 3000, timeoutMs = 300_000 } = w;
  const ready = new Set(w.ready);
  const stops = new Set(['waiting_input', 'limited', 'exited']);
  return new Promise<string>((resolve, reject) => {
    let busySeen = false;
    let finished = false;
    const finish = (how: string | Error) => {
      if (finished) return;
      finished = true;
      off();
      clearTimeout(quiet);
      clearTimeout(timer);
      w.signal?.removeEventListener('abort', aborted);
      if (how instanceof Error) reject(how);
      else resolve(how);
    };
    const check = (now: string | undefined) => {
      if (now === undefined) return;
      if (now === 'busy') busySeen = true;
      else if (stops.has(now) && !ready.has(now)) finish(now);
      else if (busySeen && ready.has(now)) finish('busy-then-ready');
    };
    const off = status.onChange((c) => c.pane.paneId === w.paneId && check(c.status));
    const quiet = setTimeout(() => {
      if (!busySeen && ready.has(status.status(w.paneId) ?? '')) finish('ready');
    }, busyWithinMs);
    const timer = setTimeout(
      () =>
        finish(
          new JaggersError('E_TIMEOUT', `${w.agent} was still compacting after ${Math.round(timeoutMs / 1000)} s (${status.status(w.paneId) ?? 'unknown'})`),
        ),
      timeoutMs,
    );
    const aborted = () => finish('aborted');
    w.signal?.addEventListener('abort', aborted);
    check(status.status(w.paneId));
  });
}
