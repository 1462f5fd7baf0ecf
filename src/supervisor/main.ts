// The supervisor process (window 0 of the session): one per project. It takes the supervisor lock,
// opens its log and the two control connections, watches every agent pane, serves the API on
// `.jaggers/jaggers.sock` (0600) and, when asked, on TCP with a bearer token; it draws the agents'
// table in window 0 and exits when the tmux server goes away or it is told to stop.
import { chmod, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { apiSocketPath, serveConfigPath, supervisorLockPath } from '../api/paths.js';
import { atMostEvery } from '../coalesced.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { describeFailure, DiskHealth, isDiskError, onWriteFailure, probeWrite, writeFailed } from '../fs/disk-health.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { Terminal } from '../output.js';
import { packageRoot } from '../package-root.js';
import { acquireLock } from '../sessions/lock.js';
import { openCommandControl, openControl } from '../tmux/connect.js';
import { buildApp } from './app.js';
import { compose } from './compose.js';
import { RegistryOwner } from '../sessions/owner.js';
import { EventHub } from './event-hub.js';
import { logLevel, openSupervisorLog } from './log.js';
import { checkExposure, ensureToken, formatAddress, isLoopback, listenFailed, parseListen, type ListenAddress } from './tcp.js';
import { renderWindow0 } from './window0.js';
import { sweepTemps } from './sweep-temps.js';
import { WebListener } from '../web/listener.js';

// What window 0's entry (src/supervise.ts) takes from this bundle besides runSupervisor: one copy of the
// context's code (its project file's parser, zod) in the process.
export { resolveContext } from '../context.js';

async function version(): Promise<string> {
  try {
    return (JSON.parse(await readFile(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Listen on a unix socket created 0600 in a folder of ours that nobody else can write into (checked: under
 * the temp folder anyone could have made it first); the umask is narrowed while it is made, then chmod makes sure.
 */
async function listenUnix(app: ReturnType<typeof buildApp>, socket: string): Promise<void> {
  await ensurePrivateFolder(path.dirname(socket));
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
  await ensurePrivateFolder(ctx.jaggersDir);
  const lock = await acquireLock(supervisorLockPath(ctx.jaggersDir), { timeoutMs: 5000 }).catch((e: Error) => {
    throw new JaggersError('E_SUPERVISOR_START', `another supervisor serves ${ctx.projectRoot}: ${e.message}`);
  });
  // Every write the disk refuses (the log's, the journal's, a job's file) reaches this one handler.
  const disk = new DiskHealth({ probe: probeWrite });
  const offDisk = onWriteFailure((file, e) => disk.failed(file, e));
  // A disk error nobody caught (a background write) is recorded, not the end of the supervisor; any other is.
  const onRejection = (e: unknown) => {
    if (!isDiskError(e)) throw e;
    // An E_DISK_FULL was reported where it happened; a bare errno error names its path itself.
    if (!(e instanceof JaggersError)) writeFailed((e as { path?: string }).path ?? ctx.jaggersDir, e);
  };
  process.on('unhandledRejection', onRejection);
  const { log, file: logFile, close: closeLog } = await openSupervisorLog(ctx.jaggersDir, logLevel(ctx.env));
  const socket = apiSocketPath(ctx.jaggersDir);
  const hub = new EventHub();
  let events: Awaited<ReturnType<typeof openControl>> | undefined;
  let commands: Awaited<ReturnType<typeof openControl>> | undefined;
  let registry: RegistryOwner | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  // Set the moment the supervisor decides to stop: from then on every request is refused (E_SUPERVISOR_STOPPING)
  // rather than taken and dropped, and the socket is gone, so clients start the next supervisor at once.
  let stopping = false;
  try {
    // The registry's one writer: its lock is held for the supervisor's whole life.
    registry = await RegistryOwner.open(ctx.jaggersDir, { onWarning: (w) => log.warn({}, w) });
    sweepTemps(ctx.jaggersDir, log);
    events = await openControl(ctx.server, ctx.session);
    commands = await openCommandControl(ctx.server, ctx.session);
    const supervisor = compose({ ctx, events, commands, registry, log, hub, version: await version(), socket, logFile, disk });
    await supervisor.start();
    closers.push(() => supervisor.hosts.close());
    const errors: string[] = [];
    // For a person's eyes: four times a second at most, however fast the states change.
    // A table the same as the one on screen is not written again (a write to the pane is tmux's work too).
    let shown: string | null = null;
    const redraw = atMostEvery(250, () => {
      void supervisor.views.terminals(undefined, { fresh: false }).then(
        (rows) => {
          const table = renderWindow0(ctx.session, rows, errors, socket, logFile);
          if (table === shown) return;
          shown = table;
          io.control('clear-screen');
          io.writeOut(table);
        },
        () => {},
      );
    });
    supervisor.watcher.onChange(redraw);
    // A failing disk is said in window 0, on stderr and in the log (when the log itself can be written).
    let diskLine: string | null = null;
    disk.onChange((f) => {
      if (diskLine && errors.includes(diskLine)) errors.splice(errors.indexOf(diskLine), 1);
      diskLine = f ? describeFailure(f) : null;
      if (diskLine) errors.push(diskLine);
      io.writeErr(`jaggers: ${diskLine ?? 'the disk takes writes again: new work is accepted'}\n`);
      shown = null; // the line scrolled the table: draw it again
      if (f) log.error({ path: f.path, code: f.code, err: f.error }, 'the disk is failing: new work is refused');
      else log.info({}, 'the disk takes writes again');
      redraw();
    });
    // Windows made or closed by `up` (another client) and their tags: refresh the table from tmux.
    await events.subscribe('jaggers-agents', '@*', '#{@jaggers_agent}#{@jaggers_profile}');
    events.onNotification((name, args) => {
      const ours = name === 'subscription-changed' && (args[0] === 'jaggers-agents' || args[0] === 'jaggers-dead');
      if (ours || name === 'window-add' || name === 'window-close' || name === 'unlinked-window-close') void supervisor.refreshTable().then(redraw, () => {});
    });

    let tcp: { app: ReturnType<typeof buildApp>; at: ListenAddress } | null = null;
    const closeTcp = async () => {
      await tcp?.app.close();
      tcp = null;
      supervisor.tcp = null;
    };
    // The new listener first, the old one closed only once it listens: a new address that cannot be
    // listened on (in use) leaves the listener that works, and serve.json, as they were.
    const listenTcp = async (a: ListenAddress, allowRemote: boolean, source: string): Promise<string> => {
      checkExposure(a, allowRemote, source);
      if (tcp && a.port !== 0 && tcp.at.port === a.port && tcp.at.host === a.host) return supervisor.tcp!;
      const token = await ensureToken(ctx.jaggersDir);
      const app = buildApp({ supervisor, hub, log, session: ctx.session, token, stopping: () => stopping });
      try {
        await app.listen({ host: a.host, port: a.port });
      } catch (e) {
        await app.close().catch(() => {});
        throw listenFailed(a, e, supervisor.tcp);
      }
      await closeTcp();
      const addr = app.server.address();
      const at = typeof addr === 'object' && addr ? { host: a.host, port: addr.port } : a;
      tcp = { app, at };
      supervisor.tcp = formatAddress(typeof addr === 'object' && addr ? { host: addr.address, port: addr.port } : a);
      log.info({ listen: supervisor.tcp }, 'API on TCP (bearer token in .jaggers/token)');
      if (!isLoopback(a.host)) log.warn({ listen: supervisor.tcp }, 'the API listens beyond this machine (--allow-remote): its token travels unencrypted');
      return supervisor.tcp;
    };
    closers.push(closeTcp);
    const serve = await readFile(serveConfigPath(ctx.jaggersDir), 'utf8').catch(() => null);
    if (serve) {
      try {
        const saved = JSON.parse(serve) as { listen: string; allowRemote?: boolean };
        const source = serveConfigPath(ctx.jaggersDir);
        await listenTcp(parseListen(saved.listen, source), saved.allowRemote === true, source);
      } catch (e) {
        errors.push(`TCP: ${(e as Error).message}`);
        log.error({ err: (e as Error).message }, 'could not listen on TCP');
      }
    }

    // The web dashboard (`jaggers web`): where the last supervisor had it, if it had it.
    const web = new WebListener({
      build: (parts) =>
        buildApp({ supervisor, hub, log, session: ctx.session, stopping: () => stopping, web: { ...parts, root: path.join(packageRoot, 'dist', 'web') } }),
      jaggersDir: ctx.jaggersDir,
      token: () => ensureToken(ctx.jaggersDir),
      log,
      moved: (address) => void (supervisor.web = address),
    });
    closers.push(() => web.close());
    const webProblem = await web.restore();
    if (webProblem) errors.push(`web: ${webProblem}`);

    // The unix socket last: once it answers, everything (TCP too) is up.
    const unix = buildApp({
      supervisor,
      hub,
      log,
      session: ctx.session,
      stopping: () => stopping,
      control: { listen: (a, remote, source) => listenTcp(a, remote, source), unlisten: () => closeTcp() },
      webControl: { open: (o, source) => web.open(o, source), stop: () => web.stop() },
    });
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
    stopping = true;
    // Its cleanup below must not hang a stopping supervisor (a connection that does not close, a disk
    // that does not answer): 5 s after the decision it exits whatever is left (the journal is the truth).
    setTimeout(() => {
      io.writeErr(`jaggers: the supervisor's stop took over 5 s; exiting now (still open: ${process.getActiveResourcesInfo().join(', ')})\n`);
      process.exit(1);
    }, 5000).unref();
    await unlink(socket).catch(() => {});
    log.info({ why }, 'supervisor stopping');
    supervisor.stop();
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
    await commands?.close().catch(() => {});
    await events?.close().catch(() => {});
    await registry?.close().catch(() => {});
    await lock.release().catch(() => {});
    await closeLog();
    offDisk();
    process.off('unhandledRejection', onRejection);
  }
}
