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
