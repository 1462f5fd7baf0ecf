// A delivery's steps with fakes on a simulated clock: what counts as proof that a prompt was taken,
// when the submit key is pressed again, and that the text is never pasted twice.
import { describe, expect, it } from 'vitest';
import { runDelivery, type DeliveryWork, type Evidence } from '../../src/delivery/steps.js';
import { FakeClock } from '../helpers/fake-clock.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

/** A delivery whose `look` answers from `looks` in turn (the last answer repeats). */
function start(looks: Evidence[], opts: { maxSubmitRetries?: number; acceptCleared?: boolean; verify?: boolean; work?: Partial<DeliveryWork> } = {}) {
  const clock = new FakeClock();
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
    ...opts.work,
  };
  const run = runDelivery(
    {
      settleMs: 200,
      retryAfterMs: 1000,
      verifyTimeoutMs: 10_000,
      maxSubmitRetries: opts.maxSubmitRetries ?? 2,
      acceptCleared: opts.acceptCleared ?? false,
      ...(opts.verify === undefined ? {} : { verify: opts.verify }),
    },
    work,
    clock,
  );
  /** Lets the steps finish, then moves the clock. */
  const advance = async (ms: number) => {
    await flush();
    clock.advance(ms);
    await flush();
  };
  return { run, calls, clock, advance, result: run.result };
}

describe('delivery steps', () => {
  it('busy after the submit: delivered with one paste and one submit', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    expect(d.calls).toMatchObject({ paste: 1, submit: 1 });
    d.run.send({ type: 'STATUS', status: 'busy' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'busy' });
  });

  it('a menu after the submit is proof too, told apart from busy', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    d.run.send({ type: 'STATUS', status: 'waiting_input' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'menu' });
  });

  it('the text gone from the input box proves it only where that is accepted (send), never for a turn', async () => {
    const turn = start(['cleared']);
    await turn.advance(200);
    turn.run.send({ type: 'SCREEN', evidence: 'cleared' });
    for (let i = 0; i < 3; i++) await turn.advance(1000);
    expect(turn.run.active).toBe(true);
    expect(turn.calls).toMatchObject({ paste: 1, submit: 1 });
    turn.run.stop();

    const send = start(['unknown'], { acceptCleared: true });
    await send.advance(200);
    send.run.send({ type: 'SCREEN', evidence: 'cleared' });
    expect(await send.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'cleared' });
  });

  it('a finished turn (done, idle) alone is no proof; the echo on a new screen is', async () => {
    const d = start(['unknown']);
    await d.advance(200);
    d.run.send({ type: 'STATUS', status: 'done' });
    d.run.send({ type: 'STATUS', status: 'idle' });
    d.run.send({ type: 'SCREEN', evidence: 'unknown' });
    d.run.send({ type: 'SCREEN', evidence: 'in-input' });
    expect(d.run.active).toBe(true);
    d.run.send({ type: 'SCREEN', evidence: 'taken' });
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
    d.run.send({ type: 'PANE_GONE', error: 'the pane of x died' });
    expect(await d.result).toEqual({ kind: 'pane-gone', error: 'the pane of x died' });
  });

  it('status changes and screens before the submit key prove nothing', async () => {
    const d = start(['unknown']);
    await d.advance(100);
    d.run.send({ type: 'STATUS', status: 'busy' });
    d.run.send({ type: 'SCREEN', evidence: 'taken' });
    expect(d.run.active).toBe(true);
    expect(d.calls.submit).toBe(0);
    await d.advance(100);
    expect(d.calls.submit).toBe(1);
    d.run.send({ type: 'STATUS', status: 'busy' });
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'busy' });
  });

  it('a pane that dies while the paste settles: no submit key, no timer left', async () => {
    const d = start(['unknown']);
    await d.advance(50);
    d.run.send({ type: 'PANE_GONE', error: 'the pane of x died' });
    await d.advance(20_000);
    expect(await d.result).toEqual({ kind: 'pane-gone', error: 'the pane of x died' });
    expect(d.calls).toMatchObject({ paste: 1, submit: 0, look: 0 });
    expect(d.clock.pending).toBe(0);
  });

  it('not ready: the reason the wait gave, nothing pasted', async () => {
    const d = start(['unknown'], { work: { waitReady: () => Promise.reject(new Error('waiting_input: x asks something')) } });
    expect(await d.result).toEqual({ kind: 'not-ready', status: 'waiting_input: x asks something' });
    expect(d.calls.paste).toBe(0);
  });

  it('a paste or a submit key tmux refuses: the pane is gone', async () => {
    const paste = start(['unknown'], { work: { paste: () => Promise.reject(new Error("can't find pane: %9")) } });
    expect(await paste.result).toEqual({ kind: 'pane-gone', error: "can't find pane: %9" });
    const submit = start(['unknown'], { work: { submit: () => Promise.reject(new Error("can't find pane: %9")) } });
    await submit.advance(200);
    expect(await submit.result).toEqual({ kind: 'pane-gone', error: "can't find pane: %9" });
    expect(submit.clock.pending).toBe(0);
  });

  it('a look that fails is tried again later; a look still out when proof comes changes nothing', async () => {
    let failOnce = true;
    let answer: ((e: Evidence) => void) | null = null;
    const d = start(['unknown'], {
      work: {
        look: () => {
          if (failOnce) {
            failOnce = false;
            return Promise.reject(new Error('capture failed'));
          }
          return new Promise<Evidence>((r) => (answer = r));
        },
      },
    });
    await d.advance(200);
    await d.advance(1000);
    expect(d.run.active).toBe(true);
    await d.advance(1000);
    expect(answer).not.toBeNull();
    d.run.send({ type: 'STATUS', status: 'waiting_input' });
    answer!('in-input');
    await d.advance(5000);
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'menu' });
    expect(d.calls.submit).toBe(1);
  });

  it('a profile with nothing to verify by: delivered unverified after one submit, no look', async () => {
    const d = start(['in-input'], { verify: false });
    await d.advance(200);
    expect(await d.result).toEqual({ kind: 'delivered', submits: 1, evidence: 'unverified' });
    await d.advance(5000);
    expect(d.calls).toMatchObject({ paste: 1, submit: 1, look: 0 });
    expect(d.clock.pending).toBe(0);
  });

  it('the verify timeout counts from the first submit key, not from the paste', async () => {
    let ready!: () => void;
    const d = start(['unknown'], { work: { waitReady: () => new Promise<void>((r) => (ready = r)) } });
    await d.advance(30_000);
    expect(d.run.active).toBe(true);
    ready();
    await d.advance(200);
    await d.advance(9_999);
    expect(d.run.active).toBe(true);
    await d.advance(1);
    expect(await d.result).toEqual({ kind: 'timeout', submits: 1, stillInInput: false });
    expect(d.clock.pending).toBe(0);
  });
});
