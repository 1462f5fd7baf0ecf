import { assign, fromPromise, setup } from 'xstate';

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
  /** The tmux work, one function per step (tests may `provide` actors instead). */
  work?: DeliveryWork;
}

/** The steps that touch the pane; the machine decides when each runs. */
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

interface Ctx extends DeliveryInput {
  submits: number;
  stillInInput: boolean;
  result: DeliveryResult | null;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));
const outputOf = (event: unknown) => (event as { output: Evidence }).output;

/**
 * One prompt into one pane: wait until the agent is ready, paste once, let the TUI settle, press the
 * submit key, then verify the agent took it: it went busy or asks something, or the screen shows one
 * more echo of the prompt than before the paste. A finished turn alone proves nothing (after a resume
 * an old turn summary is on screen). While the text still sits in the input box the submit key is
 * pressed again (bounded); when the screen says neither, it only looks again. Never a second paste.
 * The tmux work comes in with the input (`work`), one machine for every delivery; tests hand in
 * actors with `provide` instead, so the machine runs without tmux.
 */
export const deliveryMachine = setup({
  types: {
    context: {} as Ctx,
    input: {} as DeliveryInput,
    events: {} as DeliveryEvent,
    output: {} as DeliveryResult,
  },
  actors: {
    waitReady: fromPromise<void, DeliveryWork | undefined>(async ({ input }) => input?.waitReady()),
    paste: fromPromise<void, DeliveryWork | undefined>(async ({ input }) => input?.paste()),
    inspect: fromPromise<void, DeliveryWork | undefined>(async ({ input }) => input?.inspect()),
    submit: fromPromise<void, DeliveryWork | undefined>(async ({ input }) => input?.submit()),
    look: fromPromise<Evidence, DeliveryWork | undefined>(async ({ input }) => (input ? input.look() : 'unknown')),
  },
  guards: {
    working: ({ event }) => event.type === 'STATUS' && (event.status === 'busy' || event.status === 'waiting_input'),
    echoed: ({ event }) => event.type === 'SCREEN' && event.evidence === 'taken',
    cleared: ({ context, event }) => context.acceptCleared === true && event.type === 'SCREEN' && event.evidence === 'cleared',
    lookTaken: ({ event }) => outputOf(event) === 'taken',
    lookCleared: ({ context, event }) => context.acceptCleared === true && outputOf(event) === 'cleared',
    mayRetry: ({ context, event }) => outputOf(event) === 'in-input' && context.submits <= context.maxSubmitRetries,
    unverifiable: ({ context }) => context.verify === false,
  },
  delays: {
    settle: ({ context }) => context.settleMs,
    retryAfter: ({ context }) => context.retryAfterMs,
    verifyTimeout: ({ context }) => context.verifyTimeoutMs,
  },
  actions: {
    countSubmit: assign({ submits: ({ context }) => context.submits + 1 }),
    delivered: assign({
      result: ({ context, event }, proof: DeliveryProof) => ({
        kind: 'delivered' as const,
        submits: context.submits,
        evidence: proof === 'busy' && event.type === 'STATUS' && event.status === 'waiting_input' ? ('menu' as const) : proof,
      }),
    }),
  },
}).createMachine({
  id: 'delivery',
  context: ({ input }) => ({ ...input, submits: 0, stillInInput: false, result: null }),
  initial: 'waitingReady',
  on: {
    PANE_GONE: { target: '.paneGone', actions: assign({ result: ({ event }) => ({ kind: 'pane-gone' as const, error: event.error }) }) },
  },
  states: {
    waitingReady: {
      description: 'Wait until the agent is idle or done (what its profile calls ready).',
      invoke: {
        src: 'waitReady',
        input: ({ context }) => context.work,
        onDone: 'pasting',
        onError: { target: 'notReady', actions: assign({ result: ({ event }) => ({ kind: 'not-ready' as const, status: errorText(event.error) }) }) },
      },
    },
    pasting: {
      description: 'Load the text into a uniquely named buffer and paste it once, bracketed.',
      invoke: {
        src: 'paste',
        input: ({ context }) => context.work,
        onDone: 'settling',
        onError: { target: 'paneGone', actions: assign({ result: ({ event }) => ({ kind: 'pane-gone' as const, error: errorText(event.error) }) }) },
      },
    },
    settling: {
      description: 'Give the TUI time to take the paste, so the submit key is not read as part of it.',
      after: { settle: 'inspecting' },
    },
    inspecting: {
      description: 'Note whether the pasted text shows in the input box before it is submitted.',
      invoke: { src: 'inspect', input: ({ context }) => context.work, onDone: 'verifying', onError: 'verifying' },
    },
    verifying: {
      description: 'Submit, then watch for proof the agent took the prompt.',
      initial: 'submitting',
      after: {
        verifyTimeout: {
          target: 'timedOut',
          actions: assign({ result: ({ context }) => ({ kind: 'timeout' as const, submits: context.submits, stillInInput: context.stillInInput }) }),
        },
      },
      on: {
        STATUS: { guard: 'working', target: 'delivered', actions: { type: 'delivered', params: 'busy' } },
        SCREEN: [
          { guard: 'echoed', target: 'delivered', actions: { type: 'delivered', params: 'echo' } },
          { guard: 'cleared', target: 'delivered', actions: { type: 'delivered', params: 'cleared' } },
        ],
      },
      states: {
        submitting: {
          entry: 'countSubmit',
          invoke: {
            src: 'submit',
            input: ({ context }) => context.work,
            onDone: [{ guard: 'unverifiable', target: '#delivery.delivered', actions: { type: 'delivered', params: 'unverified' } }, { target: 'watching' }],
            onError: {
              target: '#delivery.paneGone',
              actions: assign({ result: ({ event }) => ({ kind: 'pane-gone' as const, error: errorText(event.error) }) }),
            },
          },
        },
        watching: {
          description: 'New screens and status changes may prove it; else look again after a while.',
          after: { retryAfter: 'looking' },
        },
        looking: {
          invoke: {
            src: 'look',
            input: ({ context }) => context.work,
            onDone: [
              { guard: 'lookTaken', target: '#delivery.delivered', actions: { type: 'delivered', params: 'echo' } },
              { guard: 'lookCleared', target: '#delivery.delivered', actions: { type: 'delivered', params: 'cleared' } },
              { guard: 'mayRetry', target: 'submitting', actions: assign({ stillInInput: true }) },
              // Not provably taken and not (or no longer allowed to be) pressed again: keep looking.
              { target: 'watching', actions: assign({ stillInInput: ({ event }) => event.output === 'in-input' }) },
            ],
            onError: { target: 'watching' },
          },
        },
      },
    },
    delivered: { type: 'final' },
    notReady: { type: 'final' },
    timedOut: { type: 'final' },
    paneGone: { type: 'final' },
  },
  output: ({ context }) => context.result ?? { kind: 'pane-gone', error: 'delivery ended without a result' },
});
