// A real supervisor in this process, for API tests that call its routes with fastify's `inject` (no
// socket, and the event loop it runs on is the test's, so its delays can be measured): the composition
// root on a private tmux server, with the real registry, journal and control connections.
import type { FastifyInstance } from 'fastify';
import { resolveContext, type Context } from '../../src/context.js';
import { DiskHealth, probeWrite } from '../../src/fs/disk-health.js';
import { silentLog } from '../../src/logger.js';
import { RegistryOwner } from '../../src/sessions/owner.js';
import { buildApp } from '../../src/supervisor/app.js';
import { compose, type Supervisor } from '../../src/supervisor/compose.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { openCommandControl, openControl } from '../../src/tmux/connect.js';
import type { Rig } from './rig.js';

export interface InProcess {
  ctx: Context;
  supervisor: Supervisor;
  hub: EventHub;
  app: FastifyInstance;
  /** What the app's `control` (POST/DELETE /v1/listen) was asked; nothing listens for real. */
  listens: string[];
  stop(): Promise<void>;
}

/** The supervisor of `rig`'s project, started here; its session's window 0 runs a shell that waits. */
export async function startInProcess(rig: Rig): Promise<InProcess> {
  await rig.tmux(['new-session', '-d', '-s', rig.session, '-n', 'jaggers', '-c', rig.root, '--', 'sleep', '100000']);
  const ctx = await resolveContext({}, rig.env, rig.root);
  const registry = await RegistryOwner.open(ctx.jaggersDir);
  const events = await openControl(ctx.server, ctx.session);
  const commands = await openCommandControl(ctx.server, ctx.session);
  const hub = new EventHub();
  const disk = new DiskHealth({ probe: probeWrite });
  const supervisor = compose({ ctx, events, commands, registry, log: silentLog, hub, version: 'test', socket: '(inject)', logFile: '(none)', disk });
  await supervisor.start();
  const listens: string[] = [];
  const app = buildApp({
    supervisor,
    hub,
    log: silentLog,
    session: ctx.session,
    control: {
      listen: async (a) => {
        listens.push(`${a.host}:${a.port}`);
        return `${a.host}:${a.port}`;
      },
      unlisten: async () => void listens.push('-'),
    },
  });
  await app.ready();
  return {
    ctx,
    supervisor,
    hub,
    app,
    listens,
    async stop() {
      supervisor.stop();
      await app.close().catch(() => {});
      await commands.close().catch(() => {});
      await events.close().catch(() => {});
      await registry.close().catch(() => {});
    },
  };
}
