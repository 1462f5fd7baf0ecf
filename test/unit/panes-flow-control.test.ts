// Flow control on a scripted tmux connection and a simulated clock: the commands that pause and
// continue a pane's output, the looks at a paused pane, and tmux's own %pause.
import { afterEach, describe, expect, it } from 'vitest';
import { FlowControl, type FlowOptions } from '../../src/panes/flow-control.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

const opened: FakeControl[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

function setup(options: Partial<FlowOptions> = {}) {
  const tmux = fakeControl();
  opened.push(tmux);
  const clock = new FakeClock();
  const flow = new FlowControl(tmux.client, clock, { pauseBusy: true, pausedCheckMs: 2000, pauseAfterS: 0, ...options });
  const calls: string[] = [];
  const add = (paneId: string) =>
    flow.add(paneId, {
      check: () => calls.push(`check ${paneId}`),
      resumed: () => calls.push(`resumed ${paneId}`),
      behind: () => calls.push(`behind ${paneId}`),
    });
  return { tmux, clock, flow, calls, add };
}

describe('flow control', () => {
  it('pausing sends refresh-client -A once and looks at the paused pane every pausedCheckMs', () => {
    const { tmux, clock, flow, calls, add } = setup();
    const p = add('%3');
    flow.pause(p);
    flow.pause(p);
    expect(tmux.written).toEqual(["refresh-client -A '%3:pause'"]);
    expect(p.paused).toBe(true);
    clock.advance(1999);
    expect(calls).toEqual([]);
    clock.advance(1);
    expect(calls).toEqual(['check %3']);
    clock.advance(4000);
    expect(calls).toEqual(['check %3', 'check %3', 'check %3']);
  });

  it('resuming sends the continue, stops the looks and asks for a reading; a pane not paused is left alone', () => {
    const { tmux, clock, flow, calls, add } = setup();
    const p = add('%3');
    flow.resume(p);
    expect(tmux.written).toEqual([]);
    expect(calls).toEqual([]);
    flow.pause(p);
    flow.resume(p);
    expect(tmux.written).toEqual(["refresh-client -A '%3:pause'", "refresh-client -A '%3:continue'"]);
    expect(calls).toEqual(['resumed %3']);
    clock.advance(10_000);
    expect(calls).toEqual(['resumed %3']);
    expect(clock.pending).toBe(0);
  });

  it('with pauseBusy off nothing is paused', () => {
    const { tmux, clock, flow, add } = setup({ pauseBusy: false });
    const p = add('%3');
    flow.pause(p);
    expect(p.paused).toBe(false);
    expect(tmux.written).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it("tmux's %pause of a pane not paused by us: continue it and read its screen", () => {
    const { tmux, flow, calls, add } = setup();
    add('%3');
    const ours = add('%4');
    flow.pause(ours);
    flow.notification('pause', ['%3']);
    flow.notification('pause', ['%4']);
    flow.notification('pause', ['%9']);
    expect(tmux.written).toEqual(["refresh-client -A '%4:pause'", "refresh-client -A '%3:continue'"]);
    expect(calls).toEqual(['behind %3']);
  });

  it('other notifications and removed panes are ignored', () => {
    const { tmux, clock, flow, calls, add } = setup();
    const p = add('%3');
    flow.pause(p);
    flow.remove(p);
    expect(clock.pending).toBe(0);
    flow.notification('pause', ['%3']);
    flow.notification('window-close', ['@1']);
    expect(tmux.written).toEqual(["refresh-client -A '%3:pause'"]);
    expect(calls).toEqual([]);
  });

  it('start asks tmux for pause-after only when it is set', async () => {
    const off = setup();
    await off.flow.start();
    expect(off.tmux.written).toEqual([]);
    const on = setup({ pauseAfterS: 3 });
    const started = on.flow.start();
    expect(on.tmux.written).toEqual(['refresh-client -f pause-after=3']);
    on.tmux.reply();
    await started;
  });
});
