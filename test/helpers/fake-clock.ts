// A simulated clock for the pane watcher's pieces (src/panes/clock.ts): time moves only when a test
// says so, and the timers due meanwhile fire in order, each at its own time.
import type { Clock, TimerHandle } from '../../src/panes/clock.js';

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
  /** Repeats every `every` ms (setInterval); null for a one-shot timer. */
  every: number | null;
}

export class FakeClock implements Clock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, null);
  }

  clearTimeout(timer: TimerHandle): void {
    this.timers.delete(timer as number);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, ms);
  }

  clearInterval(timer: TimerHandle): void {
    this.timers.delete(timer as number);
  }

  /** Timers not fired or cleared yet. */
  get pending(): number {
    return this.timers.size;
  }

  /** Move time on by `ms`, firing every timer due by then (in the order they are due). */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const t of this.timers.values()) if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.id < next.id))) next = t;
      if (!next) break;
      this.time = Math.max(this.time, next.at);
      if (next.every === null) this.timers.delete(next.id);
      else next.at += next.every;
      next.fn();
    }
    this.time = end;
  }

  private add(fn: () => void, ms: number, every: number | null): number {
    // As Node does: a delay under 1 ms (or not a number) is 1 ms.
    const delay = ms >= 1 ? ms : 1;
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.time + delay, fn, every: every === null ? null : delay });
    return id;
  }
}
