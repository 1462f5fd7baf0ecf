// A private tmux server for one test: its own socket name and TMUX_TMPDIR, no config file, TMUX and
// TMUX_PANE never inherited, so nothing here can reach the user's own tmux server.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { PANE_STATUS_FORMAT, parsePaneStatus, type PaneStatus } from './pane-diagnosis.js';

export interface PrivateTmux {
  socket: string;
  tmuxTmpdir: string;
  /** Runs `tmux -L <socket> -f /dev/null <args>`; rejects with tmux's stderr on failure. */
  run(args: string[]): Promise<string>;
  /** Starts the server with one window of `cols`x`rows` running `command` in `cwd` with exactly `env`. */
  start(opts: { command: string[]; cwd: string; env: Record<string, string>; cols?: number; rows?: number }): Promise<void>;
  /** The visible screen as text, trailing blank lines trimmed. */
  capture(): Promise<string>;
  /** Process id of the program in the pane (a process group leader), if the pane is alive. */
  panePid(): Promise<number | undefined>;
  /** Whether the pane's program runs, or how it ended (remain-on-exit keeps a dead pane); undefined without a pane. */
  paneStatus(): Promise<PaneStatus | undefined>;
  /** Kills the server and every process group it started; idempotent. */
  kill(): Promise<void>;
  /** kill(), then removes the TMUX_TMPDIR. */
  dispose(): Promise<void>;
}

let serial = 0;

export const SESSION = 'e2e';

export function trimScreen(text: string): string {
  const lines = text.split('\n').map((l) => l.replace(/\s+$/, ''));
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.join('\n');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22); null when there is no such process. */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * SIGTERM a process group, then SIGKILL it if it is still there after `graceMs`. With `started` (the
 * leader's processStart when it was recorded), a leader's pid now held by another process is left
 * alone: pids wrap within minutes on a busy machine (pid_max 32768), and the kernel hands a group id
 * out again only once nothing uses it, so a live process at that pid with another start time leads
 * someone else's group (another test's pane). `'gone'`: the leader is known dead, so any process at
 * that pid is another's, and only its orphans (while no process holds the pid) are signalled.
 */
export async function killGroup(pid: number, graceMs = 1500, started?: string | null): Promise<void> {
  const reused = (): boolean => {
    if (started === undefined || started === null) return false;
    const now = processStart(pid);
    return now !== null && now !== started;
  };
  if (reused()) return;
  const signal = (sig: NodeJS.Signals): void => {
    if (reused()) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  signal('SIGKILL');
}

export function createPrivateTmux(label: string): PrivateTmux {
  const tmuxTmpdir = mkdtempSync(join(tmpdir(), 'jaggers-e2e-tmux-'));
  const socket = `jaggers-e2e-${label}-${process.pid}-${++serial}`;
  /** Each pane's program this server ran, with its start time (see killGroup). */
  const pids = new Map<number, string | null>();
  let env: Record<string, string> = {};

  const tmuxEnv = (): Record<string, string> => {
    const e: Record<string, string> = { ...env, TMUX_TMPDIR: tmuxTmpdir };
    delete e.TMUX;
    delete e.TMUX_PANE;
    return e;
  };

  const run = async (args: string[]): Promise<string> => {
    const r = await execa('tmux', ['-L', socket, '-f', '/dev/null', ...args], {
      env: tmuxEnv(),
      extendEnv: false,
      reject: false,
    });
    if (r.exitCode !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${String(r.stderr).trim()}`);
    return String(r.stdout);
  };

  const paneStatus = async (): Promise<PaneStatus | undefined> => {
    try {
      return parsePaneStatus(await run(['display-message', '-p', '-t', SESSION, PANE_STATUS_FORMAT]));
    } catch {
      return undefined;
    }
  };

  const panePid = async (): Promise<number | undefined> => {
    const s = await paneStatus();
    return s === undefined || s.dead ? undefined : s.pid;
  };

  const kill = async (): Promise<void> => {
    const pid = await panePid();
    if (pid !== undefined) pids.set(pid, processStart(pid));
    await run(['kill-server']).catch(() => undefined);
    for (const [p, started] of pids) await killGroup(p, 1500, started);
    pids.clear();
  };

  return {
    socket,
    tmuxTmpdir,
    run,
    async start({ command, cwd, env: e, cols = 200, rows = 50 }) {
      env = e;
      // The env is the server's (it starts with this call), so the pane gets exactly `env`.
      await run([
        'new-session',
        '-d',
        '-s',
        SESSION,
        '-x',
        String(cols),
        '-y',
        String(rows),
        '-c',
        cwd,
        '--',
        ...command,
        ';',
        'set-option',
        '-g',
        'window-size',
        'manual',
        ';',
        'set-option',
        '-g',
        'remain-on-exit',
        'on',
        ';',
        'set-option',
        '-g',
        'history-limit',
        '5000',
      ]);
      const pid = await panePid();
      if (pid !== undefined) pids.set(pid, processStart(pid));
    },
    async capture() {
      return trimScreen(await run(['capture-pane', '-p', '-t', SESSION]));
    },
    panePid,
    paneStatus,
    kill,
    async dispose() {
      await kill();
      rmSync(tmuxTmpdir, { recursive: true, force: true });
    },
  };
}
