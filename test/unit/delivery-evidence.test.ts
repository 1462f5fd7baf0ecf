// Pure parts of delivery: the prompt's nonce, and a prompt left unsubmitted in the input box.
import { describe, expect, it } from 'vitest';
import { strayPrompt } from '../../src/delivery/evidence.js';
import { makeNonce } from '../../src/delivery/sanitize.js';

describe('nonces', () => {
  it('are 64 random bits (16 hex digits): 100,000 of them, none twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const n = makeNonce();
      expect(n).toMatch(/^[0-9a-f]{16}$/);
      seen.add(n);
    }
    expect(seen.size).toBe(100_000);
  });
});

describe('a prompt typed but never submitted', () => {
  const marker = [/^ ?✦ /u, /✻ Worked for/u];
  const screen = (...lines: string[]) => lines.join('\n');
  const box = (text: string) => ['╭────╮', `│ > ${text}`, '╰────╯', ' ? for shortcuts'];

  it('is the last tag on screen, inside the input area, with no reply after it', () => {
    const s = screen(' > Read a.md [jg:1111111111111111]', ' ✦ the answer', ' ✻ Worked for 1s', '', ...box('Read b.md [jg:2222222222222222]'));
    expect(strayPrompt(s, 4, null, marker)).toBe('[jg:2222222222222222]');
    expect(strayPrompt(s, 4, '2222222222222222', marker), 'our own prompt is not stray').toBeNull();
  });

  it('an echo answered near the bottom (a resumed conversation) is not one', () => {
    const s = screen(' > Read a.md [jg:1111111111111111]', ' ✦ the answer', ...box(''));
    expect(strayPrompt(s, 6, null, marker)).toBeNull();
    // Nor is an echo above the input area, answered or not.
    expect(strayPrompt(screen(' > Read a.md [jg:1111111111111111]', '', '', ...box('')), 4, null, marker)).toBeNull();
    expect(strayPrompt(screen(...box('no tag here')), 4, null, marker)).toBeNull();
  });
});
