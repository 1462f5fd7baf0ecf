// A pane's processes: waiting for its process group to exit. The HOME of a pane's process is read
// in src/panes/process-home.ts (the pane watcher's), re-exported here for the launcher and the turns.
import { groupRuns, untilGone } from '../proc-state.js';

export { homeOfPid } from '../panes/process-home.js';

/**
 * Until the process group `pgid` (a pane's program and its children) has exited, looking every 50 ms;
 * after `graceMs` it gets SIGTERM, and SIGKILL a second later. A CLI that exits by itself on the hangup
 * its pane's close sends cleans up after itself (gemini removes an unused session file).
 */
export async function waitGroupGone(pgid: number, graceMs = 10_000): Promise<void> {
  if (await untilGone(() => groupRuns(pgid), graceMs)) return;
  for (const sig of ['SIGTERM', 'SIGKILL'] as const) {
    try {
      process.kill(-pgid, sig);
    } catch {
      return;
    }
    if (await untilGone(() => groupRuns(pgid), 1000)) return;
  }
}
