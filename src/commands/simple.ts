import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { existsSync } from 'node:fs';
import type { Context } from '../context.js';
import { sanitizeText } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { checkAllProfiles } from '../profiles/load.js';
import { defaultProjectFile, PROJECT_FILE } from '../project/project-file.js';
import { capturePane, listPanes, loadBuffer, pasteBuffer, sendKeys, type PaneInfo } from '../tmux/commands.js';
import { openControl } from '../tmux/connect.js';
import type { ControlClient } from '../tmux/control-client.js';
import { runOneShot, serverRunning } from '../tmux/one-shot.js';
import { describeSocket } from '../tmux/server.js';
import { checkTmux } from '../tmux/version.js';

export async function withControl<T>(ctx: Context, fn: (c: ControlClient) => Promise<T>): Promise<T> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const c = await openControl(ctx.server, ctx.session);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** An agent's pane: its window for `task` when there is one, else the default team's. */
export async function findAgentPane(c: ControlClient, ctx: Context, agent: string, task: string | null = null): Promise<PaneInfo> {
  const panes = await listPanes(c, ctx.session);
  const pane = (task ? panes.find((p) => p.agent === agent && p.task === task) : undefined) ?? panes.find((p) => p.agent === agent && p.task === null) ?? panes.find((p) => p.agent === agent);
  if (!pane) {
    const known = panes.map((p) => p.agent).filter(Boolean).join(', ') || 'none';
    throw new JaggersError('E_AGENT_UNKNOWN', `unknown agent ${JSON.stringify(agent)} in session ${ctx.session}: agents are ${known}`);
  }
  return pane;
}

export async function down(ctx: Context): Promise<{ stopped: boolean; socket: string }> {
  await checkTmux(ctx.server.bin, ctx.server.env);
  const socket = describeSocket(ctx.server);
  if (!(await serverRunning(ctx.server))) return { stopped: false, socket };
  const r = await runOneShot(ctx.server, ['kill-server']);
  if (!r.ok) throw new JaggersError('E_TMUX_COMMAND', `tmux ${socket} kill-server failed: ${r.stderr}`);
  return { stopped: true, socket };
}

export async function capture(ctx: Context, agent: string, opts: { ansi?: boolean }): Promise<string> {
  return withControl(ctx, async (c) => {
    const pane = await findAgentPane(c, ctx, agent);
    const text = await capturePane(c, pane.paneId, { ansi: opts.ansi ?? false });
    return text.replace(/\n+$/, '') + '\n';
  });
}

/**
 * Type text as one bracketed paste, then Enter, without verifying it was taken: for slash commands and
 * the like, which show no busy screen or echo. `handoff` is the verified path.
 */
export async function send(ctx: Context, agent: string, text: string): Promise<{ agent: string; pane: string; bytes: number }> {
  const clean = sanitizeText(text);
  return withControl(ctx, async (c) => {
    const pane = await findAgentPane(c, ctx, agent);
    if (pane.dead) throw new JaggersError('E_PANE_GONE', `agent ${agent}: its pane ${pane.paneId} is dead (exit status ${pane.deadStatus})`);
    if (pane.inMode) await sendKeys(c, pane.paneId, ['-X', 'cancel']);
    const buf = `jaggers-${pane.paneId.slice(1)}-${process.pid}-${Date.now()}`;
    await loadBuffer(c, buf, clean);
    await pasteBuffer(c, buf, pane.paneId);
    await new Promise((r) => setTimeout(r, 200)); // TUIs take an Enter that follows a paste too closely as a newline
    await sendKeys(c, pane.paneId, ['Enter']);
    return { agent, pane: pane.paneId, bytes: Buffer.byteLength(clean) };
  });
}

export async function init(ctx: Context, agents: string[], force: boolean): Promise<{ file: string }> {
  const file = path.join(ctx.projectRoot, PROJECT_FILE);
  if (existsSync(file) && !force) {
    throw new JaggersError('E_USAGE', `${file} exists already: pass --force to overwrite it`);
  }
  await writeFile(file, JSON.stringify(defaultProjectFile(agents), null, 2) + '\n');
  return { file };
}

export interface DoctorReport {
  ok: boolean;
  tmux: { ok: boolean; version?: string; error?: string };
  socket: string;
  session: string;
  serverRunning: boolean;
  profiles: { name: string; file?: string; error?: string }[];
  projectFile: string | null;
}

export async function doctor(ctx: Context): Promise<DoctorReport> {
  let tmux: DoctorReport['tmux'];
  let running = false;
  try {
    const v = await checkTmux(ctx.server.bin, ctx.server.env);
    tmux = { ok: true, version: v.raw };
    running = await serverRunning(ctx.server);
  } catch (e) {
    tmux = { ok: false, error: (e as Error).message };
  }
  const profiles = await checkAllProfiles(ctx.jaggersDir);
  return {
    ok: tmux.ok && profiles.every((p) => !p.error),
    tmux,
    socket: describeSocket(ctx.server),
    session: ctx.session,
    serverRunning: running,
    profiles,
    projectFile: ctx.projectFile ? path.join(ctx.projectRoot, PROJECT_FILE) : null,
  };
}
