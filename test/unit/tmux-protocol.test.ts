import { describe, expect, it } from 'vitest';
import { decodeOctal } from '../../src/tmux/octal.js';
import { ControlParser } from '../../src/tmux/protocol.js';
import { formatCommand, quoteArg } from '../../src/tmux/quote.js';
import { parseTmuxVersion, isSupported } from '../../src/tmux/version.js';
import { socketNameFor } from '../../src/tmux/server.js';

describe('decodeOctal', () => {
  it('turns \\ooo escapes into bytes and leaves UTF-8 alone', () => {
    const out = decodeOctal(Buffer.from('a\\015\\012b\\134c 日本'));
    expect(out.toString('utf8')).toBe('a\r\nb\\c 日本');
  });
  it('keeps a backslash that starts no escape', () => {
    expect(decodeOctal(Buffer.from('x\\9')).toString()).toBe('x\\9');
  });
});

describe('ControlParser', () => {
  it('frames replies, output and notifications across chunk boundaries', () => {
    const p = new ControlParser();
    const stream = Buffer.from(
      '%begin 1 10 0\n%end 1 10 0\n%session-changed $0 s\n%begin 1 11 1\nline one\n%end-not\n%end 1 11 1\n' +
        '%output %3 hi\\033[0m\\015\\012\n%begin 2 12 1\nparse error\n%error 2 12 1\n%window-add @4\n%exit\n',
    );
    const events = [];
    for (let i = 0; i < stream.length; i += 7) events.push(...p.feed(stream.subarray(i, i + 7)));
    expect(events).toEqual([
      { type: 'reply', number: 10, fromClient: false, ok: true, lines: [] },
      { type: 'notification', name: 'session-changed', args: ['$0', 's'] },
      { type: 'reply', number: 11, fromClient: true, ok: true, lines: ['line one', '%end-not'] },
      { type: 'output', paneId: '%3', data: Buffer.from('hi\x1b[0m\r\n') },
      { type: 'reply', number: 12, fromClient: true, ok: false, lines: ['parse error'] },
      { type: 'notification', name: 'window-add', args: ['@4'] },
      { type: 'exit', reason: '' },
    ]);
  });
  it('reads %extended-output (clients with pause-after) as output with its age, and %pause as a notification', () => {
    const p = new ControlParser();
    const events = p.feed(Buffer.from('%extended-output %7 1234 : a : b\\033x\n%extended-output %8 0 : \n%pause %7\n%continue %7\n'));
    expect(events).toEqual([
      { type: 'output', paneId: '%7', data: Buffer.from('a : b\x1bx'), ageMs: 1234 },
      { type: 'output', paneId: '%8', data: Buffer.alloc(0), ageMs: 0 },
      { type: 'notification', name: 'pause', args: ['%7'] },
      { type: 'notification', name: 'continue', args: ['%7'] },
    ]);
  });

  it('joins a UTF-8 character split between chunks in block output', () => {
    const p = new ControlParser();
    const bytes = Buffer.from('%begin 1 1 1\n日本\n%end 1 1 1\n');
    const ev = [...p.feed(bytes.subarray(0, 15)), ...p.feed(bytes.subarray(15))];
    expect(ev).toEqual([{ type: 'reply', number: 1, fromClient: true, ok: true, lines: ['日本'] }]);
  });
});

describe('quoteArg', () => {
  it.each([
    ['plain', 'plain'],
    ['', "''"],
    ["it's", `'it'\\''s'`],
    ['x;', "'x;'"],
    ['$HOME ~ #{pane_id}', "'$HOME ~ #{pane_id}'"],
    ['%12', '%12'],
    ['%12:pause', "'%12:pause'"],
  ])('quotes %j as %s', (input, expected) => {
    expect(quoteArg(input)).toBe(expected);
  });
  it('refuses line breaks with the value in the message', () => {
    expect(() => quoteArg('a\nb')).toThrow(/line break.*"a\\nb"/);
  });
  it('joins a command', () => {
    expect(formatCommand(['send-keys', '-t', '%1', '-l', 'a b'])).toBe("send-keys -t %1 -l 'a b'");
  });
});

describe('tmux version and socket', () => {
  it('parses versions and knows the minimum', () => {
    expect(parseTmuxVersion('tmux 3.3a')).toMatchObject({ major: 3, minor: 3 });
    expect(parseTmuxVersion('tmux next-3.5')).toMatchObject({ major: 3, minor: 5 });
    expect(parseTmuxVersion('bash: nope')).toBeNull();
    expect(isSupported({ raw: 'tmux 3.1c', major: 3, minor: 1 })).toBe(false);
    expect(isSupported({ raw: 'tmux 3.2', major: 3, minor: 2 })).toBe(true);
  });
  it('derives a stable socket name per project folder', () => {
    expect(socketNameFor('/a/b')).toMatch(/^jaggers-[0-9a-f]{8}$/);
    expect(socketNameFor('/a/b')).toBe(socketNameFor('/a/b/'));
    expect(socketNameFor('/a/b')).not.toBe(socketNameFor('/a/c'));
  });
});
