/**
 * `fn` made safe to trigger from events: a call while a run is under way does not start a second
 * one beside it but one more run after it, however many calls came meanwhile.
 */
export function coalesced(fn: () => Promise<void>): () => Promise<void> {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await fn();
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      await run();
    }
  };
  return run;
}

/**
 * `fn` run at most once every `ms`: the first call runs it on the next turn of the event loop, calls
 * meanwhile run it once more when `ms` have passed since (the last call is never lost).
 */
export function atMostEvery(ms: number, fn: () => void): () => void {
  let last = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  return () => {
    if (timer) return;
    const wait = Math.max(0, last + ms - performance.now());
    timer = setTimeout(() => {
      timer = null;
      last = performance.now();
      fn();
    }, wait);
    timer.unref();
  };
}

/** `fn` run once on the next turn of the event loop, however many times it was asked for before then. */
export function onceSoon(fn: () => void): () => void {
  let queued = false;
  return () => {
    if (queued) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      fn();
    });
  };
}
