// Turns decoded terminal input into key events. Bracketed pastes are gathered in chunks and
// joined once at the end marker, so a 1 MB paste costs O(size), not O(size^2).

export type KeyEvent =
  | { type: 'text'; text: string }
  | { type: 'paste'; text: string }
  | { type: 'enter' }
  | { type: 'newline' }
  | { type: 'backspace' }
  | { type: 'ctrl-c' }
  | { type: 'ctrl-d' }
  | { type: 'esc' }
  | { type: 'up' }
  | { type: 'down' };

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';
/** An unfinished escape sequence longer than this is garbage, not a key. */
const MAX_SEQUENCE = 32;

export class InputParser {
  private pending = '';
  private inPaste = false;
  private pasteParts: string[] = [];

  /** True when a lone ESC (or a cut-off sequence) waits for more input; see flushPending. */
  get hasPending(): boolean {
    return !this.inPaste && this.pending !== '';
  }

  get pasting(): boolean {
    return this.inPaste;
  }

  feed(chunk: string): KeyEvent[] {
    const events: KeyEvent[] = [];
    let s = this.pending + chunk;
    this.pending = '';
    while (s !== '') {
      s = this.inPaste ? this.feedPaste(s, events) : this.feedKeys(s, events);
    }
    return events;
  }

  /** No more bytes came after a lone ESC: it was the Escape key. */
  flushPending(): KeyEvent[] {
    if (!this.hasPending) return [];
    const rest = this.pending;
    this.pending = '';
    const events: KeyEvent[] = [{ type: 'esc' }];
    if (rest.length > 1) events.push(...this.feed(rest.slice(1)));
    return events;
  }

  /** Consumes paste text up to the end marker; returns what is left after it. */
  private feedPaste(s: string, events: KeyEvent[]): string {
    const end = s.indexOf(PASTE_END);
    if (end !== -1) {
      this.pasteParts.push(s.slice(0, end));
      const text = this.pasteParts.join('').replace(/\r\n?/g, '\n');
      this.pasteParts = [];
      this.inPaste = false;
      events.push({ type: 'paste', text });
      return s.slice(end + PASTE_END.length);
    }
    // Keep a tail that could be the start of a marker cut between two chunks.
    const keep = markerPrefixLength(s);
    this.pasteParts.push(s.slice(0, s.length - keep));
    this.pending = s.slice(s.length - keep);
    return '';
  }

  /** Consumes keys until the input ends or a paste starts; returns what is left. */
  private feedKeys(s: string, events: KeyEvent[]): string {
    let i = 0;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (c === 0x1b) {
        const seq = readEscape(s, i);
        if (seq === undefined) {
          this.pending = s.slice(i);
          return '';
        }
        i += seq.length;
        if (seq === PASTE_START) {
          this.inPaste = true;
          return s.slice(i);
        }
        const key = escapeKey(seq);
        if (key) events.push(key);
        continue;
      }
      if (c >= 0x20 && c !== 0x7f) {
        let j = i + 1;
        while (j < s.length) {
          const d = s.charCodeAt(j);
          if (d < 0x20 || d === 0x7f) break;
          j++;
        }
        pushText(events, s.slice(i, j));
        i = j;
        continue;
      }
      const key = controlKey(c);
      if (key) events.push(key);
      i++;
    }
    return '';
  }
}

function pushText(events: KeyEvent[], text: string): void {
  const last = events[events.length - 1];
  if (last?.type === 'text') last.text += text;
  else events.push({ type: 'text', text });
}

function controlKey(c: number): KeyEvent | undefined {
  switch (c) {
    case 0x0d:
      return { type: 'enter' };
    case 0x0a:
      return { type: 'newline' };
    case 0x7f:
    case 0x08:
      return { type: 'backspace' };
    case 0x03:
      return { type: 'ctrl-c' };
    case 0x04:
      return { type: 'ctrl-d' };
    case 0x09:
      return { type: 'text', text: '\t' };
    default:
      return undefined;
  }
}

/**
 * The escape sequence starting at `i`, or undefined when the input ends before it does.
 * A lone ESC followed by anything that is not `[` or `O` is the Escape key by itself.
 */
function readEscape(s: string, i: number): string | undefined {
  if (i + 1 >= s.length) return undefined;
  const next = s[i + 1];
  if (next === '[') {
    for (let j = i + 2; j < s.length && j - i < MAX_SEQUENCE; j++) {
      const c = s.charCodeAt(j);
      if (c >= 0x40 && c <= 0x7e) return s.slice(i, j + 1);
    }
    return s.length - i < MAX_SEQUENCE ? undefined : s.slice(i, i + 2);
  }
  if (next === 'O') return i + 2 < s.length ? s.slice(i, i + 3) : undefined;
  return '\x1b';
}

function escapeKey(seq: string): KeyEvent | undefined {
  if (seq === '\x1b') return { type: 'esc' };
  if (seq === '\x1b[A' || seq === '\x1bOA') return { type: 'up' };
  if (seq === '\x1b[B' || seq === '\x1bOB') return { type: 'down' };
  return undefined;
}

/** Length of the longest suffix of `s` that is a proper prefix of the paste end marker. */
function markerPrefixLength(s: string): number {
  for (let n = Math.min(PASTE_END.length - 1, s.length); n > 0; n--) {
    if (PASTE_END.startsWith(s.slice(s.length - n))) return n;
  }
  return 0;
}
