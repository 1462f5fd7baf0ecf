// A compaction's end (src/work/compact-wait.ts): busy after the command, then ready; ready with no busy
// for a while; a question, a limit or the pane's end stop the wait; a timeout fails it.
import { describe, expect, it } from 'vitest';
import type { PaneStatusSource } from '../../src/delivery/ports.js';
import { compactionOver } from '../../src/work/compact-wait.js';

function pane(initial: string) {
  let now = initial;
  const listeners = new Set<(c: { pane: { paneId: string }; status: string }) => void>();
  const src: PaneStatusSource = {
    status: () => now,
    onChange: (l) => (listeners.add(l), () => listeners.delete(l)),
    onScreen: () => () => undefined,
    inputSent: () => undefined,
  };
  const set = (s: string, paneId = '%1') => {
    if (paneId === '%1') now = s;
    for (const l of listeners) l({ pane: { paneId }, status: s });
  };
  return { src, set, listening: () => listeners.size };
}

const w = { paneId: '%1', agent: 'coder', ready: ['idle', 'done'] };

describe('compactionOver', () => {
  it('waits for busy, then ready; another pane changes nothing', async () => {
    const p = pane('done');
    const over = compactionOver(p.src, { ...w, busyWithinMs: 10_000 });
    p.set('busy');
    p.set('done', '%2');
    p.set('done');
    await expect(over).resolves.toBe('busy-then-ready');
    expect(p.listening()).toBe(0);
  });

  it('takes a ready pane that showed no busy within busyWithinMs as done', async () => {
    const p = pane('done');
    await expect(compactionOver(p.src, { ...w, busyWithinMs: 20 })).resolves.toBe('ready');
  });

  it('stops at a question, a limit or the pane gone; fails after its timeout', async () => {
    for (const s of ['waiting_input', 'limited', 'exited']) {
      const p = pane('done');
      const over = compactionOver(p.src, { ...w, busyWithinMs: 10_000 });
      p.set('busy');
      p.set(s);
      await expect(over).resolves.toBe(s);
    }
    const p = pane('busy');
    await expect(compactionOver(p.src, { ...w, busyWithinMs: 5, timeoutMs: 30 })).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    const a = new AbortController();
    const q = pane('busy');
    const over = compactionOver(q.src, { ...w, signal: a.signal });
    a.abort();
    await expect(over).resolves.toBe('aborted');
  });
});
