import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ApiClient } from '../api/client.js';
import { withApi } from '../api/connect.js';
import { supervisorCommand, supervisorEnv } from '../api/ensure.js';
import type { ScreenView, TerminalView } from '../api/types.js';
import type { Context } from '../context.js';
import { binDir } from '../package-root.js';
import { parseSize } from '../project/project-file.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { withLock } from '../sessions/lock.js';
import { newSessionId, newTerminalId, Registry, tmuxTagEvents } from '../sessions/registry.js';
import { applyPlan, configureServer, fixWindowSize, type AppliedWindow } from '../terminals/apply.js';
import { findCommand } from '../terminals/find-command.js';
import { planWindows, type TeamMember } from '../terminals/plan.js';
import { listPanes } from '../tmux/commands.js';
import { openControl } from '../tmux/connect.js';
import { describeSocket } from '../tmux/server.js';
import { checkTmux } from '../tmux/version.js';

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
  missing: { agent: string; command: string; path: string }[];
}

export const DEFAULT_SIZE = { width: 200, height: 50 };
/** How long `up` waits for started agents to leave `starting`. */
export const UP_WAIT_MS = 30_000;

export function socketArg(ctx: Context): string {
  return 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
}

export async function teamSize(ctx: Context, sizeOption: string | undefined): Promise<{ width: number; height: number }> {
  if (sizeOption) return parseSize(sizeOption, '--size');
  const size = (await ctx.project())?.size;
  if (size) return parseSize(size, `${ctx.projectRoot}/jaggers.json size`);
  return DEFAULT_SIZE;
}

/** The PATH an agent's pane gets (see planLaunch): jaggers' bin folder first. */
function agentPath(ctx: Context, m: TeamMember): string {
  return `${binDir}${path.delimiter}${m.spec.env.PATH ?? m.profile.env.PATH ?? ctx.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`;
}

export interface UpOptions {
  size?: string;
  task?: string | null;
  /** Wait for started agents to be ready, and report those that died (default true). */
  wait?: boolean;
}

/**
 * Open the session (window 0 runs the supervisor) and one window per agent: keep live ones, restart
 * dead ones in their pinned conversations, create missing ones. Runs under the project's `up` lock,
 * so two at once give each agent one window. Agents whose command is not found are not started.
 */
export async function up(ctx: Context, team: TeamMember[], opts: UpOptions = {}): Promise<UpResult> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const size = await teamSize(ctx, opts.size);
  await mkdir(ctx.jaggersDir, { recursive: true, mode: 0o700 });
  await chmod(ctx.jaggersDir, 0o700).catch(() => {});
  const task = opts.task ?? null;
  const missing: UpResult['missing'] = [];
  const runnable = team.filter((m) => {
    const p = agentPath(ctx, m);
    if (findCommand(m.profile.command, p, path.resolve(ctx.projectRoot, m.spec.cwd ?? '.'))) return true;
    missing.push({ agent: m.spec.name, command: m.profile.command, path: p });
    return false;
  });
  const windows = await withLock(path.join(ctx.jaggersDir, 'up'), () => openWindows(ctx, runnable, size, task), { timeoutMs: 120_000 });
  const started = windows.filter((w) => w.action !== 'keep');
  const states = new Map<string, { state: string | null; lastLines: string[] | null; exitStatus: number | null }>();
  // --no-wait: back as soon as the windows exist (the supervisor starts by itself in window 0).
  if (opts.wait !== false)
    await withApi(ctx, async (api) => {
      // A fresh read of tmux: the supervisor sees the windows just made or restarted.
      await api.call('GET', '/v1/terminals');
      await Promise.all(
        started.map(async (w) => {
          const member = runnable.find((m) => m.spec.name === w.agent);
          if (!member || member.profile.detect.rules.length === 0) return;
          const q = `state=idle,done,busy,waiting_input,error,exited&timeout=${UP_WAIT_MS / 1000}`;
          const v = await api.call<TerminalView>('GET', `/v1/terminals/${w.terminalId}/wait?${q}`).catch(() => null);
          const died = v?.state === 'exited' ? await lastWords(api, w.terminalId, v.exitStatus) : null;
          states.set(w.terminalId, { state: v?.state ?? 'starting', lastLines: died?.lines ?? null, exitStatus: died?.exitStatus ?? null });
        }),
      );
    });
  return {
    session: ctx.session,
    socket: describeSocket(ctx.server),
    windows: windows.map((w) => {
      const st = states.get(w.terminalId);
      return { ...w, state: st?.state ?? null, lastLines: st?.lastLines ?? null, exitStatus: st?.exitStatus ?? null };
    }),
    missing,
  };
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

async function openWindows(ctx: Context, team: TeamMember[], size: { width: number; height: number }, task: string | null): Promise<AppliedWindow[]> {
  const registry = new Registry(ctx.jaggersDir, { onWarning: ctx.warn });
  let data = await registry.read();
  const client = await openControl(ctx.server, ctx.session, {
    windowName: 'jaggers',
    command: supervisorCommand(ctx),
    cwd: ctx.projectRoot,
    width: size.width,
    height: size.height,
    env: supervisorEnv(ctx),
  });
  try {
    await configureServer(client, size);
    const panes = await listPanes(client, ctx.session);
    // Terminals tmux knows but the registry lost (a registry rebuilt after a crash) are recorded again.
    const tagged = panes
      .filter((p) => p.terminalId && p.agent && p.profile)
      .map((p) => ({ terminalId: p.terminalId!, agent: p.agent!, profile: p.profile!, window: p.windowId, cwd: ctx.projectRoot, task: p.task }));
    const missing = tmuxTagEvents(data, tagged, new Date().toISOString()).filter((e) => e.type === 'terminal-created');
    if (missing.length) data = await registry.record(...missing);
    const home = panes.find((p) => p.windowIndex === 0 && p.agent === null);
    if (home) await fixWindowSize(client, home.windowId, size);
    const terminals = Object.values(data.terminals)
      .filter((t) => t.task === task)
      .sort((a, b) => a.created.localeCompare(b.created));
    const plan = planWindows({
      team,
      panes,
      terminals: terminals.map((t) => ({ terminalId: t.terminalId, agent: t.agent, sessionId: t.sessionId })),
      projectRoot: ctx.projectRoot,
      session: ctx.session,
      socket: socketArg(ctx),
      binDir,
      basePath: ctx.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      size,
      task,
      newTerminalId,
      newSessionId,
    });
    const windows = await applyPlan(client, ctx.session, plan, task);
    await registry.update((d) => {
      const events = journalFor(windows, plan, task);
      if (task) {
        if (!d.tasks[task]) events.unshift({ type: 'task-created', taskId: task, workflow: 'up' });
        for (const w of windows) {
          if (d.tasks[task]?.agents[w.agent]?.terminalId !== w.terminalId)
            events.push({ type: 'task-agent', taskId: task, agent: w.agent, terminalId: w.terminalId });
        }
      }
      return { events, result: null };
    });
    return windows;
  } finally {
    await client.close();
  }
}

function journalFor(windows: AppliedWindow[], plan: ReturnType<typeof planWindows>, task: string | null): NewJournalEvent[] {
  const events: NewJournalEvent[] = [];
  for (const [i, w] of windows.entries()) {
    const a = plan[i]!;
    if (a.kind === 'create' && a.newTerminal) {
      events.push({ type: 'terminal-created', terminalId: w.terminalId, agent: w.agent, profile: a.profile, cwd: a.launch.cwd, task });
    }
    if (a.kind !== 'keep') events.push({ type: 'terminal-window', terminalId: w.terminalId, window: w.windowId });
    if (w.launch?.sessionId && w.launch.pin) {
      events.push({ type: 'session-pinned', terminalId: w.terminalId, sessionId: w.launch.sessionId, how: w.launch.pin });
    }
  }
  return events;
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
    return `  ${w.agent.padEnd(12)} ${w.terminalId}  ${w.windowId}  ${action}${state}${session}${died}`;
  });
  const missing = r.missing.map((m) => `  ${m.agent.padEnd(12)} not started: command ${JSON.stringify(m.command)} not found on its PATH (${m.path})`);
  return `session ${r.session} on tmux ${r.socket}\n${[...lines, ...missing].join('\n')}\nwatch them: jaggers attach\n`;
}

/** `up` failed for an agent when its command is missing or its pane died at start. */
export function upFailed(r: UpResult): boolean {
  return r.missing.length > 0 || r.windows.some((w) => w.state === 'exited');
}
