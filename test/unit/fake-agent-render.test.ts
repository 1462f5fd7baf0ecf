import { describe, expect, it } from 'vitest';
import type { ScreenView } from '../../src/fake-agent/render.js';
import { CLEAR, renderLines, renderScreen, spinnerLine } from '../../src/fake-agent/render.js';
import { dropLastCodePoint, fitWidth, stringWidth, wrapWidth } from '../../src/fake-agent/text.js';

const ID = '6f1c2a3b-0000-4000-8000-000000000001';

function view(over: Partial<ScreenView> = {}): ScreenView {
  return { status: 'idle', sessionId: ID, cwd: '/w', transcript: [], busySince: undefined, input: '', picker: false, ...over };
}

const size = { rows: 50, cols: 60 };
const turn: ScreenView['transcript'] = [
  { kind: 'prompt', text: 'hello' },
  { kind: 'reply', lines: ['turn 1 of session 6f1c2a3b', 'You said: hello'] },
  { kind: 'worked', ms: 2400 },
  { kind: 'gap' },
];

describe('fake agent: render', () => {
  it('idle screen: banner, session, input box, footer', () => {
    const lines = renderLines(view(), size, 0);
    expect(lines[0]).toBe(' ✦ Fake Agent 1.0.0 (jaggers demo agent)');
    expect(lines[1]).toBe(` session ${ID}    cwd /w`);
    expect(lines.slice(-4)).toEqual([
      `╭${'─'.repeat(57)}╮`,
      `│ >   Type your message or @path/to/file${' '.repeat(17)} │`,
      `╰${'─'.repeat(57)}╯`,
      ' ? for shortcuts',
    ]);
    expect(renderScreen(view(), size, 0).startsWith(`${CLEAR} ✦ Fake Agent`)).toBe(true);
  });

  it('a finished turn', () => {
    const lines = renderLines(view({ transcript: turn }), size, 0);
    expect(lines.slice(3, 8)).toEqual([' > hello', ' ✦ turn 1 of session 6f1c2a3b', '   You said: hello', ' ✻ Worked for 2s', '']);
  });

  it('busy keeps the input box and adds the spinner line', () => {
    const lines = renderLines(view({ status: 'busy', busySince: 1000, transcript: [{ kind: 'prompt', text: 'hi' }] }), size, 4200);
    expect(lines).toContain(' ⠋ Thinking... (esc to cancel, 3s)');
    expect(lines.join('\n')).toContain('Type your message');
    expect(spinnerLine(0, 0)).toBe(' ⠋ Thinking... (esc to cancel, 0s)');
    expect(spinnerLine(0, 85)).toContain('⠙');
  });

  it('waiting shows the menu at the bottom instead of the input box', () => {
    const lines = renderLines(view({ status: 'waiting' }), size, 0);
    expect(lines.slice(-4)).toEqual([
      ' Allow execution of [Shell]: touch approved.txt?',
      ' ● 1. Allow once',
      '   2. Deny',
      ' Waiting for user confirmation...',
    ]);
    expect(lines.join('\n')).not.toContain('Type your message');
  });

  it('starting shows only the boot line', () => {
    expect(renderLines(view({ status: 'starting' }), size, 0)).toEqual([' Starting fake agent...']);
  });

  it('typed text: the last line, padded to the box; the picker replaces the footer', () => {
    const lines = renderLines(view({ input: 'first\n/cl世界', picker: true }), size, 0);
    expect(lines.slice(-3)).toEqual([`│ > /cl世界${' '.repeat(46)} │`, `╰${'─'.repeat(57)}╯`, ' ↑/↓ to navigate · Enter to select']);
    const long = renderLines(view({ input: 'x'.repeat(500) }), size, 0);
    expect(long.at(-3)).toBe(`│ > ${'x'.repeat(53)} │`);
  });

  it('draws only the last screenful of transcript and never more lines than rows', () => {
    const many = Array.from({ length: 40 }, (_, i) => turn.map((e) => (e.kind === 'prompt' ? { ...e, text: `p${i}` } : e))).flat();
    const lines = renderLines(view({ transcript: many }), { rows: 20, cols: 60 }, 0);
    expect(lines).toHaveLength(20);
    expect(lines[0]).toContain('Fake Agent');
    expect(lines.join('\n')).toContain('p39');
    expect(lines.join('\n')).not.toContain('p30');
  });

  it('sanitizes control characters and wraps long reply lines', () => {
    const lines = renderLines(
      view({
        transcript: [
          { kind: 'prompt', text: 'a\tb\x1b[2J' },
          { kind: 'reply', lines: ['y'.repeat(100)] },
        ],
      }),
      size,
      0,
    );
    expect(lines[3]).toBe(' > a b?[2J');
    expect(lines[4]).toBe(` ✦ ${'y'.repeat(56)}`);
    expect(lines[5]).toBe(`   ${'y'.repeat(44)}`);
  });

  it("wraps a prompt's echo at spaces, as the real CLIs do: a pointer's nonce tag lands whole on a line; a word longer than the line is broken anywhere", () => {
    // 60 columns: 56 cells of text after ' > '. The tag would start at cell 45 and cross the edge.
    const pointer = `Read ${'p'.repeat(20)}/turn_1.md and do what it asks. [jg:0123456789abcdef]`;
    const long = `${'w'.repeat(60)} end`;
    const lines = renderLines(view({ transcript: [{ kind: 'prompt', text: pointer }, { kind: 'gap' }, { kind: 'prompt', text: long }] }), size, 0);
    expect(lines.slice(3, 9)).toEqual([
      ` > Read ${'p'.repeat(20)}/turn_1.md and do what it asks.`,
      '   [jg:0123456789abcdef]',
      '',
      ` > ${'w'.repeat(56)}`,
      `   ${'w'.repeat(4)} end`,
      '',
    ]);
  });
});

describe('fake agent: text widths', () => {
  it('counts wide and zero-width characters', () => {
    expect(stringWidth('a世👋e\u0301')).toBe(6);
    expect(fitWidth('ab世界', 3)).toBe('ab');
    expect(wrapWidth('世界世', 4)).toEqual(['世界', '世']);
    expect(dropLastCodePoint('a👋')).toBe('a');
  });
});
