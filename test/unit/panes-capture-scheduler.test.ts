// The capture scheduler on a simulated clock, with fake panes whose captures the test finishes: when
// a screen is captured, how many at once, in which order, and what output is never captured.
import { describe, expect, it } from 'vitest';
import { CaptureScheduler, type CaptureTimings, type PaneCaptures } from '../../src/panes/capture-scheduler.js';
import { FakeClock } from '../helpers/fake-clock.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

const TIMINGS: CaptureTimings = { maxCaptures: 4, frameMs: 25, evidenceMs: 200, quietMs: 150, busyGapMs: 100 };

/** A pane whose captures stay in flight until the test finishes them. */
function fakePane(s: CaptureScheduler, name: string, log: string[], opts: { budgeted?: boolean; framed?: boolean; busy?: boolean } = {}) {
  const inFlight: (() => void)[] = [];
  const sent: number[] = [];
  const state = { busy: opts.busy ?? false };
  const p: PaneCaptures = s.add({
    budgeted: opts.budgeted ?? true,
    framed: opts.framed ?? false,
    busy: () => state.busy,
    capture: (sentAt) => {
      log.push(name);
      sent.push(sentAt);
      return new Promise<void>((resolve) => inFlight.push(resolve));
    },
  });
  /** Finish the oldest capture in flight and let the scheduler act on it. */
  const finish = async () => {
    inFlight.shift()?.();
    await flush();
  };
  return {
    p,
    sent,
    state,
    finish,
    get inFlight() {
      return inFlight.length;
    },
  };
}

function setup(timings: Partial<CaptureTimings> = {}) {
  const clock = new FakeClock();
  const s = new CaptureScheduler(clock, { ...TIMINGS, ...timings });
  const log: string[] = [];
  return { clock, s, log, t0: clock.now() };
}

describe('capture scheduler', () => {
  it('captures at once when asked; asks made while a capture is in flight make one more capture after it', async () => {
    const { s, log, t0 } = setup();
    const a = fakePane(s, 'a', log);
    s.want(a.p, 0, true, 'start');
    expect(log).toEqual(['a']);
    expect(a.sent).toEqual([t0]);
    s.want(a.p, 0, false, 'output');
    s.want(a.p, 0, false, 'output');
    expect(log).toEqual(['a']);
    await a.finish();
    expect(log).toEqual(['a', 'a']);
    await a.finish();
    expect(log).toEqual(['a', 'a']);
    expect(s.reasons).toEqual({ start: 1, output: 1 });
  });

  it('keeps at most maxCaptures in flight over all panes, and panes in doubt go first', async () => {
    const { s, log } = setup({ maxCaptures: 2 });
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((n) => fakePane(s, n, log));
    s.want(a!.p, 0, false, 'output');
    s.want(b!.p, 0, false, 'output');
    s.want(c!.p, 0, false, 'output');
    s.want(d!.p, 0, true, 'quiet');
    s.want(e!.p, 0, false, 'output');
    expect(log).toEqual(['a', 'b']);
    expect(s.inFlight).toBe(2);
    // A pane already queued that is now in doubt moves ahead of the others.
    s.want(e!.p, 0, true, 'state-file');
    await a!.finish();
    expect(log).toEqual(['a', 'b', 'd']);
    await b!.finish();
    expect(log).toEqual(['a', 'b', 'd', 'e']);
    await d!.finish();
    expect(log).toEqual(['a', 'b', 'd', 'e', 'c']);
  });

  it('panes without a state file are not budgeted: each is captured at once, past the shared slots', () => {
    const { s, log } = setup({ maxCaptures: 1 });
    const panes = ['a', 'b', 'c'].map((n) => fakePane(s, n, log, { budgeted: false, framed: true }));
    for (const x of panes) s.output(x.p, 0);
    expect(log).toEqual(['a', 'b', 'c']);
    expect(s.inFlight).toBe(3);
  });

  it('output of a CLI that names busy text waits frameMs for the rest of its frame; other output goes at once', () => {
    const { s, log, clock, t0 } = setup();
    const framed = fakePane(s, 'framed', log, { framed: true });
    const plain = fakePane(s, 'plain', log);
    s.output(framed.p, t0);
    s.output(plain.p, t0);
    expect(log).toEqual(['plain']);
    clock.advance(24);
    expect(log).toEqual(['plain']);
    clock.advance(1);
    expect(log).toEqual(['plain', 'framed']);
    expect(framed.sent).toEqual([t0 + 25]);
  });

  it('busy text holds other output off for evidenceMs, and each busy frame puts it off again', () => {
    const { s, log, clock, t0 } = setup({ quietMs: 60_000 });
    const a = fakePane(s, 'a', log, { framed: true });
    s.busyOutput(a.p, t0);
    clock.advance(50);
    s.output(a.p, clock.now());
    clock.advance(50);
    // The next spinner frame: the capture asked for above is dropped, and the hold starts over.
    s.busyOutput(a.p, clock.now());
    clock.advance(20);
    s.output(a.p, clock.now());
    clock.advance(179);
    expect(log).toEqual([]);
    clock.advance(1);
    expect(a.sent).toEqual([t0 + 300]);
    expect(s.reasons).toEqual({ output: 1 });
  });

  it('a busy pane is captured at most every busyGapMs, also when output came during its capture', async () => {
    const { s, log, clock, t0 } = setup({ quietMs: 60_000 });
    const a = fakePane(s, 'a', log, { busy: true });
    s.want(a.p, 0, true, 'start');
    clock.advance(10);
    await a.finish();
    s.output(a.p, clock.now());
    clock.advance(89);
    expect(a.sent).toEqual([t0]);
    clock.advance(1);
    expect(a.sent).toEqual([t0, t0 + 100]);
    // Output while this capture is in flight: the next one waits for the gap after it was sent.
    s.output(a.p, clock.now());
    clock.advance(30);
    await a.finish();
    clock.advance(69);
    expect(a.sent).toEqual([t0, t0 + 100]);
    clock.advance(1);
    expect(a.sent).toEqual([t0, t0 + 100, t0 + 200]);
    // Once it is no longer busy, output is captured at once.
    await a.finish();
    a.state.busy = false;
    s.output(a.p, clock.now());
    expect(a.sent).toEqual([t0, t0 + 100, t0 + 200, clock.now()]);
  });

  it('once the output stops for quietMs, output no capture has seen is captured once, first of all', async () => {
    const { s, log, clock, t0 } = setup();
    const a = fakePane(s, 'a', log, { framed: true });
    s.output(a.p, t0);
    clock.advance(25);
    expect(a.sent).toEqual([t0 + 25]);
    clock.advance(5);
    s.screenSeen(a.p, a.sent[0]!);
    await a.finish();
    expect(a.p.unjudged).toBe(false);
    // A spinner frame at +40: no capture for it, but no capture has seen it either.
    clock.advance(10);
    s.busyOutput(a.p, clock.now());
    s.armQuiet(a.p);
    clock.advance(110);
    expect(a.sent).toEqual([t0 + 25]);
    // The quiet timer armed at t0 finds the output went on until +40: it waits until +190.
    clock.advance(39);
    expect(a.sent).toEqual([t0 + 25]);
    clock.advance(1);
    expect(a.sent).toEqual([t0 + 25, t0 + 190]);
    expect(a.p.urgent).toBe(false);
    expect(s.reasons).toEqual({ output: 1, quiet: 1 });
    // Judged now: the next quiet moment captures nothing.
    s.screenSeen(a.p, a.sent[1]!);
    await a.finish();
    clock.advance(1000);
    expect(a.sent).toHaveLength(2);
  });

  it('output of a pane a hook decided asks for no capture: one once it stopped for quietMs (budgeted or not)', async () => {
    const { clock, s, log } = setup();
    const a = fakePane(s, 'a', log, { budgeted: false });
    const b = fakePane(s, 'b', log, { budgeted: true, framed: true });
    for (let i = 0; i < 8; i++) {
      s.hookedOutput(a.p, clock.now());
      s.hookedOutput(b.p, clock.now());
      clock.advance(50);
    }
    expect(log).toEqual([]);
    clock.advance(100);
    expect(log).toEqual(['a', 'b']);
    expect(s.reasons).toEqual({ quiet: 2 });
    await a.finish();
    await b.finish();
    clock.advance(1000);
    expect(log).toEqual(['a', 'b']);
  });

  it('a busy frame drops a capture asked for and not sent yet, but not one of a pane in doubt', async () => {
    const { s, log, clock } = setup({ maxCaptures: 1, quietMs: 60_000 });
    const a = fakePane(s, 'a', log);
    const b = fakePane(s, 'b', log);
    const c = fakePane(s, 'c', log);
    s.want(a.p, 0, false, 'output');
    s.output(b.p, clock.now());
    s.want(c.p, 0, true, 'quiet');
    expect(b.p.queued && c.p.queued).toBe(true);
    s.busyOutput(b.p, clock.now());
    s.busyOutput(c.p, clock.now());
    expect(b.p.queued).toBe(false);
    await a.finish();
    await c.finish();
    expect(log).toEqual(['a', 'c']);
  });

  it('a capture that found the machine moved on is followed at once by another, ahead of the queue', async () => {
    const { s, log } = setup({ maxCaptures: 1 });
    const a = fakePane(s, 'a', log);
    const b = fakePane(s, 'b', log);
    s.want(a.p, 0, false, 'output');
    s.want(b.p, 0, false, 'output');
    s.readAgain(a.p, 'moved-on');
    await a.finish();
    expect(log).toEqual(['a', 'a']);
    expect(s.reasons).toEqual({ output: 1, 'moved-on': 1 });
    await a.finish();
    expect(log).toEqual(['a', 'a', 'b']);
  });

  it('a removed pane: its timers stop, its place in the queue is given up, its capture in flight frees the slot', async () => {
    const { s, log, clock } = setup({ maxCaptures: 1 });
    const a = fakePane(s, 'a', log);
    const b = fakePane(s, 'b', log, { framed: true });
    const c = fakePane(s, 'c', log);
    s.want(a.p, 0, false, 'output');
    s.want(c.p, 0, false, 'output');
    s.output(b.p, clock.now());
    expect(clock.pending).toBeGreaterThan(0);
    s.remove(b.p);
    s.remove(c.p);
    s.want(a.p, 0, false, 'output');
    s.remove(a.p);
    expect(clock.pending).toBe(0);
    await a.finish();
    clock.advance(1000);
    expect(log).toEqual(['a']);
    expect(s.inFlight).toBe(0);
    s.want(c.p, 0, true, 'start');
    expect(log).toEqual(['a']);
  });

  it('a later ask for a capture does not put off one due sooner; a sooner one brings it forward', () => {
    const { s, clock, t0, log } = setup({ quietMs: 60_000 });
    const a = fakePane(s, 'a', log);
    s.want(a.p, 50, false, 'output');
    s.want(a.p, 80, false, 'output');
    s.want(a.p, 30, false, 'output');
    clock.advance(30);
    expect(a.sent).toEqual([t0 + 30]);
    clock.advance(100);
    expect(a.sent).toEqual([t0 + 30]);
  });
});
