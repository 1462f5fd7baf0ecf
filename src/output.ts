// Where a command's words go, and the one sanitizer every word passes on its way to a terminal. Names,
// titles, prompts, replies, reasons and screen lines come from people and from agents (an agent names a
// job through MCP), so an escape sequence, a BEL or a CR among them must show, not act: main() wraps the
// process's streams in `terminal()`, and every write of every command goes through `inert`.

/** A sink for text: the process's streams (src/cli.ts) or a test's strings. */
export interface Output {
  writeOut(s: string): void;
  writeErr(s: string): void;
  /** stderr is a terminal: progress may redraw one line (a spinner); else plain lines. */
  errIsTTY?: boolean;
}

/** jaggers' own terminal controls, the only ones it sends: before a `--watch` redraw, and under a spinner. */
export type Control = 'clear-screen' | 'clear-line';

/** What commands write to: text made inert, and jaggers' own controls kept apart from it. */
export interface Terminal extends Output {
  /** `clear-screen` on stdout (home and erase), `clear-line` on stderr (carriage return and erase the line). */
  control(c: Control): void;
  /** Text whose colours the user asked for (`capture --ansi`): SGR sequences kept, every other control made inert. */
  writeColoured(s: string): void;
}

const CONTROLS: Record<Control, string> = { 'clear-screen': '\x1b[H\x1b[2J', 'clear-line': '\r\x1b[K' };

// C0 controls (ESC, BEL, CR, backspace...), DEL, C1 controls (U+0080-U+009F: CSI, OSC... for some
// terminals) and the bidirectional overrides and isolates, which reorder what a line shows. `inert`
// keeps newline and tab; `inertLine`, for one line or a table cell, shows them too.
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_LINE = /[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const SGR_OR_UNSAFE = /(\x1b\[[0-9;:]*m)|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A control character as visible text: `\x1b` for C0 (which JSON.stringify never leaves raw), `\u009b`
 * for DEL, C1 and the bidi controls (a JSON escape too, so `--json` output stays valid and means the same).
 */
function shown(ch: string): string {
  const c = ch.charCodeAt(0);
  return c < 0x20 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character shown as `\x1b`-style text instead of acting; newlines and tabs kept. */
export function inert(text: string): string {
  return text.replace(UNSAFE, shown);
}

/** One line of `text` (a table cell, a name): as `inert`, and a newline or tab shown as `\x0a`, `\x09`. */
export function inertLine(text: string): string {
  return text.replace(UNSAFE_LINE, shown);
}

/** As `inert`, keeping colour and attribute sequences (`ESC [ ... m`) whole. */
export function inertKeepingColours(text: string): string {
  return text.replace(SGR_OR_UNSAFE, (m: string, sgr: string | undefined) => sgr ?? shown(m));
}

/** The one way out for a command's words: `raw` receives only inert text and jaggers' own controls. */
export function terminal(raw: Output): Terminal {
  return {
    writeOut: (s) => raw.writeOut(inert(s)),
    writeErr: (s) => raw.writeErr(inert(s)),
    ...(raw.errIsTTY !== undefined ? { errIsTTY: raw.errIsTTY } : {}),
    control: (c) => (c === 'clear-screen' ? raw.writeOut(CONTROLS[c]) : raw.writeErr(CONTROLS[c])),
    writeColoured: (s) => raw.writeOut(inertKeepingColours(s)),
  };
}

export const processOutput: Output = {
  writeOut: (s) => void process.stdout.write(s),
  writeErr: (s) => void process.stderr.write(s),
  errIsTTY: process.stderr.isTTY === true,
};

/** A warning sink that prints each distinct warning once, as `jaggers: warning: <text>`. */
export function warnOnce(writeErr: (s: string) => void): (m: string) => void {
  const warned = new Set<string>();
  return (m) => {
    if (warned.has(m)) return;
    warned.add(m);
    writeErr(`jaggers: warning: ${m}\n`);
  };
}

/**
 * Print what ended a program and return its exit code: one line and 1 for one of our errors (`ours` tells
 * them: a bundle has its own class), 130 (the shell's code for SIGINT) when it was an interrupt, and the
 * stack and 70 for anything else.
 */
export function reportFailure(err: unknown, ours: (e: unknown) => e is Error & { code: string }, writeErr: (s: string) => void): number {
  if (ours(err)) {
    writeErr(`jaggers: ${err.message}\n`);
    return err.code === 'E_INTERRUPTED' ? 130 : 1;
  }
  writeErr(`jaggers: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
  return 70;
}
