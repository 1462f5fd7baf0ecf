import { execa } from 'execa';
import { serverArgs, type TmuxServer } from './server.js';

/** One tmux process for one command: for the few calls made before a control client exists. */
export async function runOneShot(
  server: TmuxServer,
  args: readonly string[],
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const r = await execa(server.bin, [...serverArgs(server), ...args], {
    env: server.env,
    extendEnv: false,
    reject: false,
  });
  return { ok: r.exitCode === 0, stdout: String(r.stdout), stderr: String(r.stderr) };
}

export async function serverRunning(server: TmuxServer): Promise<boolean> {
  return (await runOneShot(server, ['list-sessions'])).ok;
}

export async function hasSession(server: TmuxServer, session: string): Promise<boolean> {
  return (await runOneShot(server, ['has-session', '-t', `=${session}`])).ok;
}
