import { mkdir } from 'node:fs/promises';
import type { Context } from '../context.js';
import { binDir, cliEntry } from '../package-root.js';
import { parseSize } from '../project/project-file.js';
import { newSessionId, newTerminalId, Registry, tmuxTagEvents } from '../sessions/registry.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { applyPlan, configureServer, fixWindowSize, type AppliedWindow } from '../terminals/apply.js';
import { planWindows, type TeamMember } from '../terminals/plan.js';
import { listPanes } from '../tmux/commands.js';
import { openControl } from '../tmux/connect.js';
import type { ControlClient } from '../tmux/control-client.js';
import { checkTmux } from '../tmux/version.js';
import { describeSocket } from '../tmux/server.js';

export interface UpResult {
  session: string;
  socket: string;
  windows: AppliedWindow[];
}

export const DEFAULT_SIZE = { width: 200, height: 50 };

export function socketArg(ctx: Context): string {
  return 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path;
}

/** The argv that runs jaggers itself against this project (window 0, watchers). */
export function selfCommand(ctx: Context, ...args: string[]): string[] {
  return [process.execPath, cliEntry, '--project', ctx.projectRoot, '--socket', socketArg(ctx), '--session', ctx.session, ...args];
}

export function teamSize(ctx: Context, sizeOption: string | undefined): { width: number; height: number } {
  if (sizeOption) return parseSize(sizeOption, '--size');
  if (ctx.projectFile?.size) return parseSize(ctx.projectFile.size, `${ctx.projectRoot}/jaggers.json size`);
  return DEFAULT_SIZE;
}

export async function up(
  ctx: Context,
  team: TeamMember[],
  opts: { size?: string; task?: string | null; supervisor?: boolean } = {},
): Promise<UpResult & { client: ControlClient }> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const size = teamSize(ctx, opts.size);
  await mkdir(ctx.jaggersDir, { recursive: true });
  const registry = new Registry(ctx.jaggersDir);
  let data = await registry.read();
  const task = opts.task ?? null;
  const client = await openControl(ctx.server, ctx.session, {
    windowName: 'jaggers',
    command: opts.supervisor === false ? ['sh', '-c', 'exec cat'] : selfCommand(ctx, 'supervise'),
    cwd: ctx.projectRoot,
    width: size.width,
    height: size.height,
    env: { PATH: `${binDir}:${ctx.env.PATH ?? ''}` },
  });
  try {
    await configureServer(client, size);
    const panes = await listPanes(client, ctx.session);
    // Terminals tmux knows but the registry lost (a registry rebuilt after a crash) are recorded again.
    const tagged = panes.filter((p) => p.terminalId && p.agent && p.profile).map((p) => ({ terminalId: p.terminalId!, agent: p.agent!, profile: p.profile!, window: p.windowId, cwd: ctx.projectRoot, task: p.task }));
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
          if (d.tasks[task]?.agents[w.agent]?.terminalId !== w.terminalId) events.push({ type: 'task-agent', taskId: task, agent: w.agent, terminalId: w.terminalId });
        }
      }
      return { events, result: null };
    });
    return { session: ctx.session, socket: describeSocket(ctx.server), windows, client };
  } catch (e) {
    await client.close();
    throw e;
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
