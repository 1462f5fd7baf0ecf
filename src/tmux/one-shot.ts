import { execFile } from 'node:child_process';
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { machineArgs, type TmuxServer } from './server.js';

/** One tmux process for one command: for the few calls made before (or without) a control client. */
export function runOneShot(server: TmuxServer, args: readonly string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(server.bin, [...machineArgs(server), ...args], { env: server.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err && !('code' in err && typeof err.code === 'number') ? err.message : '')) });
    });
  });
}

export async function serverRunning(server: TmuxServer): Promise<boolean> {
  return (await runOneShot(server, ['list-sessions'])).ok;
}

export async function hasSession(server: TmuxServer, session: string): Promise<boolean> {
  return (await runOneShot(server, ['has-session', '-t', `=${session}`])).ok;
}

/** Window 0's pane (the supervisor's): its id, whether it is dead, its process and the command it was started with; null without one. */
export async function windowZero(server: TmuxServer, session: string): Promise<{ paneId: string; dead: boolean; pid: number | null; start: string } | null> {
  const r = await runOneShot(server, ['list-panes', '-t', `=${session}:0`, '-F', '#{pane_id}\t#{pane_dead}\t#{pane_pid}\t#{pane_start_command}']);
  if (!r.ok) return null;
  const [paneId, dead, pid, start] = r.stdout.split('\n')[0]!.split('\t');
  return paneId ? { paneId, dead: dead === '1', pid: Number(pid) || null, start: start ?? '' } : null;
}

/** Start `command` in window 0 (a new window 0, or in place of what runs in its pane). */
export async function runInWindowZero(
  server: TmuxServer,
  session: string,
  paneId: string | null,
  w: { cwd: string; env: Record<string, string>; command: readonly string[] },
): Promise<{ ok: boolean; stderr: string }> {
  const env = Object.entries(w.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const args = paneId
    ? ['respawn-pane', '-k', '-t', paneId, '-c', w.cwd, ...env, '--', ...w.command]
    : ['new-window', '-d', '-t', `=${session}:0`, '-n', 'jaggers', '-c', w.cwd, ...env, '--', ...w.command];
  return runOneShot(server, args);
}

export async function captureOneShot(server: TmuxServer, target: string): Promise<string> {
  return (await runOneShot(server, ['capture-pane', '-p', '-t', target])).stdout;
}

/** The session's windows with their agent and task tags; null when there is no such session. */
export async function taggedWindows(server: TmuxServer, session: string): Promise<{ windowId: string; agent: string; task: string }[] | null> {
  const r = await runOneShot(server, ['list-windows', '-t', `=${session}`, '-F', '#{window_id}\t#{@jaggers_agent}\t#{@jaggers_task}']);
  if (!r.ok) return null;
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [windowId, agent, task] = l.split('\t');
      return { windowId: windowId!, agent: agent ?? '', task: task ?? '' };
    });
}

export async function killServer(server: TmuxServer): Promise<{ ok: boolean; stderr: string }> {
  return runOneShot(server, ['kill-server']);
}

/** The server's socket file (`#{socket_path}`); null when no server answers. */
export async function socketPathOf(server: TmuxServer): Promise<string | null> {
  const r = await runOneShot(server, ['display-message', '-p', '#{socket_path}']);
  const p = r.stdout.trim();
  return r.ok && p ? p : null;
}

/** Whether something accepts connections on a unix socket file. */
function listening(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(file);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Remove a server's socket file once nobody listens on it: tmux leaves it behind after kill-server.
 * A server that is still exiting gets up to `ms`; a new server on the same socket keeps its file.
 */
export async function removeStaleSocket(file: string, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const st = await lstat(file).catch(() => null);
    if (!st?.isSocket()) return false;
    if (!(await listening(file)))
      return unlink(file).then(
        () => true,
        () => false,
      );
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Right after `kill-server` the old server may still hold its socket: a client that connects then is
 * dropped with it ("server exited unexpectedly"), while the next one starts a fresh server. Whoever
 * starts a server tries this many times, waiting `exitingServerPause` between tries.
 */
export const EXITING_SERVER_TRIES = 4;

/** The wait after try `attempt` (1-based): 100, 200, 400 ms. */
export function exitingServerPause(attempt: number): Promise<void> {
  return sleep(50 * 2 ** attempt);
}
