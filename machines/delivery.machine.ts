import { assign, fromPromise, setup } from 'xstate';

export type DeliveryResult =
  | { kind: 'delivered'; submits: number }
  | { kind: 'not-ready'; status: string }
  | { kind: 'timeout'; submits: number; stillInInput: boolean }
  | { kind: 'pane-gone'; error: string };

export interface DeliveryInput {
  settleMs: number;
  retryAfterMs: number;
  verifyTimeoutMs: number;
  maxSubmitRetries: number;
  /** The pane's finished-turn count before this prompt: a higher count proves the prompt ran. */
  turnsBefore: number;
}

export type DeliveryEvent =
  /** A status change of the target pane, from the pane watcher. */
  | { type: 'STATUS'; status: string; turns: number }
  | { type: 'PANE_GONE'; error: string };

interface Ctx extends DeliveryInput {
  submits: number;
  stillInInput: boolean;
  result: DeliveryResult | null;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * One prompt into one pane: wait until the agent is ready, paste once, let the TUI settle, press the
 * submit key, then verify the agent took it (busy, a menu, or a finished turn). If the text is still
 * in the input box the submit key is pressed again (bounded); the text is never pasted twice.
 * The tmux work is done by actors handed in with `provide`, so the machine runs without tmux in tests.
 */
export const deliveryMachine = setup({
  types: {
    context: {} as Ctx,
    input: {} as DeliveryInput,
    events: {} as DeliveryEvent,
    output: {} as DeliveryResult,
  },
  actors: {
    waitReady: fromPromise<void>(async () => {}),
    paste: fromPromise<void>(async () => {}),
    submit: fromPromise<void>(async () => {}),
    /** Whether the prompt is still sitting in the input box (so it was certainly not submitted). */
    stillInInput: fromPromise<boolean>(async () => false),
  },
  guards: {
    accepted: ({ context, event }) =>
      event.type === 'STATUS' && (event.status === 'busy' || event.status === 'waiting_input' || event.turns > context.turnsBefore),
    mayRetry: ({ context, event }) =>
      (event as unknown as { output: boolean }).output === true && context.submits <= context.maxSubmitRetries,
  },
  delays: {
    settle: ({ context }) => context.settleMs,
    retryAfter: ({ context }) => context.retryAfterMs,
    verifyTimeout: ({ context }) => context.verifyTimeoutMs,
  },
  actions: {
    countSubmit: assign({ submits: ({ context }) => context.submits + 1 }),
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
        onDone: 'pasting',
        onError: { target: 'notReady', actions: assign({ result: ({ event }) => ({ kind: 'not-ready' as const, status: errorText(event.error) }) }) },
      },
    },
    pasting: {
      description: 'Load the text into a uniquely named buffer and paste it once, bracketed.',
      invoke: {
        src: 'paste',
        onDone: 'settling',
        onError: { target: 'paneGone', actions: assign({ result: ({ event }) => ({ kind: 'pane-gone' as const, error: errorText(event.error) }) }) },
      },
    },
    settling: {
      description: 'Give the TUI time to take the paste, so the submit key is not read as part of it.',
      after: { settle: 'verifying' },
    },
    verifying: {
      description: 'Submit, then watch for proof the agent took the prompt.',
      initial: 'submitting',
      after: { verifyTimeout: { target: 'timedOut', actions: assign({ result: ({ context }) => ({ kind: 'timeout' as const, submits: context.submits, stillInInput: context.stillInInput }) }) } },
      on: {
        STATUS: { guard: 'accepted', target: 'delivered', actions: assign({ result: ({ context }) => ({ kind: 'delivered' as const, submits: context.submits }) }) },
      },
      states: {
        submitting: {
          entry: 'countSubmit',
          invoke: {
            src: 'submit',
            onDone: 'watching',
            onError: { target: '#delivery.paneGone', actions: assign({ result: ({ event }) => ({ kind: 'pane-gone' as const, error: errorText(event.error) }) }) },
          },
        },
        watching: {
          after: { retryAfter: 'checking' },
        },
        checking: {
          invoke: {
            src: 'stillInInput',
            onDone: [
              { guard: 'mayRetry', target: 'submitting', actions: assign({ stillInInput: true }) },
              // Not in the input box, yet no sign of work: ambiguous, so never type again; just wait.
              { target: 'waitingOnly', actions: assign({ stillInInput: ({ event }) => event.output }) },
            ],
            onError: { target: 'waitingOnly' },
          },
        },
        waitingOnly: {},
      },
    },
    delivered: { type: 'final' },
    notReady: { type: 'final' },
    timedOut: { type: 'final' },
    paneGone: { type: 'final' },
  },
  output: ({ context }) => context.result ?? { kind: 'pane-gone', error: 'delivery ended without a result' },
});
