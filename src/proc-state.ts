// Whether a process (or a process group) still runs, told apart from a zombie: a process killed with
// SIGKILL stays a zombie until its parent reaps it (tmux 3.3a took seconds, or until the next event),
// and `kill(pid, 0)` succeeds on a zombie. Linux's /proc says which it is; elsewhere the signal check.
import { readdirSync, readFileSync } from 'node:fs';

/** State letter and process group of a pid from /proc/<pid>/stat; null when it does not exist (or no /proc). */
function statOf(pid: number | string): { state: string; pgrp: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // `pid (comm) S ppid pgrp ...`: comm may hold spaces and parentheses, so split after the last `)`.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '?', pgrp: Number(rest[2]) };
}

const hasProc = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

function signalAlive(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Threads of a process still in /proc (a killed process's leader is a zombie while its other threads exit). */
function threads(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

/**
 * The process exists and is not a zombie whose threads have all exited. Its open files (a listening
 * socket) are released only when the last thread has gone, so a zombie leader with live threads still runs.
 */
export function processRuns(pid: number): boolean {
  if (!hasProc) return signalAlive(pid);
  const s = statOf(pid);
  if (s === null) return false;
  return (s.state !== 'Z' && s.state !== 'X') || threads(pid) > 1;
}

/** Some process of group `pgid` exists and is not a zombie. */
export function groupRuns(pgid: number): boolean {
  if (!hasProc) return signalAlive(-pgid);
  if (!signalAlive(-pgid)) return false;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(name);
    if (s && s.pgrp === pgid && s.state !== 'Z' && s.state !== 'X') return true;
  }
  return false;
}

/**
 * Until `runs()` says no (a process or group has gone), looking every 50 ms, for at most `timeoutMs`;
 * whether it went. Nothing tells when another process has exited, so this looks (bounded).
 */
export async function untilGone(runs: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (runs()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
