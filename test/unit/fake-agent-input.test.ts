import { describe, expect, it } from 'vitest';
import type { EditorOptions } from '../../src/fake-agent/editor.js';
import { Editor } from '../../src/fake-agent/editor.js';
import type { KeyEvent } from '../../src/fake-agent/input-parser.js';
import { InputParser } from '../../src/fake-agent/input-parser.js';

const PS = '\x1b[200~';
const PE = '\x1b[201~';

describe('fake agent: InputParser', () => {
  it('groups printable text, including CJK, emoji and combining marks', () => {
    const p = new InputParser();
    expect(p.feed('héllo 世界 👋 e\u0301')).toEqual([{ type: 'text', text: 'héllo 世界 👋 e\u0301' }]);
  });

  it('maps control keys', () => {
    const p = new InputParser();
    expect(p.feed('a\r\n\x7f\x08\x03\x04').map((e) => e.type)).toEqual(['text', 'enter', 'newline', 'backspace', 'backspace', 'ctrl-c', 'ctrl-d']);
  });

  it('takes arrows and ignores other sequences', () => {
    const p = new InputParser();
    expect(p.feed('\x1b[A\x1bOB\x1b[1;5Cx')).toEqual([{ type: 'up' }, { type: 'down' }, { type: 'text', text: 'x' }]);
  });

  it('holds a lone ESC until more input or a flush', () => {
    const p = new InputParser();
    expect(p.feed('\x1b')).toEqual([]);
    expect(p.hasPending).toBe(true);
    expect(p.flushPending()).toEqual([{ type: 'esc' }]);
    expect(p.hasPending).toBe(false);
    expect(p.feed('\x1b')).toEqual([]);
    expect(p.feed('[A')).toEqual([{ type: 'up' }]);
    expect(p.feed('\x1bq')).toEqual([{ type: 'esc' }, { type: 'text', text: 'q' }]);
  });

  it('keeps a bracketed paste literal and turns CR and CRLF into LF', () => {
    const p = new InputParser();
    expect(p.feed(`${PS}a\rb\r\nc\nd\x03\x7f${PE}\r`)).toEqual([{ type: 'paste', text: 'a\nb\nc\nd\x03\x7f' }, { type: 'enter' }]);
  });

  it('finds the markers when chunks cut them anywhere', () => {
    const input = `x${PS}one\r\ntwo 世界${PE}\r`;
    for (let cut = 1; cut < input.length; cut++) {
      const p = new InputParser();
      const events = [...p.feed(input.slice(0, cut)), ...p.feed(input.slice(cut))];
      const merged = events.filter((e) => e.type !== 'text' || e.text !== '');
      expect(
        merged.map((e) => e.type),
        `cut at ${cut}`,
      ).toEqual(['text', 'paste', 'enter']);
      expect(merged[1], `cut at ${cut}`).toEqual({ type: 'paste', text: 'one\ntwo 世界' });
    }
  });

  it('gathers a 1 MB paste fed in 4 KB chunks exactly', () => {
    const body = 'abc 世界 👋\n'.repeat(80_000);
    const input = `${PS}${body}${PE}`;
    const p = new InputParser();
    const events: KeyEvent[] = [];
    for (let i = 0; i < input.length; i += 4096) events.push(...p.feed(input.slice(i, i + 4096)));
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({ type: 'paste', text: body });
  });
});

function editorWith(options: Partial<EditorOptions> = {}): Editor {
  return new Editor({ pasteBurstMs: 0, picker: false, ...options });
}

describe('fake agent: Editor', () => {
  it('types, deletes one code point per Backspace, and submits on Enter', () => {
    const e = editorWith();
    e.handle({ type: 'text', text: 'hi 👋e\u0301' }, 0);
    e.handle({ type: 'backspace' }, 0);
    expect(e.text).toBe('hi 👋e');
    e.handle({ type: 'backspace' }, 0);
    e.handle({ type: 'backspace' }, 0);
    expect(e.text).toBe('hi ');
    expect(e.handle({ type: 'enter' }, 0)).toEqual({ type: 'submit', text: 'hi ' });
    expect(e.text).toBe('');
  });

  it('ignores Enter on an empty or blank buffer', () => {
    const e = editorWith();
    expect(e.handle({ type: 'enter' }, 0)).toEqual({ type: 'none' });
    e.handle({ type: 'text', text: '  ' }, 0);
    expect(e.handle({ type: 'enter' }, 0)).toEqual({ type: 'none' });
  });

  it('Ctrl-C clears text, then exits; Ctrl-D exits', () => {
    const e = editorWith();
    e.handle({ type: 'text', text: 'x' }, 0);
    expect(e.handle({ type: 'ctrl-c' }, 0)).toEqual({ type: 'none' });
    expect(e.text).toBe('');
    expect(e.handle({ type: 'ctrl-c' }, 0)).toEqual({ type: 'exit' });
    e.handle({ type: 'text', text: 'x' }, 0);
    expect(e.handle({ type: 'ctrl-d' }, 0)).toEqual({ type: 'exit' });
  });

  it('paste burst: an Enter soon after a paste is a newline, a later one submits', () => {
    const e = editorWith({ pasteBurstMs: 100 });
    e.handle({ type: 'paste', text: 'a\nb' }, 1000);
    expect(e.handle({ type: 'enter' }, 1050)).toEqual({ type: 'none' });
    expect(e.text).toBe('a\nb\n');
    expect(e.handle({ type: 'enter' }, 1101)).toEqual({ type: 'submit', text: 'a\nb\n' });
  });

  it('without a burst window an Enter right after a paste submits', () => {
    const e = editorWith();
    e.handle({ type: 'paste', text: 'a' }, 1000);
    expect(e.handle({ type: 'enter' }, 1000)).toEqual({ type: 'submit', text: 'a' });
  });

  it('picker: the first Enter after / or @ closes the picker, the next submits', () => {
    const e = editorWith({ picker: true });
    e.handle({ type: 'text', text: '/clear' }, 0);
    expect(e.pickerOpen).toBe(true);
    expect(e.handle({ type: 'enter' }, 0)).toEqual({ type: 'none' });
    expect(e.pickerOpen).toBe(false);
    expect(e.handle({ type: 'enter' }, 0)).toEqual({ type: 'submit', text: '/clear' });
  });

  it('picker: typing after closing it opens it again; plain text never opens it', () => {
    const e = editorWith({ picker: true });
    e.handle({ type: 'paste', text: '@file' }, 0);
    e.handle({ type: 'enter' }, 0);
    e.handle({ type: 'text', text: 'x' }, 0);
    expect(e.pickerOpen).toBe(true);
    e.clear();
    e.handle({ type: 'text', text: 'hello /x' }, 0);
    expect(e.pickerOpen).toBe(false);
    const off = editorWith();
    off.handle({ type: 'text', text: '/x' }, 0);
    expect(off.pickerOpen).toBe(false);
    expect(off.handle({ type: 'enter' }, 0)).toEqual({ type: 'submit', text: '/x' });
  });
});
