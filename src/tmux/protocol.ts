import { decodeOctal } from './octal.js';

/** What one line (or one %begin..%end block) of a tmux control-mode stream means. */
export type ControlEvent =
  | { type: 'reply'; number: number; fromClient: boolean; ok: boolean; lines: string[] }
  /** Pane output; `ageMs`, with `pause-after` set (`%extended-output`), is how long tmux held it. */
  | { type: 'output'; paneId: string; data: Buffer; ageMs?: number }
  | { type: 'notification'; name: string; args: string[] }
  | { type: 'exit'; reason: string };

const BEGIN = Buffer.from('%begin ');
const OUTPUT = Buffer.from('%output ');
const EXTENDED = Buffer.from('%extended-output ');
const SEPARATOR = Buffer.from(' : ');

/**
 * Incremental parser of the control-mode byte stream. Feed it chunks; it returns the events that
 * the complete lines in them make. Notifications never appear inside a %begin block (tmux's rule).
 */
export class ControlParser {
  /** The start of a line not ended yet, in the chunks it came in (joined once its newline comes: a long line costs its length, not its square). */
  private pending: Buffer[] = [];
  private block: { number: number; fromClient: boolean; lines: string[] } | null = null;

  feed(chunk: Buffer): ControlEvent[] {
    const events: ControlEvent[] = [];
    if (!chunk.includes(0x0a)) {
      if (chunk.length) this.pending.push(Buffer.from(chunk));
      return events;
    }
    let data = this.pending.length ? Buffer.concat([...this.pending, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, start);
      if (nl < 0) break;
      let end = nl;
      if (end > start && data[end - 1] === 0x0d) end--;
      const ev = this.line(data.subarray(start, end));
      if (ev) events.push(ev);
      start = nl + 1;
    }
    this.pending = start < data.length ? [Buffer.from(data.subarray(start))] : [];
    data = Buffer.alloc(0);
    return events;
  }

  private line(line: Buffer): ControlEvent | null {
    if (this.block) {
      if (line[0] === 0x25 /* % */) {
        const text = line.toString('utf8');
        const m = /^%(end|error) \d+ (\d+) (\d+)$/.exec(text);
        if (m && Number(m[2]) === this.block.number) {
          const b = this.block;
          this.block = null;
          return { type: 'reply', number: b.number, fromClient: b.fromClient, ok: m[1] === 'end', lines: b.lines };
        }
      }
      this.block.lines.push(line.toString('utf8'));
      return null;
    }
    if (startsWith(line, OUTPUT)) {
      const sp = line.indexOf(0x20, OUTPUT.length);
      if (sp < 0) return null;
      return {
        type: 'output',
        paneId: line.subarray(OUTPUT.length, sp).toString('latin1'),
        data: decodeOctal(line.subarray(sp + 1)),
      };
    }
    if (startsWith(line, EXTENDED)) {
      // `%extended-output %<pane> <age ms> [more fields] : <data>` (clients with pause-after set).
      const sp = line.indexOf(0x20, EXTENDED.length);
      const sep = line.indexOf(SEPARATOR, EXTENDED.length);
      if (sp < 0 || sep < 0) return null;
      const age = Number(line.subarray(sp + 1, line.indexOf(0x20, sp + 1)).toString('latin1'));
      return {
        type: 'output',
        paneId: line.subarray(EXTENDED.length, sp).toString('latin1'),
        data: decodeOctal(line.subarray(sep + SEPARATOR.length)),
        ...(Number.isFinite(age) ? { ageMs: age } : {}),
      };
    }
    if (startsWith(line, BEGIN)) {
      const parts = line.toString('latin1').split(' ');
      this.block = { number: Number(parts[2]), fromClient: (Number(parts[3]) & 1) === 1, lines: [] };
      return null;
    }
    const text = line.toString('utf8');
    if (text.startsWith('%exit')) return { type: 'exit', reason: text.slice(6) };
    if (text.startsWith('%')) {
      const [name, ...args] = text.slice(1).split(' ');
      return { type: 'notification', name: name ?? '', args };
    }
    return null;
  }
}

function startsWith(buf: Buffer, prefix: Buffer): boolean {
  return buf.length >= prefix.length && buf.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}
