// What a pane's program was doing when a wait for its screen failed: whether it still runs (a dead pane
// stays, remain-on-exit on, and its screen no longer changes), and if so the state, kernel wait channel,
// CPU time and age of it and of every process under it, so that a timeout explains itself.

import { readdirSync, readFileSync } from 'node:fs';

/** tmux's view of a pane's program. */
export interface PaneStatus {
  dead: boolean;
  pid: number;
  /** Exit status of a dead pane's program (undefined if a signal ended it, or it runs). */
  status?: number;
  /** Signal that ended a dead pane's program. */
  signal?: number;
  /** The tmux server's own pid (a stuck server stops reading the pane: its program blocks in its writes). */
  serverPid?: number;
}

/** The tmux format `paneStatus` asks for, and its reading. */
export const PANE_STATUS_FORMAT = '#{pane_dead} #{pane_pid} #{pane_dead_status} #{pane_dead_signal} #{pid}';

const num = (s: string | undefined): number | undefined => (s === undefined || s === '' ? undefined : Number(s));

export function parsePaneStatus(line: string): PaneStatus | undefined {
  const [dead, pid, status, signal, server] = line.trim().split(' ');
  const p = num(pid);
  if (p === undefined || Number.isNaN(p)) return undefined;
  return { dead: dead === '1', pid: p, status: num(status), signal: num(signal), serverPid: num(server) };
}

/** tmux says the pane's program ended but not how (it has not reaped it yet, or never will). */
export function endedHowUnknown(s: PaneStatus | undefined): s is PaneStatus & { dead: true; status: undefined; signal: undefined } {
  return s?.dead === true && s.status === undefined && s.signal === undefined;
}

/** How a dead pane's program ended, in words: `exited with status 3`, `killed by signal 15 (SIGTERM)`. */
export function howItEnded(s: PaneStatus): string {
  if (s.signal !== undefined) return `killed by signal ${s.signal}${SIGNALS[s.signal] ? ` (${SIGNALS[s.signal]})` : ''}`;
  if (s.status !== undefined) return `exited with status ${s.status}`;
  return 'exited';
}

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 7: 'SIGBUS', 9: 'SIGKILL', 11: 'SIGSEGV', 13: 'SIGPIPE', 15: 'SIGTERM' };

/** One process as /proc tells it. */
export interface ProcRow {
  pid: number;
  ppid: number;
  /** R running, S sleeping, D uninterruptible (disk), T stopped, Z zombie... */
  state: string;
  /** The kernel function it sleeps in (`do_wait`, `pipe_read`, `futex_wait_queue`...), `0` if running. */
  wchan: string;
  /** User plus system CPU time, ms. */
  cpuMs: number;
  /** Ticks since boot at its start (for its age). */
  startTicks: number;
  args: string;
}

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
export function parseStat(text: string): { state: string; ppid: number; utime: number; stime: number; start: number } | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state); utime, stime and starttime are fields 14, 15 and 22.
  const [state, ppid, utime, stime, start] = [f[0], f[1], f[11], f[12], f[19]];
  if (state === undefined || ppid === undefined || utime === undefined || stime === undefined || start === undefined) return undefined;
  return { state, ppid: Number(ppid), utime: Number(utime), stime: Number(stime), start: Number(start) };
}

/** Clock ticks per second of /proc's times: 100 on every Linux jaggers runs on. */
const HZ = 100;

function readProc(pid: number): ProcRow | undefined {
  try {
    const stat = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    if (stat === undefined) return undefined;
    const read = (f: string): string => {
      try {
        return readFileSync(`/proc/${pid}/${f}`, 'utf8');
      } catch {
        return '?';
      }
    };
    const args = read('cmdline').split('\0').filter(Boolean).join(' ');
    return {
      pid,
      ppid: stat.ppid,
      state: stat.state,
      wchan: read('wchan') || '0',
      cpuMs: ((stat.utime + stat.stime) * 1000) / HZ,
      startTicks: stat.start,
      args: args.length > 200 ? `${args.slice(0, 199)}…` : args,
    };
  } catch {
    return undefined;
  }
}

/** `pid` and every process under it, parents first. */
export function processTree(pid: number): ProcRow[] {
  let all: ProcRow[];
  try {
    all = readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map((n) => readProc(Number(n)))
      .filter((r): r is ProcRow => r !== undefined);
  } catch {
    return [];
  }
  const out: ProcRow[] = [];
  const add = (p: number): void => {
    const row = all.find((r) => r.pid === p);
    if (row === undefined || out.includes(row)) return;
    out.push(row);
    for (const child of all.filter((r) => r.ppid === p)) add(child.pid);
  };
  add(pid);
  return out;
}

/** One line per thread of `pid` (a CLI stuck in one thread, its event loop in another, says which). */
export function threadLines(pid: number): string[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      const stat = parseStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      const comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const wchan = readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'utf8') || '0';
      return stat === undefined ? [] : [`    thread ${tid} ${comm}: state ${stat.state} wchan ${wchan} cpu ${((stat.utime + stat.stime) * 1000) / HZ} ms`];
    } catch {
      return [];
    }
  });
}

function uptimeTicks(): number | undefined {
  try {
    return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * HZ;
  } catch {
    return undefined;
  }
}

/** One line per process: pid, state, wait channel, CPU time, age, arguments. */
export function formatTree(rows: ProcRow[], nowTicks: number | undefined): string {
  return rows
    .map((r) => {
      const age = nowTicks === undefined ? '?' : `${((nowTicks - r.startTicks) / HZ).toFixed(1)} s`;
      return `  pid ${r.pid} (parent ${r.ppid}) state ${r.state} wchan ${r.wchan} cpu ${r.cpuMs} ms age ${age}: ${r.args}`;
    })
    .join('\n');
}

function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').trim();
  } catch {
    return '?';
  }
}

/** The words a failed wait adds: how the pane's program ended, or what it and its children are doing. */
export function describePane(status: PaneStatus | undefined): string {
  if (status === undefined) return 'the pane is gone (no tmux server, or no such pane)';
  if (endedHowUnknown(status)) {
    // tmux saw its terminal close and has not reaped it (or missed its SIGCHLD): what the kernel says of it.
    const row = processTree(status.pid).slice(0, 1);
    return `the pane's program (pid ${status.pid}) exited; tmux does not say how${row.length ? `, and it is still there:\n${formatTree(row, uptimeTicks())}` : ''}`;
  }
  if (status.dead) return `the pane's program (pid ${status.pid}) ${howItEnded(status)}`;
  const rows = processTree(status.pid);
  if (rows.length === 0) return `the pane's program (pid ${status.pid}) runs; no /proc to say more`;
  const now = uptimeTicks();
  const server = status.serverPid === undefined ? [] : processTree(status.serverPid).slice(0, 1);
  return [
    `the pane's program runs (load average ${loadAverage()}):`,
    formatTree(rows.slice(0, 1), now),
    ...threadLines(status.pid),
    ...(rows.length > 1 ? [formatTree(rows.slice(1), now)] : []),
    ...(server.length ? [`the tmux server:\n${formatTree(server, now)}`] : []),
  ].join('\n');
}
