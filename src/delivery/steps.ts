// One prompt into one pane, as steps: wait until ready, paste once, settle, submit, and verify. The
// steps that touch the pane come in as `DeliveryWork` (tests hand in fakes and a simulated clock);
// this file decides when each runs and what counts as proof. It was an XState machine with an invoked
// actor per step; a delivery runs per prompt, and the actors' set-up cost more CPU than the steps'
// own decisions (BENCHMARKS.md, "One runner"), so the same rules are written out here.

/** The timers a delivery sets: the real ones, or a simulated clock in tests. */
export interface DeliveryTimers {
  setTimeout(fn: () => void, ms: number): object | number;
  clearTimeout(timer: object | number): void;
}

const realTimers: DeliveryTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** What proved that the agent took the prompt. */
export type DeliveryProof = 'busy' | 'menu' | 'echo' | 'cleared' | 'unverified';

export type DeliveryResult =
  | { kind: 'delivered'; submits: number; evidence: DeliveryProof }
  | { kind: 'not-ready'; status: string }
  | { kind: 'timeout'; submits: number; stillInInput: boolean }
  | { kind: 'pane-gone'; error: string };

export interface DeliveryInput {
  settleMs: number;
  retryAfterMs: number;
  verifyTimeoutMs: number;
  maxSubmitRetries: number;
  /**
   * Take "the text was in the input box after the paste and is gone after the submit key" as proof
   * (for `send`: slash commands show neither a busy screen nor an echo). Turns want stronger proof.
   */
  acceptCleared?: boolean;
  /** False for a profile without detection rules: nothing can prove the prompt was taken, so none is sought. */
  verify?: boolean;
}

/** The steps that touch the pane; `runDelivery` decides when each runs. */
export interface DeliveryWork {
  waitReady(): Promise<void>;
  paste(): Promise<void>;
  /** A look after the paste settled, before the submit key: is the text in the input box? */
  inspect(): Promise<void>;
  submit(): Promise<void>;
  /** A fresh look at the pane (its visible screen), judged against the one before the paste. */
  look(): Promise<Evidence>;
}

/** What a look at the pane says about the prompt (see `src/delivery/evidence.ts`). */
export type Evidence = 'taken' | 'in-input' | 'cleared' | 'unknown';

export type DeliveryEvent =
  /** A status change of the target pane, from the pane watcher. */
  | { type: 'STATUS'; status: string }
  /** A new screen of the target pane, judged against the one before the paste. */
  | { type: 'SCREEN'; evidence: Evidence }
  | { type: 'PANE_GONE'; error: string };

export interface DeliveryRun {
  /** Tell it what the pane did (ignored before the submit key, and once it has ended). */
  send(event: DeliveryEvent): void;
  /** Whether it is still under way. */
  readonly active: boolean;
  /** Its end; a step's late answer after the end changes nothing. */
  readonly result: Promise<DeliveryResult>;
  /** End it now (its result stays pending); timers are cleared. */
  stop(): void;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Wait until the agent is ready, paste once, let the TUI settle, press the submit key, then verify the
 * agent took it: it went busy or asks something, or the screen shows one more echo of the prompt than
 * before the paste. A finished turn alone proves nothing (after a resume an old turn summary is on
 * screen). While the text still sits in the input box the submit key is pressed again (bounded); when
 * the screen says neither, it only looks again. Never a second paste. A dead pane ends it at any step.
 */
export function runDelivery(input: DeliveryInput, work: DeliveryWork, clock: DeliveryTimers = realTimers): DeliveryRun {
  let ended = false;
  /** After the first submit key was sent: status changes and screens may prove the prompt taken. */
  let verifying = false;
  let submits = 0;
  let stillInInput = false;
  let timers: (object | number)[] = [];
  let finish!: (r: DeliveryResult) => void;
  const result = new Promise<DeliveryResult>((resolve) => (finish = resolve));

  /** Nothing more runs: every timer cleared. */
  const halt = () => {
    ended = true;
    for (const t of timers) clock.clearTimeout(t);
    timers = [];
  };
  const end = (r: DeliveryResult) => {
    if (ended) return;
    halt();
    finish(r);
  };
  const delivered = (evidence: DeliveryProof) => end({ kind: 'delivered', submits, evidence });
  const after = (ms: number, fn: () => void) => {
    const t = clock.setTimeout(() => {
      timers = timers.filter((x) => x !== t);
      if (!ended) fn();
    }, ms);
    timers.push(t);
  };
  /** Run one step; false when it failed (then `failed` said what) or the delivery ended meanwhile. */
  const step = async <T>(run: () => Promise<T>, failed: (e: unknown) => void): Promise<{ ok: true; value: T } | { ok: false }> => {
    try {
      const value = await run();
      return ended ? { ok: false } : { ok: true, value };
    } catch (e) {
      if (!ended) failed(e);
      return { ok: false };
    }
  };
  const gone = (e: unknown) => end({ kind: 'pane-gone', error: errorText(e) });

  const submit = async () => {
    submits++;
    if (!(await step(() => work.submit(), gone)).ok) return;
    if (input.verify === false) return delivered('unverified');
    after(input.retryAfterMs, () => void look());
  };
  const look = async () => {
    const r = await step(
      () => work.look(),
      () => after(input.retryAfterMs, () => void look()),
    );
    if (!r.ok) return;
    const seen = r.value;
    if (seen === 'taken') return delivered('echo');
    if (seen === 'cleared' && input.acceptCleared === true) return delivered('cleared');
    if (seen === 'in-input' && submits <= input.maxSubmitRetries) {
      stillInInput = true;
      return void submit();
    }
    // Not provably taken and not (or no longer allowed to be) pressed again: keep looking.
    stillInInput = seen === 'in-input';
    after(input.retryAfterMs, () => void look());
  };

  const run = async () => {
    if (
      !(
        await step(
          () => work.waitReady(),
          (e) => end({ kind: 'not-ready', status: errorText(e) }),
        )
      ).ok
    )
      return;
    if (!(await step(() => work.paste(), gone)).ok) return;
    // Time for the TUI to take the paste, so the submit key is not read as part of it.
    // (A dead pane meanwhile clears the timer: nothing more runs.)
    await new Promise<void>((resolve) => after(input.settleMs, resolve));
    // A failed look at the input box is no reason to stop: the submit and its proof come next.
    if (
      !(
        await step(
          () => work.inspect(),
          () => {},
        )
      ).ok &&
      ended
    )
      return;
    verifying = true;
    after(input.verifyTimeoutMs, () => end({ kind: 'timeout', submits, stillInInput }));
    await submit();
  };

  void run();
  return {
    send(event) {
      if (ended) return;
      if (event.type === 'PANE_GONE') return end({ kind: 'pane-gone', error: event.error });
      if (!verifying) return;
      if (event.type === 'STATUS') {
        if (event.status === 'busy') delivered('busy');
        else if (event.status === 'waiting_input') delivered('menu');
      } else if (event.evidence === 'taken') delivered('echo');
      else if (event.evidence === 'cleared' && input.acceptCleared === true) delivered('cleared');
    },
    get active() {
      return !ended;
    },
    result,
    stop() {
      if (!ended) halt();
    },
  };
}
