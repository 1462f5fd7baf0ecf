// The watchdog on a simulated clock: a busy agent silent for stuckAfter (its spinner and timer aside),
// the same question again and again, the same tool call in a loop; each said once, and no poll.
import { describe, expect, it } from 'vitest';
import { screenFingerprint, Watchdog, type StuckFinding } from '../../../src/panes/watchdog.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const MIN = 60_000;
const BUSY = [/\(esc to cancel/];

function setup(stuckAfterMs = 10 * MIN) {
  const clock = new FakeClock();
  const found: StuckFinding[] = [];
  let hookAt: number | null = null;
  const dog = new Watchdog({ clock, stuckAfterMs: () => stuckAfterMs, lastHookAt: () => hookAt, found: (f) => found.push(f) });
  return { clock, found, dog, hook: () => (hookAt = clock.now()) };
}

const screen = (s: number, body = 'reading the code') => `> do it\n${body}\n⠋ Thinking... (esc to cancel, ${s}s)\n`;

describe('the watchdog', () => {
  it('a busy agent whose screen moves only in its spinner and timer is stuck after stuckAfter, said once', () => {
    const h = setup();
    h.dog.status('%1', 'alpha', 'busy');
    for (let s = 1; s <= 12 * 60; s += 30) {
      h.dog.screen('%1', screen(s), BUSY);
      h.clock.advance(30_000);
    }
    expect(h.found).toHaveLength(1);
    expect(h.found[0]).toMatchObject({ agent: 'alpha', kind: 'silent' });
    expect(h.found[0]!.reason).toBe('busy with no output and no hook event for 10 min');
    expect(h.dog.finding('%1')?.kind).toBe('silent');
    h.clock.advance(60 * MIN);
    expect(h.found).toHaveLength(1);
    // Progress clears it; leaving busy too.
    h.dog.screen('%1', screen(1, 'wrote the file'), BUSY);
    expect(h.dog.finding('%1')).toBeNull();
    h.dog.status('%1', 'alpha', 'idle');
    h.clock.advance(60 * MIN);
    expect(h.found).toHaveLength(1);
  });

  it('output after a finding clears it; the next silence in the stretch stands again, said once per stretch', () => {
    const h = setup(2_000);
    h.dog.status('%1', 'alpha', 'busy');
    h.clock.advance(2_000);
    expect(h.found.map((f) => f.again ?? false)).toEqual([false]);
    // The first screen of the stretch arrives late (a loaded machine): it moved, so the finding is gone.
    h.dog.screen('%1', screen(2), BUSY);
    expect(h.dog.finding('%1')).toBeNull();
    h.clock.advance(1_999);
    expect(h.found).toHaveLength(1);
    expect(h.dog.finding('%1')).toBeNull();
    h.clock.advance(1);
    expect(h.dog.finding('%1')).toMatchObject({ kind: 'silent', again: true });
    expect(h.found).toHaveLength(1);
    // A new busy stretch starts over: its first finding is said.
    h.dog.status('%1', 'alpha', 'done');
    expect(h.dog.finding('%1')).toBeNull();
    h.dog.status('%1', 'alpha', 'busy');
    h.clock.advance(2_000);
    expect(h.found.map((f) => f.again ?? false)).toEqual([false, false]);
  });

  it('output or a hook call within stuckAfter moves the deadline on', () => {
    const h = setup(5 * MIN);
    h.dog.status('%1', 'alpha', 'busy');
    h.clock.advance(4 * MIN);
    h.dog.screen('%1', screen(1, 'new output'), BUSY);
    h.clock.advance(4 * MIN);
    h.hook();
    h.clock.advance(4 * MIN);
    expect(h.found).toEqual([]);
    h.clock.advance(MIN);
    expect(h.found.map((f) => f.kind)).toEqual(['silent']);
  });

  it('the same question three times in a row is a loop; another question starts the count over', () => {
    const h = setup();
    h.dog.question('%1', 'alpha', 'Bash: rm -rf build');
    h.dog.question('%1', 'alpha', 'Bash: rm -rf build');
    h.dog.question('%1', 'alpha', 'Edit: src/a.ts');
    h.dog.question('%1', 'alpha', 'Edit: src/a.ts');
    expect(h.found).toEqual([]);
    h.dog.question('%1', 'alpha', 'Edit: src/a.ts');
    expect(h.found).toHaveLength(1);
    expect(h.found[0]).toMatchObject({ kind: 'repeated-question', reason: 'asked the same question 3 times in a row: Edit: src/a.ts' });
  });

  it('the same tool call three times in one turn is a loop; a turn end starts the count over', () => {
    const h = setup();
    h.dog.status('%1', 'alpha', 'busy');
    h.dog.tool('%1', 'alpha', 'Bash', '{"command":"npm test"}');
    h.dog.tool('%1', 'alpha', 'Bash', '{"command":"npm test"}');
    h.dog.status('%1', 'alpha', 'done');
    h.dog.status('%1', 'alpha', 'busy');
    h.dog.tool('%1', 'alpha', 'Bash', '{"command":"npm test"}');
    h.dog.tool('%1', 'alpha', 'Bash', '{"command":"npm test"}');
    expect(h.found).toEqual([]);
    h.dog.tool('%1', 'alpha', 'Bash', '{"command":"npm test"}');
    expect(h.found).toHaveLength(1);
    expect(h.found[0]).toMatchObject({ kind: 'tool-loop' });
    expect(h.found[0]!.reason).toBe('called Bash with the same input 3 times in a row in one turn: {"command":"npm test"}');
  });

  it("the fingerprint leaves out the spinner's line and the timer's digits", () => {
    expect(screenFingerprint(screen(5), BUSY)).toBe(screenFingerprint(screen(65), BUSY));
    expect(screenFingerprint(screen(5), BUSY)).not.toBe(screenFingerprint(screen(5, 'other'), BUSY));
  });
});
