// What a command may do with tmux itself, besides asking the supervisor: check tmux, start the session
// (window 0 runs the supervisor, which does everything else), attach a person's terminal, stop the
// server. Everything else about agents and panes goes through the API.
import path from 'node:path';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import {
  EXITING_SERVER_TRIES,
  exitingServerPause,
  hasSession,
  killServer,
  removeStaleSocket,
  runOneShot,
  serverRunning,
  socketPathOf,
  taggedWindows,
  windowZero,
} from '../tmux/one-shot.js';
import { describeSocket, serverArgs, socketNameFor } from '../tmux/server.js';
import { checkTmux } from '../tmux/version.js';
import { supervisorCommand, supervisorEnv } from './ensure.js';

export { checkTmux, describeSocket, serverArgs, serverRunning, socketNameFor, taggedWindows };

export function socketArg(ctx: Context): string {
  return 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
}

/**
 * The session, made when missing: window 0 runs the supervisor, at `size` (the agents' windows get
 * theirs when the supervisor opens them). Two commands at once make one session.
 */
export async function ensureSession(ctx: Context, size: { width: number; height: number }): Promise<void> {
  if (await hasSession(ctx.server, ctx.session)) return;
  const env = Object.entries(supervisorEnv(ctx)).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // remain-on-exit first, in the same tmux call: a supervisor that dies as it starts leaves window 0 (and
  // the session) with what it printed, for the command to report, instead of taking the session along.
  const args = [
    'start-server',
    ';',
    'set-option',
    '-g',
    'remain-on-exit',
    'on',
    ';',
    'new-session',
    '-d',
    '-s',
    ctx.session,
    '-n',
    'jaggers',
    '-x',
    String(size.width),
    '-y',
    String(size.height),
    '-c',
    path.resolve(ctx.projectRoot),
    ...env,
    '--',
    ...supervisorCommand(ctx),
  ];
  // A server still exiting after `kill-server` drops the client (see EXITING_SERVER_TRIES).
  for (let attempt = 1; ; attempt++) {
    const r = await runOneShot(ctx.server, args);
    if (r.ok || (await hasSession(ctx.server, ctx.session))) return;
    if (attempt < EXITING_SERVER_TRIES && /server exited unexpectedly/.test(r.stderr)) {
      await exitingServerPause(attempt);
      continue;
    }
    throw new JaggersError('E_TMUX_COMMAND', `tmux ${describeSocket(ctx.server)} could not start session ${ctx.session}: ${r.stderr.trim()}`);
  }
}

/**
 * Ask the supervisor `pid` to stop (SIGTERM, as when it stops by itself), when it is the process in the
 * session's window 0: a pid the lock file names may have been reused. It leaves tmux with its
 * connections' subscriptions removed; a tmux 3.3a server killed while a control client with a
 * subscription is still attached can crash (docs/tmux-and-node-facts.md). Whether it was asked.
 */
export async function stopSupervisor(ctx: Pick<Context, 'server' | 'session'>, pid: number): Promise<boolean> {
  const zero = await windowZero(ctx.server, ctx.session);
  if (!zero || zero.dead || zero.pid !== pid) return false;
  try {
    process.kill(pid, 'SIGTERM');
    return true;
  } catch {
    return false;
  }
}

/** Stop the project's tmux server (every agent, and the supervisor with it), and remove its socket file. */
export async function stopServer(ctx: Pick<Context, 'server'>): Promise<void> {
  const socket = await socketPathOf(ctx.server);
  const r = await killServer(ctx.server);
  if (!r.ok) throw new JaggersError('E_TMUX_COMMAND', `tmux ${describeSocket(ctx.server)} kill-server failed: ${r.stderr}`);
  if (socket) await removeStaleSocket(socket);
}
