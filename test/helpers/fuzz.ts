// The fuzz suite's runner: fast-check with a fixed seed (JAGGERS_FUZZ_SEED replays another) and a time
// limit per target, every case timed. A case slower than STALL_MS (100 ms, the target) is timed again
// (the fastest of three counts), so a slow input is told from a busy moment; cases still over it are
// counted and printed. The tests assert the looser STALL_BOUND_MS: this machine has two cores shared
// with other test runs, and a tight timed assertion would fail on the machine, not on the code. The
// figures are printed for BENCHMARKS.md and docs/testing.md.
import fc from 'fast-check';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** The event-loop delay monitor's sampling period. */
const LOOP_SAMPLE_MS = 10;

export const FUZZ_SEED = Number(process.env.JAGGERS_FUZZ_SEED ?? 20261126);
/** What counts as an event-loop stall: one case (one parse, one request) taking this long. */
export const STALL_MS = 100;
/** What the tests assert: no case over this (JAGGERS_FUZZ_STALL_BOUND_MS to tighten it on a quiet machine). */
export const STALL_BOUND_MS = Number(process.env.JAGGERS_FUZZ_STALL_BOUND_MS ?? 400);

export interface FuzzFigures {
  target: string;
  cases: number;
  /** The slowest case's time (the fastest of three tries, when it was over STALL_MS the first time). */
  slowestMs: number;
  slowest: string;
  /** Cases over STALL_MS even at their fastest of three tries. */
  overTarget: number;
  /** The longest event-loop delay seen while the target ran (sampled every 10 ms; async targets only). */
  loopDelayMs: number | null;
  seconds: number;
}

export interface FuzzOptions {
  numRuns: number;
  /** The target stops early (a pass) when this runs out. */
  timeLimitMs: number;
  /** Measure the event loop's delay too (async targets, which let timers run between cases). */
  loopDelay?: boolean;
}

const show = (v: unknown): string => {
  let s: string;
  try {
    s =
      typeof v === 'string'
        ? JSON.stringify(v)
        : (JSON.stringify(v, (_, x: unknown) => (x instanceof Uint8Array ? Buffer.from(x).toString('latin1') : x)) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
};

/**
 * Runs `check` on generated inputs (it throws to fail a case) and returns the figures. Each case's
 * time is its wall time: for a synchronous parser, how long it held the event loop.
 */
export async function fuzz<T>(target: string, arb: fc.Arbitrary<T>, check: (input: T) => unknown, o: FuzzOptions): Promise<FuzzFigures> {
  let cases = 0;
  let slowestMs = 0;
  let slowest = '';
  let overTarget = 0;
  const timed = async (input: T): Promise<number> => {
    const t = performance.now();
    await check(input);
    return performance.now() - t;
  };
  const h = o.loopDelay ? monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS }) : null;
  h?.enable();
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(arb, async (input) => {
      cases++;
      let ms = await timed(input);
      if (ms > STALL_MS) ms = Math.min(ms, await timed(input), await timed(input));
      if (ms > STALL_MS) overTarget++;
      if (ms > slowestMs) {
        slowestMs = ms;
        slowest = show(input);
      }
    }),
    { seed: FUZZ_SEED, numRuns: o.numRuns, plugins: [fc.interruptAfterTimeLimit(o.timeLimitMs)] },
  );
  const seconds = (performance.now() - started) / 1000;
  // The monitor samples on a timer of its own: two of its periods let it record what the last case held.
  if (h) await sleep(2 * LOOP_SAMPLE_MS);
  h?.disable();
  const figures = { target, cases, slowestMs, slowest, overTarget, loopDelayMs: h ? h.max / 1e6 : null, seconds };
  console.log(
    `fuzz ${target}: ${cases} cases in ${seconds.toFixed(1)} s (seed ${FUZZ_SEED}); slowest ${slowestMs.toFixed(1)} ms, ${overTarget} over ${STALL_MS} ms` +
      `${figures.loopDelayMs === null ? '' : `; longest event-loop delay ${figures.loopDelayMs.toFixed(0)} ms`}; slowest case: ${slowest}`,
  );
  return figures;
}
