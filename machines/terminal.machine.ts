import { assign, setup } from 'xstate';
import type { Classification } from '../src/detect/classify.js';
import { readReset } from '../src/detect/limit.js';

export type TerminalStatus = 'starting' | 'booting' | 'idle' | 'busy' | 'settling' | 'waiting_input' | 'limited' | 'done' | 'error' | 'exited';

/** A usage or rate limit the CLI showed: when it resets (null: it did not say) and the words that said so. */
export interface LimitSeen {
  at: number;
  resetAt: number | null;
  said: string | null;
  lines: string[];
  /** When the machine looks again (the reset, or `limitWaitMs` after it was seen when no reset was shown). */
  until: number;
}

export type TerminalEvent =
  /** A new reading of the pane: a classified screen, or the CLI's own state file. */
  | { type: 'SCREEN'; at: number; classification: Classification; source: 'screen' | 'state-file' | 'output' | 'turn' }
  /**
   * Delivery typed a prompt and pressed Enter. `doneBefore`: the done evidence (turn summary) on the
   * screen delivery read just before typing, null for none; absent, the last reading's stands in (on a
   * pane whose hooks decide, the screen may not have been read since the turn before ended).
   */
  | { type: 'INPUT_SENT'; at: number; doneBefore?: string | null }
  /**
   * The turn engine confirmed that the open turn ended (its reply is in the transcript, or the screen
   * shows the prompt's echo followed by the CLI's end-of-turn mark), whatever the last reading said.
   */
  | { type: 'TURN_CONFIRMED'; at: number; by: string }
  /**
   * A CLI's native hook said so (issue 27): the strongest evidence for busy (turn start), done (turn
   * end) and waiting (a permission request). The watcher ranks it against the state file and the screen.
   */
  | { type: 'HOOK'; at: number; status: 'busy' | 'done' | 'waiting_input'; rule: string }
  | { type: 'PANE_EXITED'; at: number; exitStatus: number | null }
  | { type: 'PANE_RESTARTED'; at: number };

export interface TerminalContext {
  settleMs: number;
  /** After a start, how long a quiet screen must stay quiet before the CLI counts as ready (0: at once). */
  startSettleMs: number;
  doneNeedsEvidence: boolean;
  since: number;
  rule: string | null;
  lines: string[];
  source: 'screen' | 'state-file' | 'output' | 'tmux' | 'delivery' | 'turn' | 'hook';
  /** A prompt went in (or busy was seen) and its turn has not finished yet. */
  turnOpen: boolean;
  exitStatus: number | null;
  turns: number;
  /** The done evidence (a turn summary) of the latest reading, or null when that reading showed none. */
  lastDone: string | null;
  /** The done evidence on screen when the open turn's prompt went in: an old summary, not this turn's. */
  doneAtInput: string | null;
  /** The limit the agent waits for now (state `limited`), or the last one, kept for `why`. */
  limit: LimitSeen | null;
  /** The lines of a limit whose reset passed: still on screen, they are not a new limit. */
  limitPassed: string | null;
  /** How long a limit that shows no reset time holds the agent before it is tried again. */
  limitWaitMs: number;
  /** The pane's time zone (IANA), for reset times printed as a time of day. */
  timeZone: string | undefined;
}

const is =
  (status: Classification['status']) =>
  ({ event }: { event: TerminalEvent }) =>
    event.type === 'SCREEN' && event.classification.status === status;
/** A limit on screen that is not the one whose reset already passed. */
const isFreshLimit = ({ context, event }: { context: TerminalContext; event: TerminalEvent }) =>
  event.type === 'SCREEN' && event.classification.status === 'limited' && event.classification.lines.join('\n') !== context.limitPassed;
/**
 * A limit read while limited that is not the one the agent waits for: other words, or the same words
 * with another reset. The same message read again (the screen, or the reply its hook brought and then the
 * screen) is the same limit: a relative reset ("in 6 seconds") read later must not move it.
 */
const isNewLimit = ({ context, event }: { context: TerminalContext; event: TerminalEvent }) => {
  if (!isFreshLimit({ context, event })) return false;
  if (event.type !== 'SCREEN' || !context.limit) return true;
  const lines = event.classification.lines;
  if (lines.join('\n') === context.limit.lines.join('\n')) return false;
  const { said } = readReset(lines, event.at, context.timeZone);
  return said === null || said !== context.limit.said;
};
/** Past this a timer does not fire as set (2^31 - 1 ms, some 24 days): a longer wait looks again then. */
const MAX_DELAY_MS = 2_147_483_647;
const isQuiet = ({ event }: { event: TerminalEvent }) =>
  event.type === 'SCREEN' && (event.classification.status === 'idle' || event.classification.status === 'done');

// Transitions many states share: busy, a menu and an error on screen always win.
const toBusyOpening = { guard: 'busy', target: 'busy', actions: ['note', 'openTurn'] } as const;
const toBusy = { guard: 'busy', target: 'busy', actions: 'note' } as const;
const toWaiting = { guard: 'waiting', target: 'waiting_input', actions: 'note' } as const;
const toError = { guard: 'error', target: 'error', actions: 'note' } as const;
// A usage or rate limit on screen: the turn it ended (if one was open) is over; the agent waits for the reset.
const toLimited = { guard: 'limit', target: 'limited', actions: ['note', 'setLimit', 'endTurnByLimit'] } as const;
// A hook's word (issue 27): busy opens a turn where none is open, done closes the open one at once
// (no settle wait: the CLI itself said the turn ended), waiting is a permission request.
const hookBusyOpening = { guard: 'hookBusy', target: 'busy', actions: ['note', 'openTurn'] } as const;
const hookBusy = { guard: 'hookBusy', target: 'busy', actions: 'note' } as const;
const hookDone = { guard: 'hookDone', target: 'done', actions: ['note', 'closeTurn'] } as const;
const hookWaiting = { guard: 'hookWaiting', target: 'waiting_input', actions: 'note' } as const;
/** Where no turn runs (starting, idle, done, error): a turn start opens one, a permission request waits. */
const hookQuiet = [hookBusyOpening, hookWaiting, { guard: 'hookDoneOpen', target: 'done', actions: ['note', 'closeTurn'] }] as const;
/** Where a turn runs (busy, settling, waiting_input): its end closes it. */
const hookInTurn = [hookBusy, hookDone, hookWaiting] as const;

const doneOf = (event: Extract<TerminalEvent, { type: 'SCREEN' }>): string | null =>
  event.classification.status === 'done' ? event.classification.lines.join('\n') : null;

/**
 * One pane's status. Busy evidence always wins; a quiet screen after busy must stay quiet for
 * `settleMs` before the turn counts as done; once done it only goes busy again on clear busy
 * evidence. Pure: times come in the events, delays run on the actor's clock.
 */
export const terminalMachine = setup({
  types: {
    context: {} as TerminalContext,
    events: {} as TerminalEvent,
    input: {} as { settleMs: number; at: number; doneNeedsEvidence?: boolean; startSettleMs?: number; limitWaitMs?: number; timeZone?: string },
  },
  actions: {
    note: assign(({ event }) => {
      if (event.type === 'SCREEN') {
        return { since: event.at, rule: event.classification.rule, lines: event.classification.lines, source: event.source, lastDone: doneOf(event) };
      }
      if (event.type === 'PANE_EXITED') return { since: event.at, rule: 'pane-exited', lines: [], source: 'tmux' as const, exitStatus: event.exitStatus };
      if (event.type === 'PANE_RESTARTED')
        return { since: event.at, rule: 'pane-restarted', lines: [], source: 'tmux' as const, exitStatus: null, turnOpen: false };
      if (event.type === 'TURN_CONFIRMED') return { since: event.at, rule: `turn-confirmed (${event.by})`, lines: [], source: 'turn' as const };
      if (event.type === 'HOOK') return { since: event.at, rule: event.rule, lines: [], source: 'hook' as const };
      return {};
    }),
    openTurn: assign({ turnOpen: true }),
    trackDone: assign({ lastDone: ({ event }) => (event.type === 'SCREEN' ? doneOf(event) : null) }),
    promptWentIn: assign(({ context, event }) => ({
      turnOpen: true,
      doneAtInput: event.type === 'INPUT_SENT' && event.doneBefore !== undefined ? event.doneBefore : context.lastDone,
    })),
    closeTurn: assign(({ context }) => ({ turnOpen: false, turns: context.turns + 1 })),
    setLimit: assign(({ context, event }) => {
      if (event.type !== 'SCREEN') return {};
      const lines = event.classification.lines;
      const { resetAt, said } = readReset(lines, event.at, context.timeZone);
      const until = resetAt ?? event.at + context.limitWaitMs;
      return { limit: { at: event.at, resetAt, said, lines, until } };
    }),
    endTurnByLimit: assign(({ context }) => (context.turnOpen ? { turnOpen: false, turns: context.turns + 1 } : {})),
    limitPassed: assign(({ context }) => ({
      limitPassed: context.limit ? context.limit.lines.join('\n') : null,
      rule: `limit reset (${context.limit?.said ?? 'no reset time shown; tried again'})`,
      lines: [],
    })),
  },
  guards: {
    busy: is('busy'),
    waiting: is('waiting_input'),
    error: is('error'),
    limit: isFreshLimit,
    newLimit: isNewLimit,
    quiet: isQuiet,
    bootsSlowly: ({ context, event }) => context.startSettleMs > 0 && isQuiet({ event }),
    /** A reading that says the CLI is loading (its starting rule), or nothing at all (a cleared screen). */
    notReady: ({ event }) => event.type === 'SCREEN' && (event.classification.status === 'starting' || event.classification.status === 'unknown'),
    /** A loading screen while nothing has gone in since the start: no prompt, no turn. */
    stillBooting: ({ context, event }) => is('starting')({ event }) && context.turns === 0 && !context.turnOpen,
    /** Quiet enough to start settling: any quiet screen, or only `done` evidence where the CLI needs it. */
    turnEnding: ({ context, event }) => (context.doneNeedsEvidence ? event.type === 'SCREEN' && event.classification.status === 'done' : isQuiet({ event })),
    doneEvidence: is('done'),
    doneMoved: ({ context, event }) => event.type === 'SCREEN' && doneOf(event) !== context.lastDone,
    hookBusy: ({ event }) => event.type === 'HOOK' && event.status === 'busy',
    hookDone: ({ event }) => event.type === 'HOOK' && event.status === 'done',
    hookWaiting: ({ event }) => event.type === 'HOOK' && event.status === 'waiting_input',
    /** A turn end where the prompt went in but no busy was seen (its start event lost): it ends that turn. */
    hookDoneOpen: ({ context, event }) => context.turnOpen && event.type === 'HOOK' && event.status === 'done',
    turnOpen: ({ context }) => context.turnOpen,
    /** A turn summary that was not on screen when the prompt went in: a turn too fast for its busy screen. */
    freshSummary: ({ context, event }) => context.turnOpen && event.type === 'SCREEN' && doneOf(event) !== null && doneOf(event) !== context.doneAtInput,
  },
  delays: {
    settle: ({ context }) => context.settleMs,
    startSettle: ({ context }) => context.startSettleMs,
    /** Until the limit resets (`since` is when it was seen, on the machine's own clock). */
    reset: ({ context }) => Math.min(MAX_DELAY_MS, Math.max(0, (context.limit?.until ?? context.since) - (context.limit?.at ?? context.since))),
  },
}).createMachine({
  id: 'terminal',
  context: ({ input }) => ({
    settleMs: input.settleMs,
    startSettleMs: input.startSettleMs ?? 0,
    doneNeedsEvidence: input.doneNeedsEvidence ?? false,
    since: input.at,
    rule: null,
    lines: [],
    source: 'tmux',
    turnOpen: false,
    exitStatus: null,
    turns: 0,
    lastDone: null,
    doneAtInput: null,
    limit: null,
    limitPassed: null,
    limitWaitMs: input.limitWaitMs ?? DEFAULT_LIMIT_WAIT_MS,
    timeZone: input.timeZone,
  }),
  initial: 'starting',
  on: {
    PANE_EXITED: { target: '.exited', actions: 'note' },
    // The pane runs its program anew (up restarting a dead pane, or after a headless turn): it boots again.
    PANE_RESTARTED: { target: '.starting', actions: 'note' },
    // Stronger than any reading: only an open turn can be confirmed (an exited pane ignores it).
    TURN_CONFIRMED: { guard: 'turnOpen', target: '.done', actions: ['note', 'closeTurn'] },
    // A reading no state acts on still tells whether a turn summary is on screen (one that tells nothing
    // new makes no new snapshot: most readings, the screen looked at again after a hook decided).
    SCREEN: { guard: 'doneMoved', actions: 'trackDone' },
  },
  states: {
    starting: {
      description: 'The CLI is booting: no input box or spinner seen yet.',
      on: {
        HOOK: [...hookQuiet],
        SCREEN: [
          toBusyOpening,
          toLimited,
          toWaiting,
          toError,
          { guard: 'bootsSlowly', target: 'booting', actions: 'note' },
          { guard: 'quiet', target: 'idle', actions: 'note' },
        ],
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    booting: {
      description: 'A quiet screen after a start, not trusted yet: some CLIs draw a ready-looking screen, then load more (gemini resuming).',
      after: { startSettle: { target: 'idle' } },
      on: {
        HOOK: [...hookQuiet],
        SCREEN: [
          toBusyOpening,
          toLimited,
          toWaiting,
          toError,
          // Another quiet screen: the CLI is still drawing; start the wait over.
          { guard: 'quiet', target: 'booting', reenter: true, actions: 'note' },
          // A loading screen, or one that reads as nothing (gemini 0.61 clears its screen between its
          // ready-looking first screen and `Resuming session...`; under load that gap outlasted the wait,
          // it read idle on a blank screen and the prompt typed then was lost): back to starting.
          { guard: 'notReady', target: 'starting', actions: 'note' },
        ],
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    idle: {
      description: 'Ready for a prompt; no turn has run since the last one finished (or ever).',
      on: {
        HOOK: [...hookQuiet],
        SCREEN: [
          toBusyOpening,
          toLimited,
          toWaiting,
          toError,
          // A turn so fast that no busy screen was caught: its summary line still shows it ran. An old
          // summary (after a resume, the last turn's) that was there when the prompt went in is not it.
          { guard: 'freshSummary', target: 'settling', actions: 'note' },
          // The CLI's loading screen before anything went in (gemini's `Resuming session...` after a
          // ready-looking screen that stayed quiet past the start settle time): it was not ready after all.
          { guard: 'stillBooting', target: 'starting', actions: 'note' },
        ],
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    busy: {
      description: 'The agent is working on a turn (spinner, "esc to interrupt").',
      on: {
        HOOK: [...hookInTurn],
        SCREEN: [{ guard: 'busy', actions: 'note' }, toLimited, toWaiting, toError, { guard: 'turnEnding', target: 'settling', actions: 'note' }],
      },
    },
    settling: {
      description: 'The screen went quiet after work; it must stay quiet for settleMs before the turn is done.',
      after: { settle: { target: 'done', actions: 'closeTurn' } },
      on: {
        HOOK: [...hookInTurn],
        SCREEN: [
          toBusy,
          toLimited,
          toWaiting,
          toError,
          // Output while settling (a reply still streaming) restarts the wait.
          { guard: 'quiet', target: 'settling', reenter: true, actions: 'note' },
        ],
      },
    },
    waiting_input: {
      description: 'A permission or choice menu waits for a person (or for jaggers) to answer.',
      on: {
        HOOK: [...hookInTurn],
        SCREEN: [toBusy, toLimited, toError, { guard: 'turnEnding', target: 'settling', actions: 'note' }],
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    done: {
      description: 'A turn finished and its reply is on screen; it stays done until new input or clear busy evidence.',
      on: {
        HOOK: [...hookQuiet],
        SCREEN: [
          toBusyOpening,
          toLimited,
          toWaiting,
          toError,
          // The next turn, too fast for its busy screen: a new summary ends it.
          { guard: 'freshSummary', target: 'settling', actions: 'note' },
        ],
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    error: {
      description: 'The CLI shows an error it cannot continue from by itself.',
      on: {
        HOOK: [...hookQuiet],
        SCREEN: [toBusyOpening, toLimited, toWaiting, { guard: 'quiet', target: 'idle', actions: 'note' }],
      },
    },
    limited: {
      description:
        "The CLI hit its plan's usage limit or the service's rate limit: no prompt goes in until the reset time it showed (or limitWaitMs when it showed none).",
      after: { reset: { target: 'idle', actions: 'limitPassed' } },
      on: {
        // A person pushed on (or the CLI retries): work shows again. A turn's end changes nothing.
        HOOK: [hookBusyOpening, hookWaiting, { guard: 'hookDoneOpen', actions: 'closeTurn' }],
        SCREEN: [
          toBusyOpening,
          // Another limit (a new reset time): the wait starts over. The same one read again changes nothing.
          { guard: 'newLimit', target: 'limited', reenter: true, actions: ['note', 'setLimit'] },
          toWaiting,
          toError,
        ],
        TURN_CONFIRMED: { guard: 'turnOpen', actions: 'closeTurn' },
        INPUT_SENT: { actions: 'promptWentIn' },
      },
    },
    exited: {
      description: 'The CLI or its pane died.',
      on: { TURN_CONFIRMED: {} },
    },
  },
});

/** A limit that shows no reset time (a bare 429) holds the agent this long before the next try. */
export const DEFAULT_LIMIT_WAIT_MS = 5 * 60_000;

/** What a person is told: `settling` is still `busy` to the outside, and `booting` still `starting`. */
export function publicStatus(state: TerminalStatus): Exclude<TerminalStatus, 'settling' | 'booting'> {
  return state === 'settling' ? 'busy' : state === 'booting' ? 'starting' : state;
}
