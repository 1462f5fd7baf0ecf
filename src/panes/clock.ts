// Time for the pane watcher's pieces, handed in: the real one in the supervisor, a simulated one in
// tests (test/helpers/fake-clock.ts), so the timing rules are tested without sleeping.

/** What a clock's setTimeout/setInterval returns: only handed back to it. */
export type TimerHandle = object | number;

export interface Clock {
  /** Milliseconds since the epoch, with sub-millisecond precision where the clock has it. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(timer: TimerHandle): void;
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(timer: TimerHandle): void;
}

export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (timer) => clearInterval(timer as NodeJS.Timeout),
};

/** `clock` with its time read from `now` instead (the watcher's `now` option). */
export function withNow(clock: Clock, now: () => number): Clock {
  return {
    now,
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (timer) => clock.clearTimeout(timer),
    setInterval: (fn, ms) => clock.setInterval(fn, ms),
    clearInterval: (timer) => clock.clearInterval(timer),
  };
}
