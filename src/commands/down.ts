import { clientFor } from '../api/connect.js';
import { checkTmux, describeSocket, serverRunning, stopServer, stopSupervisor } from '../api/session.js';
import { pidIsAlive, supervisorPid } from '../api/stored.js';
import type { Context } from '../context.js';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { HostDown } from './down-hosts.js';
import path from 'node:path';

export { supervisorPid };

/**
 * Stop the project's tmux server: every agent, and the supervisor, which exits when its server goes.
 * Returns once the supervisor is gone too (bounded), so the next command finds nothing half-stopped.
 */
export async function down(ctx: Context): Promise<{ stopped: boolean; socket: string; hosts: HostDown[] }> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const socket = describeSocket(ctx.server);
  // The hosts' sessions first (docs/hosts.md): each over its own ssh run, whether or not the supervisor still runs.
  // A running local supervisor lets go of them first, or it would start again the supervisors stopped there.
  const hasHosts = existsSync(path.join(ctx.jaggersDir, 'hosts'));
  if (hasHosts)
    await clientFor(ctx)
      .call('POST', '/v1/hosts/release')
      .catch(() => {});
  const hosts = hasHosts ? await (await import('./down-hosts.js')).downHosts(ctx) : [];
  // Every agent's hook files (`.jaggers/hooks/<terminalId>/`) go with its window; the next `up` writes them again.
  const dropHooks = () => rm(path.join(ctx.jaggersDir, 'hooks'), { recursive: true, force: true }).catch(() => {});
  if (!(await serverRunning(ctx.server))) {
    await dropHooks();
    return { stopped: false, socket, hosts };
  }
  const supervisor = await supervisorPid(ctx.jaggersDir);
  const gone = async (pid: number) => {
    const deadline = Date.now() + 5000;
    while (pidIsAlive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
  };
  // The supervisor leaves first (see stopSupervisor), at most 5 s.
  if (supervisor !== null && (await stopSupervisor(ctx, supervisor))) await gone(supervisor);
  await stopServer(ctx);
  if (supervisor) await gone(supervisor);
  await dropHooks();
  return { stopped: true, socket, hosts };
}
