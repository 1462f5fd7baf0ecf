// Draws the whole screen from a view of the agent: pure, so every screen can be unit-tested.
// Layout and words follow gemini/qwen (input box, `esc to cancel` spinner) and claude (`✻ Worked for`).
import { VERSION } from './args.js';
import type { AgentStatus } from './runtime-files.js';
import { fitWidth, lastLine, padWidth, sanitize, wrapWidth, wrapWords } from './text.js';

export type TranscriptEntry = { kind: 'prompt'; text: string } | { kind: 'reply'; lines: readonly string[] } | { kind: 'worked'; ms: number } | { kind: 'gap' };

export interface ScreenView {
  status: AgentStatus;
  sessionId: string;
  cwd: string;
  transcript: readonly TranscriptEntry[];
  /** When the current turn started (busy only). */
  busySince: number | undefined;
  /** The whole input buffer; only its last line is drawn. */
  input: string;
  picker: boolean;
  /** A menu without numbers is open, its highlight on this item. */
  select?: number | undefined;
}

export interface ScreenSize {
  rows: number;
  cols: number;
}

export const CLEAR = '\x1b[H\x1b[2J';
export const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
export const SPINNER_INTERVAL_MS = 80;
export const BANNER = ` ✦ Fake Agent ${VERSION} (jaggers demo agent)`;
export const BOOT_TEXT = ' Starting fake agent...';
export const INPUT_PLACEHOLDER = '>   Type your message or @path/to/file';
export const FOOTER = ' ? for shortcuts';
export const PICKER_TEXT = ' ↑/↓ to navigate · Enter to select';
export const MENU_LINES = [' Allow execution of [Shell]: touch approved.txt?', ' ● 1. Allow once', '   2. Deny', ' Waiting for user confirmation...'];
/** `/trust`: a menu without numbers, drawn as claude 2.1.330 draws its trust dialog. */
export const SELECT_QUESTION = ' Quick safety check: Is this a project you created or one you trust?';
export const SELECT_CHOICES = ['Yes, I trust this folder', 'No, exit'];
export const SELECT_FOOTER = ' Enter to confirm · Esc to cancel · Waiting for user confirmation...';

function selectLines(selected: number): string[] {
  return [SELECT_QUESTION, '', ...SELECT_CHOICES.map((c, i) => (i === selected ? ` ❯ ${c}` : `   ${c}`)), '', SELECT_FOOTER];
}

export function renderScreen(view: ScreenView, size: ScreenSize, now: number): string {
  return CLEAR + renderLines(view, size, now).join('\r\n');
}

export function renderLines(view: ScreenView, size: ScreenSize, now: number): string[] {
  // One column spare: a line that fills the last column would leave the cursor in a pending wrap.
  const width = Math.max(10, size.cols - 1);
  const fit = (line: string): string => fitWidth(line, width);
  if (view.status === 'starting') return [BOOT_TEXT];

  const header = [BANNER, ` session ${view.sessionId}    cwd ${sanitize(view.cwd)}`, ''].map(fit);
  const bottom: string[] = [];
  if (view.status === 'busy') bottom.push(fit(spinnerLine(view.busySince ?? now, now)));
  if (view.status === 'waiting') bottom.push(...(view.select !== undefined ? selectLines(view.select) : MENU_LINES).map(fit));
  else bottom.push(...inputBox(view.input, width), view.picker ? fit(PICKER_TEXT) : FOOTER);

  const last = view.transcript[view.transcript.length - 1];
  if (last !== undefined && last.kind !== 'gap') bottom.unshift('');
  const room = size.rows - header.length - bottom.length;
  const lines = [...header, ...transcriptTail(view.transcript, width, Math.max(0, room)), ...bottom];
  return lines.slice(-Math.max(1, size.rows));
}

export function spinnerLine(since: number, now: number): string {
  const elapsed = Math.max(0, now - since);
  const frame = SPINNER_FRAMES[Math.floor(elapsed / SPINNER_INTERVAL_MS) % SPINNER_FRAMES.length];
  return ` ${frame} Thinking... (esc to cancel, ${Math.floor(elapsed / 1000)}s)`;
}

export function workedLine(ms: number): string {
  return ` ✻ Worked for ${Math.round(ms / 1000)}s`;
}

function inputBox(input: string, width: number): string[] {
  const inner = width - 4;
  const shown = input === '' ? INPUT_PLACEHOLDER : `> ${sanitize(lastLine(input).slice(0, inner * 2))}`;
  return [`╭${'─'.repeat(width - 2)}╮`, `│ ${padWidth(shown, inner)} │`, `╰${'─'.repeat(width - 2)}╯`];
}

/** The last `room` lines of the transcript, computed from the end so old turns cost nothing. */
function transcriptTail(entries: readonly TranscriptEntry[], width: number, room: number): string[] {
  if (room <= 0) return [];
  const out: string[][] = [];
  let count = 0;
  for (let i = entries.length - 1; i >= 0 && count < room; i--) {
    const lines = entryLines(entries[i] as TranscriptEntry, width);
    out.push(lines);
    count += lines.length;
  }
  return out.reverse().flat().slice(-room);
}

function entryLines(entry: TranscriptEntry, width: number): string[] {
  switch (entry.kind) {
    case 'prompt':
      // Broken at spaces, as the real CLIs wrap a prompt's echo: a pointer's nonce tag stays whole on a line.
      return wrapWords(sanitize(entry.text), width - 3).map((l, i) => `${i === 0 ? ' > ' : '   '}${l}`);
    case 'reply':
      return entry.lines.flatMap((line, i) => wrapIndented(`${i === 0 ? ' ✦ ' : '   '}${sanitize(line)}`, '   ', width));
    case 'worked':
      return [workedLine(entry.ms)];
    case 'gap':
      return [''];
  }
}

function wrapIndented(line: string, indent: string, width: number): string[] {
  const [first = '', ...rest] = wrapWidth(line, width);
  if (rest.length === 0) return [first];
  return [first, ...wrapWidth(rest.join(''), width - indent.length).map((l) => indent + l)];
}
