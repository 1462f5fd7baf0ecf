import { createHash } from 'node:crypto';
import path from 'node:path';

/** Which tmux server to talk to. jaggers never uses the user's default server. */
export interface TmuxServer {
  /** `-L name` (a socket in tmux's socket folder) or `-S path`. */
  socket: { name: string } | { path: string };
  /** `-f file`; null means `/dev/null`, so a user's ~/.tmux.conf cannot change window numbering or sizes. */
  configFile: string | null;
  /** The tmux binary; `tmux` from PATH unless set. */
  bin: string;
  /** Environment for tmux processes (and so for a server they start). TMUX and TMUX_PANE are removed. */
  env: NodeJS.ProcessEnv;
}

/** `jaggers-` + 8 hex digits of the project folder's absolute path. */
export function socketNameFor(projectRoot: string): string {
  const hash = createHash('sha256').update(path.resolve(projectRoot)).digest('hex').slice(0, 8);
  return `jaggers-${hash}`;
}

/**
 * For a client whose output jaggers reads (one-shot commands, control mode): `-u` first. Without a UTF-8
 * locale (LANG unset: a login over ssh, cron) tmux 3.3a writes a tab in `-F` output as `_`, and every
 * tab-separated answer is misread.
 */
export function machineArgs(server: TmuxServer): string[] {
  return ['-u', ...serverArgs(server)];
}

export function serverArgs(server: TmuxServer): string[] {
  const socket = 'name' in server.socket ? ['-L', server.socket.name] : ['-S', server.socket.path];
  return [...socket, '-f', server.configFile ?? '/dev/null'];
}

export function tmuxEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  delete out.TMUX;
  delete out.TMUX_PANE;
  return out;
}

export function describeSocket(server: TmuxServer): string {
  return 'name' in server.socket ? `-L ${server.socket.name}` : `-S ${server.socket.path}`;
}
