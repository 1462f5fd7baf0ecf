import { describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/sessions/events.js';
import { damagedLines, parseJournal, serializeEvents } from '../../src/sessions/journal.js';

const ts = '2025-11-21T10:00:00.000Z';
const events: JournalEvent[] = [
  { ts, type: 'task-created', taskId: 't1', workflow: 'w' },
  { ts, type: 'task-status', taskId: 't1', status: 'running' },
  { ts, type: 'task-status', taskId: 't1', status: 'done' },
];
const file = '/p/.jaggers/events.jsonl';
const text = serializeEvents(events);

describe('parseJournal', () => {
  it('reads one event per line and reports where it stopped', () => {
    const parsed = parseJournal(Buffer.from(text), { file });
    expect(parsed.entries.map((e) => [e.line, e.event])).toEqual(events.map((e, i) => [i + 1, e]));
    expect(parsed).toMatchObject({ lines: 3, goodBytes: Buffer.byteLength(text), torn: null });
  });

  it('skips a last line cut short mid-append, with a warning naming the file and line', () => {
    const cut = text + serializeEvents(events.slice(0, 1)).slice(0, 20);
    const parsed = parseJournal(Buffer.from(cut), { file });
    expect(parsed.entries).toHaveLength(3);
    expect(parsed.goodBytes).toBe(Buffer.byteLength(text));
    expect(parsed.torn).toMatchObject({ line: 4, offset: Buffer.byteLength(text) });
    expect(parsed.torn?.message).toMatch(/^\/p\/\.jaggers\/events\.jsonl line 4: last line has no newline/);
  });

  it('also treats an unparseable last line that has its newline as torn', () => {
    const parsed = parseJournal(Buffer.from(`${text}\0\0\0\0\n`), { file });
    expect(parsed.entries).toHaveLength(3);
    expect(parsed.torn?.message).toMatch(/line 4: not valid JSON/);
  });

  it('refuses a bad line in the middle, naming the file and line number', () => {
    const lines = text.split('\n');
    lines[1] = lines[1]!.slice(0, 15);
    expect(() => parseJournal(Buffer.from(lines.join('\n')), { file })).toThrow(
      /^\/p\/\.jaggers\/events\.jsonl line 2: not valid JSON .*damaged before its last line/,
    );
  });

  it('refuses a valid JSON line that is not an event, naming the field', () => {
    const bad = `${JSON.stringify({ ts, type: 'task-status', taskId: 't1' })}\n`;
    expect(() => parseJournal(Buffer.from(bad + text), { file })).toThrow(/line 1: field `status`/);
  });

  it('numbers lines and bytes from where a partial read started', () => {
    const start = 1000;
    const parsed = parseJournal(Buffer.from(`\n${text}`), { file, startBytes: start, startLines: 10 });
    expect(parsed.entries.map((e) => e.line)).toEqual([12, 13, 14]);
    expect(parsed.lines).toBe(4);
    expect(parsed.goodBytes).toBe(start + 1 + Buffer.byteLength(text));
  });
});

describe('damagedLines', () => {
  it('finds each line damaged in place (cut, garbage, NUL, bad UTF-8) by its number; blank and good lines pass', () => {
    const good = text.split('\n')[0]!;
    const rows = [good, '', good.slice(0, 20) + '#'.repeat(good.length - 20), '\0\0\0\0', `  ${good}  `, good, '{"ts": "x"}', good];
    // Line 9: the right shape, bytes that are not UTF-8.
    const chunk = Buffer.concat([Buffer.from(rows.join('\n') + '\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])]);
    const d = damagedLines(chunk, file, 2);
    expect(d.count).toBe(3);
    expect(d.lines.map((l) => l.line)).toEqual([3, 4]);
    expect(d.lines[0]!.message).toMatch(new RegExp(`^${file} line 3: not valid JSON`));
    expect(damagedLines(chunk, file).lines.map((l) => l.line)).toEqual([3, 4, 9]);
    // Line 7 is one well-formed object, though no event: the shape check lets it by (no checksums to tell).
    expect(damagedLines(Buffer.from(text), file)).toEqual({ lines: [], count: 0 });
  });
});
