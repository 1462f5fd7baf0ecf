// The status line's state options (src/supervisor/publish.ts): a change of the attention mark goes at
// once; other state changes at most every STATE_GAP_MS per window, the last one winning.
import { afterEach, describe, expect, it } from 'vitest';
import { STATE_GAP_MS, statusLine } from '../../src/supervisor/publish.js';
import type { StatusChange } from '../../src/panes/watcher.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

let n = 0;
const change = (windowId: string, status: StatusChange['status']): StatusChange =>
  ({
    pane: { windowId, paneId: `%${windowId.slice(1)}`, agent: 'a' },
    status,
    since: 0,
    rule: null,
    lines: [],
    source: 'hook',
    turns: 0,
  }) as unknown as StatusChange;

describe('statusLine', () => {
  let ctl: FakeControl;
  afterEach(async () => {
    await ctl.close();
  });
  const setup = () => {
    ctl = fakeControl();
    const clock = new FakeClock();
    // Every command is answered at once, as tmux would.
    const publish = statusLine(ctl.client, clock);
    const send = (c: StatusChange) => {
      const before = ctl.written.length;
      const p = publish(c);
      for (let i = before; i < ctl.written.length; i++) ctl.reply();
      return p;
    };
    const tick = (ms: number) => {
      const before = ctl.written.length;
      clock.advance(ms);
      for (let i = before; i < ctl.written.length; i++) ctl.reply();
    };
    return { clock, send, tick };
  };
  const states = (w: string) => ctl.written.filter((l) => l.includes(`-t ${w} @jaggers_state`)).map((l) => l.split(' ').at(-1));

  it('sets the first change at once, and of the changes within the gap only the last, at its end', async () => {
    const { send, tick } = setup();
    const w = `@${++n}`;
    await send(change(w, 'busy'));
    expect(states(w)).toEqual(['busy']);
    await send(change(w, 'done'));
    await send(change(w, 'busy'));
    await send(change(w, 'done'));
    expect(states(w)).toEqual(['busy']);
    tick(STATE_GAP_MS - 1);
    expect(states(w)).toEqual(['busy']);
    tick(1);
    expect(states(w)).toEqual(['busy', 'done']);
    // Quiet for a gap: the next change goes at once again.
    tick(STATE_GAP_MS);
    await send(change(w, 'busy'));
    expect(states(w)).toEqual(['busy', 'done', 'busy']);
  });

  it('sets nothing at the end of a gap that ends on the state already shown', async () => {
    const { send, tick } = setup();
    const w = `@${++n}`;
    await send(change(w, 'busy'));
    await send(change(w, 'done'));
    await send(change(w, 'busy'));
    tick(STATE_GAP_MS * 3);
    expect(states(w)).toEqual(['busy']);
  });

  it('marks a window that waits for a person at once, with its state, and unmarks it at once', async () => {
    const { send, tick } = setup();
    const w = `@${++n}`;
    await send(change(w, 'busy'));
    await send(change(w, 'waiting_input'));
    expect(states(w)).toEqual(['busy', 'waiting_input']);
    expect(ctl.written.filter((l) => l.includes('@jaggers_attention'))).toEqual([
      `set-option -w -u -t ${w} @jaggers_attention`,
      `set-option -w -t ${w} @jaggers_attention waiting_input`,
    ]);
    await send(change(w, 'busy'));
    expect(states(w)).toEqual(['busy', 'waiting_input', 'busy']);
    expect(ctl.written.filter((l) => l.includes('@jaggers_attention')).at(-1)).toBe(`set-option -w -u -t ${w} @jaggers_attention`);
    tick(STATE_GAP_MS);
    expect(states(w)).toEqual(['busy', 'waiting_input', 'busy']);
  });

  it('keeps each window to its own gap', async () => {
    const { send, tick } = setup();
    const a = `@${++n}`;
    const b = `@${++n}`;
    await send(change(a, 'busy'));
    await send(change(b, 'busy'));
    await send(change(a, 'done'));
    expect(states(a)).toEqual(['busy']);
    expect(states(b)).toEqual(['busy']);
    tick(STATE_GAP_MS);
    expect(states(a)).toEqual(['busy', 'done']);
    expect(states(b)).toEqual(['busy']);
  });
});
