// What the benchmark scripts share: a private world (project, HOME, TMUX_TMPDIR, socket) and readings
// of /proc for a process's CPU time and start, the machine's load and a percentile.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

/** The `p`th percentile of `xs` (nearest rank below), NaN for none. */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
export const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
export const cpuPressure = () => {
  try {
    return /some avg10=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? '?';
  } catch {
    return '?';
  }
};

/**
 * The CPU time (user + system, in microseconds) of creating one empty file in `dir`, the median of 5
 * rounds of 100: a reference for the supervisor's figures, which create a file per message. It is not
 * the same everywhere on one disk: on the machine of BENCHMARKS.md, 350-450 us under /tmp against
 * 15-25 us in other folders of the same ext4 file system (set TMPDIR to put a benchmark's world elsewhere).
 */
export const fileCreateUs = (dir) => {
  const at = path.join(dir, `.create-cost-${process.pid}`);
  mkdirSync(at);
  try {
    const rounds = [];
    for (let r = 0; r < 5; r++) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < 100; i++) closeSync(openSync(path.join(at, `${r}-${i}`), 'wx'));
      const c = process.cpuUsage(c0);
      rounds.push((c.user + c.system) / 100);
    }
    return pct(rounds, 50);
  } finally {
    rmSync(at, { recursive: true, force: true });
  }
};

/**
 * The garbage collections of this process while it runs: `within(start, end)` is the ms of collection
 * that fell between two performance.now() readings (a read's CPU time holds the collections that ran in
 * it, of garbage made before it or in it). Call `stop()` at the end.
 */
export const gcWatch = () => {
  const spans = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) spans.push([e.startTime, e.startTime + e.duration]);
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    within: (start, end) => spans.reduce((ms, [a, b]) => ms + Math.max(0, Math.min(b, end) - Math.max(a, start)), 0),
    stop: () => obs.disconnect(),
  };
};

/** Clock ticks per second, the unit of /proc/<pid>/stat's times. */
export const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
const statFields = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};
/** User + system CPU time of a process so far, in clock ticks. */
export const cpuTicks = (pid) => {
  const f = statFields(pid);
  return Number(f[11]) + Number(f[12]);
};
/** When a process started, in ms since the epoch (to the clock tick, 10 ms): its age from /proc/uptime. */
export const startedAt = (pid) => {
  const start = Number(statFields(pid)[19]) / ticks;
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return Date.now() - (uptime - start) * 1000;
};

/**
 * A private world under a new temporary folder: `root` (the project), `home`, `tmux` (TMUX_TMPDIR) and
 * any `extra` folders, a tmux socket of its own, and `env` with them and without the caller's tmux and
 * jaggers variables.
 */
export async function benchWorld(name, extra = []) {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), `jaggers-bench-${name}-`)));
  const dirs = Object.fromEntries(['project', 'home', 'tmux', ...extra].map((d) => [d, path.join(base, d)]));
  await Promise.all(Object.values(dirs).map((d) => mkdir(d, { recursive: true })));
  const socket = `jgbench-${name}-${path.basename(base).slice(-6)}`;
  const env = { ...process.env, HOME: dirs.home, TMUX_TMPDIR: dirs.tmux, JAGGERS_SOCKET: socket };
  for (const k of ['TMUX', 'TMUX_PANE', 'JAGGERS_TERMINAL_ID', 'JAGGERS_TASK_ID', 'JAGGERS_PROJECT', 'JAGGERS_LOG']) delete env[k];
  return { base, root: dirs.project, home: dirs.home, tmux: dirs.tmux, dirs, socket, env };
}

/**
 * The end of a world: its tmux server killed by its socket (once `started()` says there is one) and its
 * folder removed, at `end()` and on Ctrl-C (then exit 130). `before` runs first (closing event streams).
 */
export function worldEnd(world, before = () => {}) {
  let started = false;
  const kill = () => {
    before();
    if (started) spawnSync('tmux', ['-L', world.socket, 'kill-server'], { env: world.env });
    started = false;
  };
  process.once('SIGINT', () => {
    kill();
    rm(world.base, { recursive: true, force: true }).finally(() => process.exit(130));
  });
  return {
    started: () => void (started = true),
    end: async () => {
      kill();
      // JAGGERS_BENCH_KEEP=1: the world's folder stays (its .jaggers/ logs and journal), for a look after a failure.
      if (process.env.JAGGERS_BENCH_KEEP === '1') return void console.error(`kept ${world.base}`);
      await rm(world.base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}
