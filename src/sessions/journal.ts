// Pure parsing and formatting of the append-only journal (events.jsonl): one JSON event per line.
import { isUtf8 } from 'node:buffer';
import { JaggersError } from '../errors.js';
import { journalEventSchema, type JournalEvent } from './events.js';
import { parseJson, validate } from './validate.js';

export interface JournalEntry {
  /** 1-based line number in the whole file. */
  line: number;
  event: JournalEvent;
}

export interface TornTail {
  line: number;
  /** Byte offset (in the whole file) where the torn line starts; the file should end here. */
  offset: number;
  message: string;
}

export interface ParsedJournal {
  entries: JournalEntry[];
  /** Newline-terminated lines consumed (blank ones included), not counting a torn tail. */
  lines: number;
  /** Byte offset (in the whole file) just after the last complete, valid line. */
  goodBytes: number;
  /** The last line when it was cut short by a crash mid-append: skipped, with a warning. */
  torn: TornTail | null;
}

export interface ParseOptions {
  /** The journal's path, for messages. */
  file: string;
  /** Where `chunk` starts in the file: byte offset and the number of lines before it. */
  startBytes?: number;
  startLines?: number;
}

export function serializeEvents(events: readonly JournalEvent[]): string {
  return events.map((e) => `${JSON.stringify(e)}\n`).join('');
}

function parseLine(text: string, where: string): { ok: true; event: JournalEvent } | { ok: false; message: string } {
  const json = parseJson(text, where);
  if (!json.ok) return json;
  const valid = validate(journalEventSchema, json.value, where);
  return valid.ok ? { ok: true, event: valid.value } : valid;
}

/**
 * Parse journal bytes. A bad line in the middle throws E_REGISTRY naming the file and line; the last line,
 * when it has no newline or does not parse, is reported as `torn` instead (a crash mid-append).
 */
export function parseJournal(chunk: Buffer, options: ParseOptions): ParsedJournal {
  const { file } = options;
  const startBytes = options.startBytes ?? 0;
  const startLines = options.startLines ?? 0;
  const entries: JournalEntry[] = [];
  let pos = 0;
  let lines = 0;
  while (pos < chunk.length) {
    const nl = chunk.indexOf(0x0a, pos);
    const lineNo = startLines + lines + 1;
    const end = nl === -1 ? chunk.length : nl;
    const text = chunk.subarray(pos, end).toString('utf8');
    const where = `${file} line ${lineNo}`;
    if (nl === -1) {
      const message = `${where}: last line has no newline (cut short while being appended, ${end - pos} bytes); skipped`;
      return { entries, lines, goodBytes: startBytes + pos, torn: { line: lineNo, offset: startBytes + pos, message } };
    }
    if (text.trim() !== '') {
      const parsed = parseLine(text, where);
      if (!parsed.ok) {
        if (nl + 1 >= chunk.length) {
          const message = `${parsed.message}; it is the last line (cut short by a crash?), skipped`;
          return { entries, lines, goodBytes: startBytes + pos, torn: { line: lineNo, offset: startBytes + pos, message } };
        }
        throw new JaggersError('E_REGISTRY', `${parsed.message}; the journal is damaged before its last line, fix or remove that line`);
      }
      entries.push({ line: lineNo, event: parsed.event });
    }
    lines += 1;
    pos = nl + 1;
  }
  return { entries, lines, goodBytes: startBytes + pos, torn: null };
}

export interface DamagedLine {
  /** 1-based line number in the whole file. */
  line: number;
  message: string;
}

/**
 * The lines of `chunk` (whole lines, from the journal's start) that are not events, such as a line a disk
 * or an editor damaged in the middle of the file, the most `max` of them. Every line is looked at by its
 * shape, with native scans (valid UTF-8, no NUL byte, a `{...}` object: fast enough for a large journal at
 * every supervisor start); a line that looks wrong is parsed to say why. A line that is still one
 * well-formed object with a changed value is not caught: the journal keeps no checksums.
 */
export function damagedLines(chunk: Buffer, file: string, max = 5): { lines: DamagedLine[]; count: number } {
  const out: DamagedLine[] = [];
  let count = 0;
  const clean = isUtf8(chunk) && chunk.indexOf(0) === -1;
  let pos = 0;
  for (let n = 1; pos < chunk.length; n++) {
    const nl = chunk.indexOf(0x0a, pos);
    const end = nl === -1 ? chunk.length : nl;
    const line = chunk.subarray(pos, end);
    pos = end + 1;
    const looksRight = line.length === 0 || (line[0] === 0x7b && line[line.length - 1] === 0x7d && (clean || (isUtf8(line) && line.indexOf(0) === -1)));
    if (looksRight) continue;
    const text = line.toString('utf8');
    if (text.trim() === '') continue;
    const parsed = parseLine(text, `${file} line ${n}`);
    if (parsed.ok) continue;
    count += 1;
    if (out.length < max) out.push({ line: n, message: parsed.message });
  }
  return { lines: out, count };
}
