// The supervisor process (window 0 of the session): one per project. It takes the supervisor lock,
// opens its log and the two control connections, watches every agent pane, serves the API on
// `.jaggers/jaggers.sock` (0600) and, when asked, on TCP with a bearer token; it draws the agents'
// table in window 0 and exits when the tmux server goes away or it is told to stop.
import { chmod, mkdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { apiSocketPath, serveConfigPath, supervisorLockPath } from '../api/paths.js';
import { atMostEvery } from '../coalesced.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import type { Terminal } from '../output.js';
import { packageRoot } from '../package-root.js';
import { acquireLock } from '../sessions/lock.js';
import { subscribe } from '../tmux/commands.js';
import { openCommandControl, openControl } from '../tmux/connect.js';
import { buildApp } from './app.js';
import { compose } from './compose.js';
import { RegistryOwner } from '../sessions/owner.js';
import { EventHub } from './event-hub.js';
import { logLevel, openSupervisorLog } from './log.js';
import { ensureToken, parseListen, type ListenAddress } from './tcp.js';
import { renderWindow0 } from './window0.js';
import { sweepTemps } from './sweep-temps.js';

async function version(): Promise<string> {
  try {
    return (JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Listen on a unix socket created 0600: the umask is narrowed while it is made, then chmod makes sure. */
async function listenUnix(app: ReturnType<typeof buildApp>, socket: string): Promise<void> {
  await mkdir(path.dirname(socket), { recursive: true, mode: 0o700 });
  // Only the lock holder gets here: a socket file left behind is a dead supervisor's.
  await unlink(socket).catch(() => {});
  const old = process.umask(0o177);
  try {
    await app.listen({ path: socket });
  } finally {
    process.umask(old);
  }
  await chmod(socket, 0o600);
}

export async function runSupervisor(ctx: Context, io: Terminal): Promise<void> {
  await mkdir(ctx.jaggersDir, { recursive: true, mode: 0o700 });
  await chmod(ctx.jaggersDir, 0o700).catch(() => {});
  const lock = await acquireLock(supervisorLockPath(ctx.jaggersDir), { timeoutMs: 5000 }).catch((e: Error) => {
    throw new JaggersError('E_SUPERVISOR_START', `another supervisor serves ${ctx.projectRoot}: ${e.message}`);
  });
  const { log, file: logFile, close: closeLog } = await openSupervisorLog(ctx.jaggersDir, logLevel(ctx.env));
  const socket = apiSocketPath(ctx.jaggersDir);
  const hub = new EventHub();
  let events: Awaited<ReturnType<typeof openControl>> | undefined;
  let commands: Awaited<ReturnType<typeof openControl>> | undefined;
  let registry: RegistryOwner | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  try {
    // The registry's one writer: its lock is held for the supervisor's whole life.
    registry = await RegistryOwner.open(ctx.jaggersDir, { onWarning: (w) => log.warn({}, w) });
    sweepTemps(ctx.jaggersDir, log);
    events = await openControl(ctx.server, ctx.session);
    commands = await openCommandControl(ctx.server, ctx.session);
    const supervisor = compose({ ctx, events, commands, registry, log, hub, version: await version(), socket, logFile });
    await supervisor.start();
    const errors: string[] = [];
    // For a person's eyes: four times a second at most, however fast the states change.
    const redraw = atMostEvery(250, () => {
      void supervisor.views.terminals(undefined, { fresh: false }).then(
        (rows) => {
          io.control('clear-screen');
          io.writeOut(renderWindow0(ctx.session, rows, errors, socket, logFile));
        },
        () => {},
      );
    });
    supervisor.watcher.onChange(redraw);
    // Windows made or closed by `up` (another client) and their tags: refresh the table from tmux.
    await subscribe(events, 'jaggers-agents', '@*', '#{@jaggers_agent}#{@jaggers_profile}');
    events.onNotification((name, args) => {
      const ours = name === 'subscription-changed' && (args[0] === 'jaggers-agents' || args[0] === 'jaggers-dead');
      if (ours || name === 'window-add' || name === 'window-close' || name === 'unlinked-window-close') void supervisor.refreshTable().then(redraw, () => {});
    });

    let tcp: ReturnType<typeof buildApp> | null = null;
    const closeTcp = async () => {
      await tcp?.close();
      tcp = null;
      supervisor.tcp = null;
    };
    const listenTcp = async (a: ListenAddress): Promise<string> => {
      await closeTcp();
      const token = await ensureToken(ctx.jaggersDir);
      const app = buildApp({ supervisor, hub, log, session: ctx.session, token });
      await app.listen({ host: a.host, port: a.port });
      const addr = app.server.address();
      tcp = app;
      supervisor.tcp = typeof addr === 'object' && addr ? `${addr.address}:${addr.port}` : `${a.host}:${a.port}`;
      log.info({ listen: supervisor.tcp }, 'API on TCP (bearer token in .jaggers/token)');
      return supervisor.tcp;
    };
    closers.push(closeTcp);
    const serve = await readFile(serveConfigPath(ctx.jaggersDir), 'utf8').catch(() => null);
    if (serve) {
      try {
        await listenTcp(parseListen((JSON.parse(serve) as { listen: string }).listen, serveConfigPath(ctx.jaggersDir)));
      } catch (e) {
        errors.push(`TCP: ${(e as Error).message}`);
        log.error({ err: (e as Error).message }, 'could not listen on TCP');
      }
    }

    // The unix socket last: once it answers, everything (TCP too) is up.
    const unix = buildApp({ supervisor, hub, log, session: ctx.session, control: { listen: (a) => listenTcp(a), unlisten: () => closeTcp() } });
    await listenUnix(unix, socket);
    closers.push(async () => {
      await unix.close();
      await unlink(socket).catch(() => {});
    });

    log.info({ socket, session: ctx.session, terminals: supervisor.table.list().length }, 'supervisor serving');
    hub.publish('hello', { pid: process.pid, session: ctx.session });
    redraw();
    const stopped = new Promise<string>((resolve) => {
      events!.onExit((why) => resolve(`tmux connection closed: ${why}`));
      for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => resolve(sig));
    });
    const why = await stopped;
    log.info({ why }, 'supervisor stopping');
    supervisor.stop();
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    await commands?.close().catch(() => {});
    await events?.close().catch(() => {});
    await registry?.close().catch(() => {});
    await lock.release().catch(() => {});
    await closeLog();
  }
}
