import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import type { ControlClient } from './control-client.js';
import { formatCommand } from './quote.js';

/** One pane per agent window; this is what jaggers reads back from tmux. */
export interface PaneInfo {
  windowId: string;
  windowIndex: number;
  windowName: string;
  paneId: string;
  panePid: number | null;
  dead: boolean;
  deadStatus: number | null;
  inMode: boolean;
  width: number;
  height: number;
  terminalId: string | null;
  agent: string | null;
  profile: string | null;
  state: string | null;
  /** The task the agent works on; null for the project's default team. */
  task: string | null;
}

const PANE_FIELDS = [
  'window_id',
  'window_index',
  'window_name',
  'pane_id',
  'pane_pid',
  'pane_dead',
  'pane_dead_status',
  'pane_in_mode',
  'pane_width',
  'pane_height',
  '@jaggers_terminal_id',
  '@jaggers_agent',
  '@jaggers_profile',
  '@jaggers_state',
  '@jaggers_task',
] as const;
const SEP = '\u001f';
const PANE_FORMAT = PANE_FIELDS.map((f) => `#{${f}}`).join(SEP);

export function parsePaneLine(line: string): PaneInfo {
  const f = line.split(SEP);
  const s = (i: number) => f[i] ?? '';
  const orNull = (v: string) => (v === '' ? null : v);
  return {
    windowId: s(0),
    windowIndex: Number(s(1)),
    windowName: s(2),
    paneId: s(3),
    panePid: s(4) ? Number(s(4)) : null,
    dead: s(5) === '1',
    deadStatus: s(6) ? Number(s(6)) : null,
    inMode: s(7) === '1',
    width: Number(s(8)),
    height: Number(s(9)),
    terminalId: orNull(s(10)),
    agent: orNull(s(11)),
    profile: orNull(s(12)),
    state: orNull(s(13)),
    task: orNull(s(14)),
  };
}

export async function listPanes(c: ControlClient, session: string): Promise<PaneInfo[]> {
  const lines = await c.runOk(['list-panes', '-s', '-t', `=${session}`, '-F', PANE_FORMAT]);
  return lines.filter((l) => l.length > 0).map(parsePaneLine);
}

export interface NewWindow {
  session: string;
  name: string;
  cwd: string;
  env: Record<string, string>;
  command: readonly string[];
}

/** A new window: its ids, and its pane's process (null when tmux printed none). */
export async function newWindow(c: ControlClient, w: NewWindow): Promise<{ windowId: string; paneId: string; pid: number | null }> {
  const envArgs = Object.entries(w.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const lines = await c.runOk([
    'new-window',
    '-d',
    '-P',
    '-F',
    '#{window_id} #{pane_id} #{pane_pid}',
    '-t',
    `=${w.session}:`,
    '-n',
    w.name,
    '-c',
    w.cwd,
    ...envArgs,
    '--',
    ...w.command,
  ]);
  const [windowId, paneId, pid] = (lines[0] ?? '').split(' ');
  if (!windowId || !paneId) throw new JaggersError('E_TMUX_COMMAND', `new-window printed ${JSON.stringify(lines)}`);
  return { windowId, paneId, pid: Number(pid) > 0 ? Number(pid) : null };
}

export async function setWindowOptions(c: ControlClient, target: string, options: Record<string, string>): Promise<void> {
  await Promise.all(Object.entries(options).map(([k, v]) => c.runOk(['set-option', '-w', '-t', target, k, v])));
}

export async function capturePane(c: ControlClient, paneId: string, opts: { ansi?: boolean; history?: number } = {}): Promise<string> {
  const args = ['capture-pane', '-p', '-t', paneId];
  if (opts.ansi) args.push('-e');
  if (opts.history) args.push('-S', String(-opts.history));
  const r = await c.run(args);
  if (!r.ok) throw new JaggersError('E_PANE_GONE', `cannot read pane ${paneId}: ${r.error}`);
  return r.lines.join('\n');
}

/** Text that goes into a buffer on the command line itself: one line, no control characters, 4 KiB at most. */
const INLINE_TEXT = /^[^\p{Cc}]{0,4096}$/u;

/**
 * Put arbitrary text (any bytes, newlines, quotes, 1 MB) into a uniquely named tmux buffer. Control
 * mode is one line per command, so any other text travels through a private temporary file; one short
 * line (a pointer prompt) is given to `set-buffer` quoted, with no file.
 */
export async function loadBuffer(c: ControlClient, name: string, text: string): Promise<void> {
  if (isInlineText(text)) {
    await c.runOk(['set-buffer', '-b', name, '--', text]);
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'jaggers-buf-'));
  const file = path.join(dir, 'text');
  try {
    await writeFile(file, text, { mode: 0o600 });
    await c.runOk(['load-buffer', '-b', name, file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A pane id as tmux writes it (`%N`), or E_PANE_GONE. */
function paneIdOf(paneId: string): string {
  if (!/^%\d+$/.test(paneId)) throw new JaggersError('E_PANE_GONE', `not a pane id: ${JSON.stringify(paneId)}`);
  return paneId;
}

/**
 * Paste and delete the buffer. `-p` frames it as a bracketed paste when the app asked for one; `-r` keeps LF.
 *
 * Never into a dead pane: tmux 3.3a (Debian 12's) does not check, and its server crashes, taking every
 * session with it (the dead pane's pty is closed: a write through a NULL pointer; fixed in tmux 3.4). A
 * pane can die between any look and the paste, so tmux itself tests it as it pastes (`if-shell -F`, whose
 * picked command runs right after the test, before anything else): a dead pane only says so.
 */
export async function pasteBuffer(c: ControlClient, name: string, paneId: string): Promise<void> {
  paneIdOf(paneId);
  const [test, picked] = await c.runIf(
    '#{pane_dead}',
    paneId,
    formatCommand(['display-message', '-p', 'dead']),
    formatCommand(['paste-buffer', '-d', '-p', '-r', '-b', name, '-t', paneId]),
  );
  if (test.ok && picked?.ok && picked.lines.length === 0) return;
  // Nothing pasted: the buffer goes.
  void c.run(['delete-buffer', '-b', name]).catch(() => {});
  const why = !test.ok ? test.error : !picked ? 'not tested' : !picked.ok ? picked.error : 'it is dead (its program exited)';
  throw new JaggersError('E_PANE_GONE', `nothing was pasted into pane ${paneId}: ${why}`);
}

/**
 * `text` into the pane, pasted once (bracketed where the app asked for it) through a buffer named
 * `name`, which is deleted. A short line goes in one write (its buffer set and pasted, no answer waited
 * for in between: tmux runs a connection's commands in order); other text through a temp file first.
 */
export async function pasteText(c: ControlClient, name: string, text: string, paneId: string): Promise<void> {
  if (!isInlineText(text)) {
    await loadBuffer(c, name, text);
    await pasteBuffer(c, name, paneId);
    return;
  }
  await Promise.all([loadBuffer(c, name, text), pasteBuffer(c, name, paneId)]);
}

function isInlineText(text: string): boolean {
  return INLINE_TEXT.test(text) && Buffer.byteLength(text) <= 4096;
}

export async function sendKeys(c: ControlClient, paneId: string, keys: readonly string[]): Promise<void> {
  await c.runOk(['send-keys', '-t', paneId, ...keys]);
}

/**
 * Out of copy mode (or any mode a person left the pane in), in one command that needs no answer first:
 * the next command runs after it. A pane in no mode answers "not in a mode" and is left as it is (the
 * cancel never reaches its program). Not `if-shell` on `#{pane_in_mode}`: the command it picks is
 * answered in a block of its own, which a plain `run` would take for the next command's reply.
 */
export async function leaveMode(c: ControlClient, paneId: string): Promise<void> {
  paneIdOf(paneId);
  const r = await c.run(['send-keys', '-t', paneId, '-X', 'cancel']);
  if (!r.ok && !/not in a mode/.test(r.error)) throw new JaggersError('E_PANE_GONE', `cannot reach pane ${paneId}: ${r.error}`);
}

export async function sendLiteral(c: ControlClient, paneId: string, text: string): Promise<void> {
  await c.runOk(['send-keys', '-t', paneId, '-l', '--', text]);
}

/** Bytes typed into a pane as they are (`send-keys -H`: each byte a key, written raw), in commands of at most `chunk` bytes. */
export async function sendBytes(c: ControlClient, paneId: string, bytes: Uint8Array, chunk = 512): Promise<void> {
  for (let i = 0; i < bytes.length; i += chunk) {
    const hex = Array.from(bytes.subarray(i, i + chunk), (b) => b.toString(16).padStart(2, '0'));
    await c.runOk(['send-keys', '-t', paneId, '-H', ...hex]);
  }
}

/** One format of one pane (`#{pane_pid}`, `#{pane_dead_status}`...), or null when tmux has no answer. */
export async function paneField(c: ControlClient, paneId: string, format: string): Promise<string | null> {
  const r = await c.run(['display-message', '-p', '-t', paneId, format]);
  return r.ok && r.lines[0] !== undefined && r.lines[0] !== '' ? r.lines[0] : null;
}

/**
 * Flow control of one pane's output to this client (`refresh-client -A`): tmux stops sending it
 * `%output` for the pane (it drops it for this client only, and keeps reading the pane). A refusal
 * (the pane is gone) is not an error: the caller learns of a death elsewhere.
 */
export async function pausePaneOutput(c: ControlClient, paneId: string): Promise<void> {
  await c.run(['refresh-client', '-A', `${paneId}:pause`]);
}

/** The pane's output flows to this client again (after a pause of ours or tmux's `%pause`). */
export async function continuePaneOutput(c: ControlClient, paneId: string): Promise<void> {
  await c.run(['refresh-client', '-A', `${paneId}:continue`]);
}

/** tmux pauses a pane (`%pause`) whose output to this client is `seconds` behind. */
export async function setPauseAfter(c: ControlClient, seconds: number): Promise<void> {
  await c.run(['refresh-client', '-f', `pause-after=${seconds}`]);
}

export async function setWindowOption(c: ControlClient, windowId: string, option: string, value: string | null): Promise<void> {
  await c.run(value === null ? ['set-option', '-w', '-u', '-t', windowId, option] : ['set-option', '-w', '-t', windowId, option, value]);
}

/** The clients a person uses (control-mode clients, such as jaggers' own, left out). */
export async function humanClients(c: ControlClient): Promise<string[]> {
  const r = await c.run(['list-clients', '-F', '#{client_name}\t#{client_control_mode}']);
  if (!r.ok) return [];
  return r.lines
    .map((l) => l.split('\t'))
    .filter(([name, control]) => name && control !== '1')
    .map(([name]) => name!);
}

/** Show a message on one client's status line for `ms` milliseconds. */
export async function displayMessage(c: ControlClient, client: string, text: string, ms = 8000): Promise<void> {
  // `#` starts a format in display-message: double it so the text shows as written.
  await c.run(['display-message', '-c', client, '-d', String(ms), text.replaceAll('#', '##')]);
}

/** Kill whatever runs in the pane and start `command` there (the window and its tags stay). */
export async function respawnPane(
  c: ControlClient,
  paneId: string,
  w: { cwd: string; env: Record<string, string>; command: readonly string[] },
): Promise<void> {
  const envArgs = Object.entries(w.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await c.runOk(['respawn-pane', '-k', '-t', paneId, '-c', w.cwd, ...envArgs, '--', ...w.command]);
}

// A global `window-size manual` makes tmux 3.3a's server crash on the next new-window (seen here),
// so the fixed size is set per window, right after it is made.
export async function fixWindowSize(c: ControlClient, windowId: string, size: { width: number; height: number }): Promise<void> {
  await c.runOk(['set-option', '-w', '-t', windowId, 'window-size', 'manual']);
  await c.runOk(['resize-window', '-t', windowId, '-x', String(size.width), '-y', String(size.height)]);
}

export async function setGlobalOption(c: ControlClient, option: string, value: string): Promise<void> {
  await c.runOk(['set-option', '-g', option, value]);
}

/** Close a window (a finished job's worker); a window already gone is not an error. */
export async function killWindow(c: ControlClient, windowId: string): Promise<void> {
  const r = await c.run(['kill-window', '-t', windowId]);
  if (!r.ok && !/can't find window|no such window/i.test(r.error)) throw new JaggersError('E_TMUX_COMMAND', `kill-window ${windowId}: ${r.error}`);
}
