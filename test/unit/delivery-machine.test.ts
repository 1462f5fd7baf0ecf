// The delivery machine with fake steps on a simulated clock: what counts as proof that a prompt was
// taken, when the submit key is pressed again, and that the text is never pasted twice.
import { createActor, SimulatedClock, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { deliveryMachine, type DeliveryResult, type DeliveryWork, type Evidence } from '../../machines/delivery.machine.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A delivery whose `look` answers from `looks` in turn (the last answer repeats). */
function start(looks: Evidence[], opts: { maxSubmitRetries?: number; acceptCleared?: boolean } = {}) {
  const clock = new SimulatedClock();
  const calls = { paste: 0, submit: 0, look: 0 };
  const work: DeliveryWork = {
    waitReady: async () => {},
    paste: async () => {
      calls.paste++;
    },
    inspect: async () => {},
    submit: async () => {
      calls.submit++;
    },
    look: async () => looks[Math.min(calls.look++, looks.length - 1)]!,
  };
  const actor = createActor(deliveryMachine, {
    input: {
      settleMs: 200,
      retryAfterMs: 1000,
      verifyTimeoutMs: 10_000,
      maxSubmitRetries: opts.maxSubmitRetries ?? 2,
      acceptCleared: opts.acceptCleared ?? false,
      work,
    },
    clock,
  });
  const result = toPromise(actor);
  actor.start();
  /** Lets the promise actors finish, then moves the clock. */
  const advance = async (ms: number) => {
    await flush();
    clock.increment(ms);
    await flush();
  };
  return { actor, calls, advance, result: result as Promise<DeliveryResult> };
}

describe('delivery machine', () => {
  it('busy after the submit: delivered with one paste and one submit', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    expect(d.calls).toMatchObject({ paste: 1, submit: 1 });
    d.actor.send({ type: 'STATUS', status: 'busy' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'busy' });
  });

  it('a menu after the submit is proof too, told apart from busy', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    d.actor.send({ type: 'STATUS', status: 'waiting_input' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'menu' });
  });

  it('the text gone from the input box proves it only where that is accepted (send), never for a turn', async () => {
    const turn = start(['cleared']);
    await turn.advance(200);
    turn.actor.send({ type: 'SCREEN', evidence: 'cleared' });
    for (let i = 0; i < 3; i++) await turn.advance(1000);
    expect(turn.actor.getSnapshot().status).toBe('active');
    expect(turn.calls).toMatchObject({ paste: 1, submit: 1 });
    turn.actor.stop();

    const send = start(['unknown'], { acceptCleared: true });
    await send.advance(200);
    send.actor.send({ type: 'SCREEN', evidence: 'cleared' });
    expect(await send.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'cleared' });
  });

  it('a finished turn (done, idle) alone is no proof; the echo on a new screen is', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    d.actor.send({ type: 'STATUS', status: 'done' });
    d.actor.send({ type: 'STATUS', status: 'idle' });
    d.actor.send({ type: 'SCREEN', evidence: 'unknown' });
    d.actor.send({ type: 'SCREEN', evidence: 'in-input' });
    expect(d.actor.getSnapshot().status).toBe('active');
    d.actor.send({ type: 'SCREEN', evidence: 'taken' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'echo' });
    expect(d.calls.paste).toBe(1);
  });

  it('still in the input box: the submit key again, bounded; the text is never pasted again', async () => {
    const d = start(['in-input'], { maxSubmitRetries: 2 });
    await d.advance(200);
    for (let i = 0; i < 12; i++) await d.advance(1000);
    expect(d.calls).toMatchObject({ paste: 1, submit: 3 });
    await d.advance(10_000);
    expect(await d.result).toEqual({ kind: 'timeout', submits: 3, stillInInput: true });
  });

  it('neither in the input box nor echoed: keeps looking without typing, and takes a late echo', async () => {
    const d = start(['unknown', 'unknown', 'unknown', 'taken']);
    await d.advance(200);
    for (let i = 0; i < 4; i++) await d.advance(1000);
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'echo' });
    expect(d.calls).toMatchObject({ paste: 1, submit: 1, look: 4 });
  });

  it('the input area hidden at first, the text shown there later: then the key again', async () => {
    const d = start(['unknown', 'in-input', 'taken']);
    await d.advance(200);
    for (let i = 0; i < 3; i++) await d.advance(1000);
    expect(await d.result).toEqual({ kind: 'delivered', submits: 2, evidence: 'echo' });
  });

  it('a pane that dies ends the delivery at once', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    d.actor.send({ type: 'PANE_GONE', error: 'the pane of x died' });
    expect(await d.result).toEqual({ kind: 'pane-gone', error: 'the pane of x died' });
  });
});
