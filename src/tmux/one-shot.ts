import { execFile } from 'node:child_process';
import { serverArgs, type TmuxServer } from './server.js';

/** One tmux process for one command: for the few calls made before (or without) a control client. */
export function runOneShot(server: TmuxServer, args: readonly string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(server.bin, [...serverArgs(server), ...args], { env: server.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
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
