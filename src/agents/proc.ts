// What Linux tells about a pane's process: its environment (HOME, CODEX_HOME...) from /proc.
import { readFile } from 'node:fs/promises';
import { groupRuns, untilGone } from '../proc-state.js';

/** The environment of a running process, or null when it cannot be read (gone, not Linux). */
export async function envOfPid(pid: number): Promise<Record<string, string> | null> {
  try {
    const out: Record<string, string> = {};
    for (const kv of (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')) {
      const i = kv.indexOf('=');
      if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return out;
  } catch {
    return null;
  }
}

/** The HOME a pane's process runs with, falling back to `fallback`. */
export async function homeOfPid(pid: number, fallback: string): Promise<string> {
  return (await envOfPid(pid))?.HOME || fallback;
}

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
