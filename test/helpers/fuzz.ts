// The fuzz suite's runner: fast-check with a fixed seed (JAGGERS_FUZZ_SEED replays another) and a time
// limit per target, every case timed. A case slower than STALL_MS (100 ms, the target) is timed again
// (the fastest of three counts), so a slow input is told from a busy moment; cases still over it are
// counted and printed. The tests assert the looser STALL_BOUND_MS: this machine has two cores shared
// with other test runs, and a tight timed assertion would fail on the machine, not on the code. The
// figures are printed for BENCHMARKS.md and docs/testing.md.
import fc from 'fast-check';
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
  /**
   * The longest event-loop delay while the target ran in which this process was running (sampled every
   * 10 ms; async targets only): a delay counts as at most the CPU time the process used in it, so a
   * loaded machine that kept the process waiting for a CPU is not taken for a stall of ours.
   */
  loopDelayMs: number | null;
  /** The same delay by the wall clock alone. */
  loopWallMs: number | null;
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

/** Samples the event loop every LOOP_SAMPLE_MS; each delay also as the process's CPU time in it. */
function loopMeter(): { stop(): { busyMs: number; wallMs: number } } {
  const cpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let wall = performance.now();
  let cpu = cpuMs();
  let busyMs = 0;
  let wallMs = 0;
  const timer = setInterval(() => {
    const w = performance.now();
    const c = cpuMs();
    const late = Math.max(0, w - wall - LOOP_SAMPLE_MS);
    wallMs = Math.max(wallMs, late);
    busyMs = Math.max(busyMs, Math.min(late, Math.max(0, c - cpu - LOOP_SAMPLE_MS)));
    wall = w;
    cpu = c;
  }, LOOP_SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      return { busyMs, wallMs };
    },
  };
}

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
  const meter = o.loopDelay ? loopMeter() : null;
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
  // The meter samples on a timer of its own: two of its periods let it record what the last case held.
  if (meter) await sleep(2 * LOOP_SAMPLE_MS);
  const loop = meter?.stop() ?? null;
  const figures = { target, cases, slowestMs, slowest, overTarget, loopDelayMs: loop?.busyMs ?? null, loopWallMs: loop?.wallMs ?? null, seconds };
  console.log(
    `fuzz ${target}: ${cases} cases in ${seconds.toFixed(1)} s (seed ${FUZZ_SEED}); slowest ${slowestMs.toFixed(1)} ms, ${overTarget} over ${STALL_MS} ms` +
      `${figures.loopDelayMs === null ? '' : `; longest event-loop delay ${figures.loopDelayMs.toFixed(0)} ms running (${(figures.loopWallMs ?? 0).toFixed(0)} ms by the wall clock)`}; slowest case: ${slowest}`,
  );
  return figures;
}
