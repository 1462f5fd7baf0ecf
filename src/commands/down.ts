import { readFile } from 'node:fs/promises';
import { supervisorLockPath } from '../api/paths.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { lockPathFor, pidIsAlive } from '../sessions/lock.js';
import { killServer, serverRunning } from '../tmux/one-shot.js';
import { describeSocket } from '../tmux/server.js';
import { checkTmux } from '../tmux/version.js';

/** The supervisor's pid, from the lock it holds while it runs; null when none runs. */
export async function supervisorPid(jaggersDir: string): Promise<number | null> {
  try {
    const pid = (JSON.parse(await readFile(lockPathFor(supervisorLockPath(jaggersDir)), 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' && pidIsAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Stop the project's tmux server: every agent, and the supervisor, which exits when its server goes.
 * Returns once the supervisor is gone too (bounded), so the next command finds nothing half-stopped.
 */
export async function down(ctx: Context): Promise<{ stopped: boolean; socket: string }> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const socket = describeSocket(ctx.server);
  if (!(await serverRunning(ctx.server))) return { stopped: false, socket };
  const supervisor = await supervisorPid(ctx.jaggersDir);
  const r = await killServer(ctx.server);
  if (!r.ok) throw new JaggersError('E_TMUX_COMMAND', `tmux ${socket} kill-server failed: ${r.stderr}`);
  if (supervisor) {
    const deadline = Date.now() + 5000;
    while (pidIsAlive(supervisor) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
  }
  return { stopped: true, socket };
}
