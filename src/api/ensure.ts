// Starting the supervisor when nobody answers on the socket: in window 0 of the session, as `up` does,
// under a lock so two commands do not start two; then waiting (bounded) until it answers.
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { binDir, SUPERVISOR_NODE_FLAGS, superviseEntry } from '../package-root.js';
import { processRuns } from '../proc-state.js';
import { withLock } from '../sessions/lock.js';
import { captureOneShot, hasSession, runInWindowZero, windowZero } from '../tmux/one-shot.js';
import { describeSocket } from '../tmux/server.js';
import type { ApiClient } from './client.js';
import { currentLogPath } from './paths.js';
import type { HealthView } from './types.js';

/** How long a supervisor may take from start to answering. */
export const START_TIMEOUT_MS = 20_000;

function socketArg(ctx: Context): string {
  return 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
}

/** The argv of the supervisor process for this project (src/supervise-args.ts reads it). */
export function supervisorCommand(ctx: Context): string[] {
  return [
    process.execPath,
    ...SUPERVISOR_NODE_FLAGS,
    superviseEntry,
    '--project',
    ctx.projectRoot,
    '--socket',
    socketArg(ctx),
    '--session',
    ctx.session,
    'supervise',
  ];
}

/** The environment window 0 gets: jaggers' bin folder first on PATH, the log level asked for, and TMPDIR. */
export function supervisorEnv(ctx: Context): Record<string, string> {
  const env: Record<string, string> = { PATH: `${binDir}${path.delimiter}${ctx.env.PATH ?? ''}` };
  if (ctx.env.JAGGERS_LOG) env.JAGGERS_LOG = ctx.env.JAGGERS_LOG;
  // A project too deep for a socket path has its socket under the temp folder: the same one as its clients'.
  if (ctx.env.TMPDIR) env.TMPDIR = ctx.env.TMPDIR;
  return env;
}

/**
 * The supervisor's health, or null when nobody answers: no listener, one that is stopping, or one that
 * dropped the connection (a supervisor dying as the probe came: it is read-only, so nothing was lost).
 */
async function answers(api: ApiClient): Promise<HealthView | null> {
  try {
    return await api.call<HealthView>('GET', '/v1/health');
  } catch (e) {
    if (e instanceof JaggersError && (e.code === 'E_SUPERVISOR_DOWN' || e.code === 'E_SUPERVISOR_STOPPING')) return null;
    throw e;
  }
}

/**
 * Until the supervisor answers (its health), `ms` ran out or `gone()` says it died (null). Tries again on
 * every change in the socket's folder (the socket appearing among them) and every 250 ms; `gone()`, a
 * tmux call, at most every 250 ms.
 */
async function waitForAnswer(api: ApiClient, socketDir: string, ms: number, gone?: () => Promise<boolean>): Promise<HealthView | null> {
  const deadline = Date.now() + ms;
  // A change seen while a try is in flight is kept, so the socket made meanwhile is not missed.
  let changed = false;
  let wake: () => void = () => (changed = true);
  let watcher: ReturnType<typeof watch> | null = null;
  try {
    watcher = watch(socketDir, () => wake());
  } catch {
    // no folder yet: the timer alone
  }
  try {
    let nextGoneCheck = 0;
    while (Date.now() < deadline) {
      changed = false;
      const h = await answers(api);
      if (h) return h;
      if (gone && Date.now() >= nextGoneCheck) {
        nextGoneCheck = Date.now() + 250;
        if (await gone()) return null;
      }
      if (changed) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(250, Math.max(0, deadline - Date.now())));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = () => (changed = true);
    }
    return answers(api);
  } finally {
    watcher?.close();
  }
}

async function tail(file: string, n: number): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

/**
 * Make the supervisor answer: start it in window 0 (restarting a dead or silent one there), then wait.
 * Errors name the session that is missing, or the log file and window 0's last lines.
 */
export async function startSupervisor(ctx: Context, api: ApiClient): Promise<void> {
  const socketDir = path.dirname('socketPath' in api.endpoint ? api.endpoint.socketPath : ctx.jaggersDir);
  // No session: nothing to start, and nothing is made on disk (a read command in a folder that is no
  // project leaves no `.jaggers/` behind).
  if (!(await hasSession(ctx.server, ctx.session))) throw await sessionMissing(ctx);
  await ensurePrivateFolder(ctx.jaggersDir);
  await withLock(
    path.join(ctx.jaggersDir, 'supervisor-start'),
    async () => {
      if (await answers(api)) return;
      const w0 = await windowZero(ctx.server, ctx.session);
      if (!w0 && !(await hasSession(ctx.server, ctx.session))) throw await sessionMissing(ctx);
      // A supervisor killed a moment ago is a zombie until tmux reaps it, and tmux says its pane is dead only then.
      const isDead = (w: typeof w0) => w === null || w.dead || (w.pid !== null && !processRuns(w.pid));
      const w0dead = async () => isDead(await windowZero(ctx.server, ctx.session));
      // Alive and started as the supervisor: it is booting, which takes seconds on a loaded machine. It gets
      // the whole start timeout while it lives; restarting it sooner kills one that may answer a moment
      // later, and a request that reached it would see the connection dropped.
      const booting = w0 !== null && !isDead(w0) && w0.start.includes(' supervise');
      let h = booting ? await waitForAnswer(api, socketDir, START_TIMEOUT_MS, w0dead) : null;
      if (!h) {
        const launch = { cwd: ctx.projectRoot, env: supervisorEnv(ctx), command: supervisorCommand(ctx) };
        const r = await runInWindowZero(ctx.server, ctx.session, w0?.paneId ?? null, launch);
        if (!r.ok) throw new JaggersError('E_SUPERVISOR_START', `could not start the supervisor in window 0 of ${ctx.session}: ${r.stderr.trim()}`);
        // A supervisor that exits at once (a node flag it refuses, a broken install) is not waited for.
        h = await waitForAnswer(api, socketDir, START_TIMEOUT_MS, w0dead);
      }
      if (h) {
        // Repairs it made on start (a registry rebuilt after a crash) are told once, here.
        for (const w of h.warnings ?? []) ctx.warn(w);
        return;
      }
      const screen = { stdout: await captureOneShot(ctx.server, `=${ctx.session}:0`) };
      const log = currentLogPath(ctx.jaggersDir);
      const what = (await w0dead())
        ? 'the supervisor exited as it started'
        : `the supervisor did not answer on ${api.where} within ${START_TIMEOUT_MS / 1000} s`;
      throw new JaggersError(
        'E_SUPERVISOR_START',
        `${what}; see its log ${log}` +
          `${(await tail(log, 5)) ? `:\n${await tail(log, 5)}` : ''}\nwindow 0 shows:\n${screen.stdout.trimEnd().split('\n').slice(-8).join('\n')}`,
      );
    },
    { timeoutMs: 2 * START_TIMEOUT_MS + 10_000 },
  );
}

/**
 * No session: say which command brings it back (`up` reopens the last team even without a jaggers.json);
 * outside any project, that there is none, from which folder it was looked for.
 */
async function sessionMissing(ctx: Context): Promise<JaggersError> {
  if (!ctx.inProject)
    return new JaggersError(
      'E_PROJECT_MISSING',
      `no jaggers project in ${ctx.cwd} or any folder above it (none has a jaggers.json or a .jaggers/): ` +
        'run `jaggers demo` to try the demo agents here, or `jaggers init` and then `jaggers up`; or name one with --project DIR',
    );
  const { hintForUp } = await import('./hint.js');
  return new JaggersError(
    'E_SESSION_MISSING',
    `no jaggers session ${JSON.stringify(ctx.session)} on tmux ${describeSocket(ctx.server)}: ${await hintForUp(ctx)}`,
  );
}
