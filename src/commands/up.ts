// `up`: the session is made when missing (window 0 runs the supervisor), then the supervisor opens the
// agents' windows (POST /v1/up: it is the one launcher and the registry's one writer); `up` waits until
// the agents it started are ready and reports one whose pane died at start with its last lines.
import type { ApiClient } from '../api/client.js';
import { checkSocketFolder, hostApi, withApi } from '../api/connect.js';
import { checkTmux, describeSocket, ensureSession } from '../api/session.js';
import type { ScreenView, TerminalView, UpView } from '../api/types.js';
import type { Context } from '../context.js';
import { DEFAULT_WINDOW_SIZE } from '../ids.js';

export type AppliedWindow = UpView['windows'][number];

export interface UpWindow extends AppliedWindow {
  /** The agent's state once it started (or `starting` when it had not finished booting in time). */
  state: string | null;
  /** For an agent whose pane died at start: its last lines (`claude: command not found`). */
  lastLines: string[] | null;
  /** For an agent whose pane died at start: its exit status, when tmux knew it. */
  exitStatus: number | null;
}

export interface UpResult {
  session: string;
  socket: string;
  windows: UpWindow[];
  /** Agents not started: their command is not found on the PATH their pane would get. */
  missing: UpView['missing'];
}

/** How long `up` waits for started agents to leave `starting`. */
export const UP_WAIT_MS = 30_000;

export interface UpOptions {
  /** An ad hoc team: comma-separated profile names. */
  agents?: string;
  /** Agents by name: each as jaggers.json or an earlier `up` knows it, else the profile of that name. */
  names?: string[];
  size?: string;
  task?: string | null;
  demo?: boolean;
  /** Reopen a task's agents (`resume`). */
  resume?: boolean;
  /** Wait for started agents to be ready, and report those that died (default true). */
  wait?: boolean;
  /** With `task`: its agents in one git worktree of its own, from `base` (`run --worktree`). */
  worktree?: boolean;
  base?: string;
}

/**
 * A bad jaggers.json, `--agents` or profile stops `up` before anything starts: the team is read here
 * first (the supervisor reads it again when it opens the windows).
 */
async function checkTeam(ctx: Context, opts: UpOptions): Promise<void> {
  if (opts.resume) return;
  const project = await ctx.project();
  const { assertLocalTeam, namedTeam, teamSpecs } = await import('../agents/team.js');
  const { readStored } = await import('../api/stored.js');
  const { loadProfile } = await import('../profiles/load.js');
  const data = readStored(ctx);
  const specs = opts.names ? namedTeam(opts.names, project, data, ctx.projectRoot) : teamSpecs(opts, project, data, ctx.projectRoot);
  // Agents on other hosts start there (the supervisor starts each host's team); a task's own worktree is only here.
  if (opts.task && opts.worktree) assertLocalTeam(specs, 'in a task of its own worktree (--worktree)');
  for (const s of specs) await loadProfile(s.profile, ctx.jaggersDir);
}

/** The size window 0 gets when `up` makes the session: `--size`, else jaggers.json's, else the default. */
async function sessionSize(ctx: Context, size: string | undefined): Promise<{ width: number; height: number }> {
  const text = size ?? (await ctx.project().catch(() => null))?.size;
  const m = text ? /^(\d{2,4})x(\d{1,4})$/.exec(text) : null;
  return m ? { width: Number(m[1]), height: Number(m[2]) } : DEFAULT_WINDOW_SIZE;
}

/**
 * Open the session and one window per agent: keep live ones, restart dead ones in their pinned
 * conversations, create missing ones (the supervisor does it, one `up` at a time, so two at once give
 * each agent one window). Agents whose command is not found are not started.
 */
export async function up(ctx: Context, opts: UpOptions = {}): Promise<UpResult> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  await checkTeam(ctx, opts);
  // Before the session is made: a socket folder we must not use stops `up` with nothing started.
  checkSocketFolder(ctx);
  await ensureSession(ctx, await sessionSize(ctx, opts.size));
  const body = {
    ...(opts.agents ? { agents: opts.agents } : {}),
    ...(opts.names ? { names: opts.names } : {}),
    ...(opts.size ? { size: opts.size } : {}),
    ...(opts.task ? { task: opts.task } : {}),
    ...(opts.demo ? { demo: true } : {}),
    ...(opts.resume ? { resume: true } : {}),
    ...(opts.worktree ? { worktree: true } : {}),
    ...(opts.base ? { base: opts.base } : {}),
  };
  return withApi(ctx, async (api) => {
    const opened = await api.call<UpView>('POST', '/v1/up', body);
    const started = opened.windows.filter((w) => w.action !== 'keep');
    const states = new Map<string, { state: string | null; lastLines: string[] | null; exitStatus: number | null }>();
    // --no-wait: back as soon as the windows exist.
    if (opts.wait !== false)
      await Promise.all(
        started.map(async (w) => {
          // An agent on another host: its terminal is that host's supervisor's, asked through its forwarded socket.
          const at = w.host ? hostApi(ctx, w.host) : api;
          const q = `state=idle,done,busy,waiting_input,error,exited&timeout=${UP_WAIT_MS / 1000}`;
          const v = await at.call<TerminalView>('GET', `/v1/terminals/${w.terminalId}/wait?${q}`).catch(() => null);
          if (v?.rule?.startsWith('no-rules')) return;
          const died = v?.state === 'exited' ? await lastWords(at, w.terminalId, v.exitStatus) : null;
          states.set(w.terminalId, { state: v?.state ?? 'starting', lastLines: died?.lines ?? null, exitStatus: died?.exitStatus ?? null });
        }),
      );
    return {
      session: ctx.session,
      socket: describeSocket(ctx.server),
      windows: opened.windows.map((w) => {
        const st = states.get(w.terminalId);
        return { ...w, state: st?.state ?? null, lastLines: st?.lastLines ?? null, exitStatus: st?.exitStatus ?? null };
      }),
      missing: opened.missing,
    };
  });
}

/** tmux's own line under a dead pane's output (3.3a): `Pane is dead (status 3, Wed Nov 25 02:53:54 2026)`. */
const TMUX_DEAD = /^Pane is dead \(status (\d+)/;

/**
 * What a pane that died at start printed last (without tmux's `Pane is dead` line), and its exit status.
 * On a loaded machine both can come a moment after the death is reported (tmux draws its line once it
 * has the status, and the pane's last output may land late; each seen in CI), so on this failure path
 * only it looks again, for up to 5 s, until it has the pane's own lines and the status.
 */
async function lastWords(api: ApiClient, terminalId: string, status: number | null): Promise<{ lines: string[]; exitStatus: number | null }> {
  let lines: string[] = [];
  let exitStatus = status;
  for (let i = 0; ; i++) {
    const s = await api.call<ScreenView>('GET', `/v1/terminals/${terminalId}/screen?history=200`).catch(() => null);
    const all = (s?.screen ?? '').split('\n').filter((l) => l.trim() !== '');
    lines = all.filter((l) => !TMUX_DEAD.test(l)).slice(-6);
    const fromTmux = all.map((l) => TMUX_DEAD.exec(l)?.[1]).find((x) => x !== undefined);
    exitStatus ??= fromTmux === undefined ? null : Number(fromTmux);
    if (exitStatus === null) {
      const views = await api.call<TerminalView[]>('GET', '/v1/terminals').catch(() => []);
      exitStatus = views.find((t) => t.terminalId === terminalId)?.exitStatus ?? null;
    }
    // A pane that printed nothing: tmux's line alone, a second after it came, ends the looking too.
    const done = exitStatus !== null && (lines.length > 0 || (fromTmux !== undefined && i >= 20));
    if (done || i >= 100) return { lines, exitStatus };
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function renderUp(r: UpResult): string {
  const lines = r.windows.map((w) => {
    const action = w.action === 'keep' ? 'running' : w.action === 'create' ? 'started' : 'restarted';
    const state = w.state ? `  ${w.state}` : '';
    const session = w.launch?.sessionId ? `  session ${w.launch.sessionId}` : '';
    const status = `exit status ${w.exitStatus ?? 'unknown'}`;
    const died =
      w.state === 'exited'
        ? w.lastLines?.length
          ? `\n      its pane died at start (${status}); last lines:\n${w.lastLines.map((l) => `      | ${l}`).join('\n')}`
          : `\n      its pane died at start (${status}), printing nothing`
        : '';
    const host = w.host ? `  on ${w.host}` : '';
    return `  ${w.agent.padEnd(12)} ${w.terminalId}  ${w.windowId}  ${action}${host}${state}${session}${died}`;
  });
  const missing = r.missing.map(
    (m) =>
      `  ${m.agent.padEnd(12)} not started: command ${JSON.stringify(m.command)} not found on its PATH (${m.path})${m.install ? `; install it: ${m.install}` : ''}`,
  );
  return `session ${r.session} on tmux ${r.socket}\n${[...lines, ...missing].join('\n')}\n${upFooter(r)}\n`;
}

/** The last line: how to watch the agents that run; when none does, why and what to do (never "watch them" over an empty session). */
function upFooter(r: UpResult): string {
  if (r.windows.some((w) => w.state !== 'exited')) return 'watch them: jaggers attach';
  if (r.missing.length) {
    const one = r.missing.length === 1;
    const how = r.missing.every((m) => m.install) ? ' as shown above' : '';
    return (
      `no agent is running: ${r.missing.map((m) => m.command).join(', ')} ${one ? 'is' : 'are'} not installed; install ${one ? 'it' : 'them'}${how}, ` +
      'or try the built-in demo agents, which need no CLI: `jaggers up --agents demo` or `jaggers demo`'
    );
  }
  return 'no agent is running: each exited as it started (see above); `jaggers doctor` checks their profiles, `jaggers up` starts them again';
}

/** `up` failed for an agent when its command is missing or its pane died at start. */
export function upFailed(r: UpResult): boolean {
  return r.missing.length > 0 || r.windows.some((w) => w.state === 'exited');
}
