// The one sanitizer between a command's words and the terminal: control characters show, never act;
// newlines, tabs and every printable character stay; `--json` output stays valid JSON of the same value.
import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/commands/render.js';
import { JaggersError, isJaggersError } from '../../src/errors.js';
import { inert, inertKeepingColours, inertLine, reportFailure, terminal, warnOnce } from '../../src/output.js';

/** Any character a terminal would act on: C0 but newline and tab, DEL, C1, bidi overrides and isolates. */
const ACTS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('inert', () => {
  it('shows escape sequences, BEL, CR, backspace, NUL, DEL, C1 and bidi controls as text', () => {
    const hostile = 'a\x1b]0;pwned\x07b\x1b[2J\rc\bd\x00e\x7ff\u009b31mg\u202eh';
    const out = inert(hostile);
    expect(out).toBe('a\\x1b]0;pwned\\x07b\\x1b[2J\\x0dc\\x08d\\x00e\\u007ff\\u009b31mg\\u202eh');
    expect(out).not.toMatch(ACTS);
  });

  it('keeps newlines, tabs and printable text of every script as they are', () => {
    const text = 'line one\n\tindented ✦ ⠋ 漢字 émoji 🙂 \\x1b as typed\n';
    expect(inert(text)).toBe(text);
  });

  it('inertLine: one line, so a newline or a tab cannot start a row of its own', () => {
    expect(inertLine('name\nj-deadbeef  done\tx')).toBe('name\\x0aj-deadbeef  done\\x09x');
  });

  it('is the same on text it already made inert (wrapping twice changes nothing)', () => {
    const once = inert('\x1b[31mred\x07');
    expect(inert(once)).toBe(once);
  });

  it('JSON output stays valid and means the same: every code unit up to U+2100 round-trips', () => {
    let all = '';
    for (let c = 0; c <= 0x2100; c++) all += String.fromCharCode(c);
    const text = JSON.stringify({ name: all }, null, 2);
    const out = inert(text);
    expect(out).not.toMatch(ACTS);
    expect((JSON.parse(out) as { name: string }).name).toBe(all);
  });

  it('inertKeepingColours (capture --ansi): colour sequences kept, every other control shown', () => {
    const screen = '\x1b[1;31mred\x1b[0m plain \x1b]0;title\x07 \x1b[2J';
    expect(inertKeepingColours(screen)).toBe('\x1b[1;31mred\x1b[0m plain \\x1b]0;title\\x07 \\x1b[2J');
  });
});

describe('terminal()', () => {
  it('every write is made inert; only its own controls reach the streams raw', () => {
    const out: string[] = [];
    const err: string[] = [];
    const t = terminal({ writeOut: (s) => void out.push(s), writeErr: (s) => void err.push(s), errIsTTY: true });
    t.writeOut('job \x1b[2Jname\n');
    t.writeErr('why \x07\n');
    t.control('clear-screen');
    t.control('clear-line');
    t.writeColoured('\x1b[32mok\x1b[0m\x1b]8;;x\x07');
    expect(out).toEqual(['job \\x1b[2Jname\n', '\x1b[H\x1b[2J', '\x1b[32mok\x1b[0m\\x1b]8;;x\\x07']);
    expect(err).toEqual(['why \\x07\n', '\r\x1b[K']);
    expect(t.errIsTTY).toBe(true);
  });
});

describe('renderTable', () => {
  it('a hostile cell is one inert line and the columns stay aligned', () => {
    const table = renderTable(
      ['JOB', 'NAME', 'STATE'],
      [
        ['j-1', 'evil\x1b[2J\nj-2  forged', 'done'],
        ['j-3', 'plain', 'queued'],
      ],
    );
    const lines = table.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(table).not.toMatch(ACTS);
    expect(lines[1]).toBe('j-1  evil\\x1b[2J\\x0aj-2  forged  done');
    expect(lines[2]!.indexOf('queued')).toBe(lines[1]!.indexOf('done'));
  });
});

describe('warnOnce and reportFailure', () => {
  it('prints each distinct warning once', () => {
    const err: string[] = [];
    const warn = warnOnce((s) => err.push(s));
    warn('a');
    warn('b');
    warn('a');
    expect(err).toEqual(['jaggers: warning: a\n', 'jaggers: warning: b\n']);
  });

  it('gives one line and 1 for our error, 130 for an interrupt, the stack and 70 for anything else', () => {
    const err: string[] = [];
    const w = (s: string) => void err.push(s);
    expect(reportFailure(new JaggersError('E_NOT_FOUND', 'no agent "x"'), isJaggersError, w)).toBe(1);
    expect(reportFailure(new JaggersError('E_INTERRUPTED', 'left running'), isJaggersError, w)).toBe(130);
    expect(reportFailure(new TypeError('boom'), isJaggersError, w)).toBe(70);
    expect(reportFailure('a string', isJaggersError, w)).toBe(70);
    expect(err.slice(0, 2)).toEqual(['jaggers: no agent "x"\n', 'jaggers: left running\n']);
    expect(err[2]).toMatch(/^jaggers: internal error: TypeError: boom\n {4}at /);
    expect(err[3]).toBe('jaggers: internal error: a string\n');
  });
});
