import { createActor, SimulatedClock } from 'xstate';
import { describe, expect, it } from 'vitest';
import { terminalMachine } from '../../../machines/terminal.machine.js';
import type { Classification } from '../../../src/detect/classify.js';

// 2026-11-26 13:30 UTC: every event's time is on the same simulated clock the machine's timers run on.
const T0 = Date.UTC(2026, 10, 26, 13, 30);
const screen = (status: Classification['status'], lines: string[], at: number) => ({
  type: 'SCREEN' as const,
  at,
  classification: { status, rule: `${status}-rule`, lines },
  source: 'screen' as const,
});
const LIMIT = ["  ⎿  You've hit your session limit · resets 2:30pm (UTC)"];

function start(limitWaitMs?: number) {
  const clock = new SimulatedClock();
  clock.set(T0);
  const actor = createActor(terminalMachine, { input: { settleMs: 100, at: T0, timeZone: 'UTC', ...(limitWaitMs ? { limitWaitMs } : {}) }, clock });
  actor.start();
  return { actor, clock };
}

describe('terminal machine: the limited state', () => {
  it('a limit on screen during a turn ends that turn and holds the agent until the reset time it showed, then it is idle', () => {
    const { actor, clock } = start();
    actor.send(screen('idle', ['>'], T0));
    actor.send({ type: 'INPUT_SENT', at: T0 + 10 });
    actor.send(screen('busy', ['esc to interrupt'], T0 + 20));
    actor.send(screen('limited', LIMIT, T0 + 1000));
    const s = actor.getSnapshot();
    expect(s.value).toBe('limited');
    expect(s.context.turnOpen).toBe(false);
    expect(s.context.turns).toBe(1);
    expect(new Date(s.context.limit!.resetAt!).toISOString()).toBe('2026-11-26T14:30:00.000Z');
    // Quiet screens, a hook's turn end, a confirmation: still limited.
    actor.send(screen('idle', ['>'], T0 + 2000));
    actor.send({ type: 'TURN_CONFIRMED', at: T0 + 2100, by: 'transcript' });
    clock.increment(60 * 60_000 - 1001);
    expect(actor.getSnapshot().value).toBe('limited');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('idle');
    expect(actor.getSnapshot().context.rule).toMatch(/^limit reset \(resets 2:30pm/);
  });

  it('the same limit still on screen after its reset is not a new one; a second one is', () => {
    const { actor, clock } = start();
    actor.send(screen('limited', LIMIT, T0));
    clock.increment(60 * 60_000);
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send(screen('limited', LIMIT, T0 + 60 * 60_000 + 5));
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send(screen('limited', [...LIMIT, ...LIMIT], T0 + 60 * 60_000 + 10));
    expect(actor.getSnapshot().value).toBe('limited');
  });

  it('a limit without a reset time (a bare 429) holds the agent for limitWaitMs', () => {
    const { actor, clock } = start(120_000);
    actor.send(screen('limited', ['● API Error: Request rejected (429) · rate limited'], T0));
    expect(actor.getSnapshot().context.limit).toMatchObject({ resetAt: null, until: T0 + 120_000 });
    clock.increment(119_999);
    expect(actor.getSnapshot().value).toBe('limited');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('idle');
  });

  it('busy evidence (a person pushed on) or a menu leaves limited at once; a new limit restarts the wait', () => {
    const { actor, clock } = start();
    actor.send(screen('limited', LIMIT, T0));
    actor.send(screen('limited', ['■ You’ve hit your usage limit. try again at 3:00 PM.'], T0 + 10));
    expect(new Date(actor.getSnapshot().context.limit!.resetAt!).toISOString()).toBe('2026-11-26T15:00:00.000Z');
    clock.increment(60 * 60_000);
    expect(actor.getSnapshot().value).toBe('limited');
    actor.send(screen('waiting_input', ['Enter to confirm'], T0 + 60 * 60_000 + 1));
    expect(actor.getSnapshot().value).toBe('waiting_input');
    const b = start();
    b.actor.send(screen('limited', LIMIT, T0));
    b.actor.send(screen('busy', ['esc to interrupt'], T0 + 5));
    expect(b.actor.getSnapshot().value).toBe('busy');
  });
});
