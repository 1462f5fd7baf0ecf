// A pane's output tail: busy text found across chunk boundaries (but a previous frame's not counted
// again), escape sequences stripped, and only the latest output kept.
import { describe, expect, it } from 'vitest';
import { OutputTail } from '../../src/panes/output-tail.js';

const BUSY = ['esc to cancel'];

function push(t: OutputTail, text: string): boolean {
  t.push(text);
  return t.saysBusy(text, BUSY);
}

describe('output tail', () => {
  it('finds busy text split between two chunks, and through escape sequences', () => {
    const t = new OutputTail();
    expect(push(t, '\x1b[2K⠋ Thinking (esc to ')).toBe(false);
    expect(push(t, 'cancel, 3s)')).toBe(true);
    expect(push(new OutputTail(), '(esc \x1b[1mto\x1b[0m cancel')).toBe(true);
  });

  it("does not count the previous frame's busy text for new output that says nothing", () => {
    const t = new OutputTail();
    expect(push(t, '(esc to cancel)')).toBe(true);
    expect(push(t, 'Done.')).toBe(false);
    // The same text again is a new frame.
    expect(push(t, '(esc to cancel)')).toBe(true);
  });

  it('a profile without busy text never says busy', () => {
    const t = new OutputTail();
    t.push('(esc to cancel)');
    expect(t.saysBusy('(esc to cancel)', [])).toBe(false);
  });

  it('keeps about the last 4096 characters of output, escapes stripped, for the raw region', () => {
    const t = new OutputTail();
    for (let i = 0; i < 100; i++) t.push(`\x1b[32m${String(i).padStart(3, '0')}${'x'.repeat(96)}\x1b[0m\n`);
    const text = t.text();
    expect(text).not.toContain('\x1b');
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text.length).toBeGreaterThan(3500);
    expect(text.endsWith(`099${'x'.repeat(96)}\n`)).toBe(true);
    expect(text).not.toContain('000x');
  });

  it('reset forgets the output and the tail', () => {
    const t = new OutputTail();
    push(t, 'hello (esc to ');
    t.reset();
    expect(t.text()).toBe('');
    expect(push(t, 'cancel')).toBe(false);
  });
});
