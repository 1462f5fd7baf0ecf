// Pure parsing and formatting of the append-only journal (events.jsonl): one JSON event per line.
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
