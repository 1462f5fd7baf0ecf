import { createActor, SimulatedClock, type SnapshotFrom } from 'xstate';
import { describe, expect, it } from 'vitest';
import { terminalMachine } from '../../machines/terminal.machine.js';
import type { Classification } from '../../src/detect/classify.js';

const screen = (status: Classification['status'], rule: string | null = `${status}-rule`, at = 0) => ({
  type: 'SCREEN' as const,
  at,
  classification: { status, rule, lines: [`a ${status} line`] },
  source: 'screen' as const,
});

/** A reading whose done evidence is the turn summary `line`. */
const summary = (line: string, at: number) => ({
  type: 'SCREEN' as const,
  at,
  classification: { status: 'done' as const, rule: 'turn-summary', lines: [line] },
  source: 'screen' as const,
});

function start(settleMs = 300, doneNeedsEvidence = false, startSettleMs = 0) {
  const clock = new SimulatedClock();
  const actor = createActor(terminalMachine, { input: { settleMs, at: 0, doneNeedsEvidence, startSettleMs }, clock });
  const seen: string[] = [];
  actor.subscribe((s: SnapshotFrom<typeof terminalMachine>) => {
    if (seen.at(-1) !== s.value) seen.push(s.value as string);
  });
  actor.start();
  return { actor, clock, seen };
}

describe('terminal machine', () => {
  it('a reading no state acts on tracks the turn summary on screen, and one that tells nothing new leaves the snapshot as it was', () => {
    const { actor } = start();
    actor.send({ type: 'HOOK', at: 1, status: 'busy', rule: 'hook UserPromptSubmit' });
    actor.send({ type: 'HOOK', at: 2, status: 'done', rule: 'hook Stop' });
    expect(actor.getSnapshot().value).toBe('done');
    actor.send(summary('✻ Worked for 1s', 3));
    const tracked = actor.getSnapshot();
    expect(tracked.context.lastDone).toBe('✻ Worked for 1s');
    // The same summary read again (the look after the hook's turn end): nothing changes, not even the snapshot.
    actor.send(summary('✻ Worked for 1s', 4));
    expect(actor.getSnapshot()).toBe(tracked);
    // A screen without one: that is news (a later prompt's fast turn is told by a summary not on screen now).
    actor.send(screen('idle', 'input-box', 5));
    expect(actor.getSnapshot().context.lastDone).toBeNull();
    expect(actor.getSnapshot().value).toBe('done');
  });

  it('a limit read again (the hook brought the reply, then the screen shows it) keeps the reset of its first reading', () => {
    const { actor, clock } = start();
    const limit = (lines: string[], at: number) => ({
      type: 'SCREEN' as const,
      at,
      classification: { status: 'limited' as const, rule: 'usage-limit', lines },
      source: 'screen' as const,
    });
    actor.send(screen('idle', 'input-box', 1));
    clock.increment(400);
    actor.send(limit(['✕ Usage limit reached · try again in 6 seconds'], 1000));
    const first = actor.getSnapshot().context.limit!;
    expect(first).toMatchObject({ at: 1000, resetAt: 7000, said: 'in 6 seconds' });
    // The same words on screen 49 ms later, framed otherwise: the same limit.
    actor.send(limit(['│ ✕ Usage limit reached · try again in 6 seconds │'], 1049));
    expect(actor.getSnapshot().context.limit).toEqual(first);
    actor.send(limit(['✕ Usage limit reached · try again in 6 seconds'], 3000));
    expect(actor.getSnapshot().context.limit).toEqual(first);
    // Other words (another reset): the wait starts over.
    actor.send(limit(['✕ Usage limit reached · try again in 9 seconds'], 3000));
    expect(actor.getSnapshot().context.limit).toMatchObject({ at: 3000, resetAt: 12000, said: 'in 9 seconds' });
    expect(actor.getSnapshot().value).toBe('limited');
  });

  it('with a start settle time, a first quiet screen is trusted only once it stayed quiet (gemini resuming)', () => {
    const { actor, clock, seen } = start(300, false, 700);
    actor.send(screen('idle', 'input-box', 1)); // the ready-looking screen before the conversation loads
    clock.increment(100);
    expect(actor.getSnapshot().value).toBe('booting');
    actor.send(screen('starting', 'resuming', 2)); // `Resuming session...`
    expect(actor.getSnapshot().value).toBe('starting');
    actor.send(screen('idle', 'input-box', 3));
    clock.increment(600);
    actor.send(screen('idle', 'input-box', 4)); // still drawing: the wait starts over
    clock.increment(699);
    expect(actor.getSnapshot().value).toBe('booting');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('idle');
    expect(seen).toEqual(['starting', 'booting', 'starting', 'booting', 'idle']);
    // A prompt may still arrive while booting (a person typed): busy evidence wins.
    const b = start(300, false, 700);
    b.actor.send(screen('idle', 'input-box', 1));
    b.actor.send(screen('busy', 'spinner', 2));
    expect(b.actor.getSnapshot().value).toBe('busy');
  });

  it('with a start settle time, a screen cleared while booting is not ready: the wait starts over at the next quiet screen (gemini 0.61 under load)', () => {
    // Seen in CI and on a loaded machine: gemini resuming drew its banner and input box, cleared the
    // screen 250 ms later and showed `Resuming session...` 500 ms after that. The wait ran out on the
    // blank screen, the agent read idle, and the prompt typed into it was lost.
    const { actor, clock, seen } = start(300, false, 700);
    actor.send(screen('idle', 'input-box', 1));
    clock.increment(250);
    actor.send(screen('unknown', null, 2)); // the cleared screen
    clock.increment(700);
    expect(actor.getSnapshot().value).toBe('starting');
    actor.send(screen('starting', 'resuming', 3));
    actor.send(screen('idle', 'input-box', 4)); // the conversation drawn, its input box below
    clock.increment(700);
    expect(actor.getSnapshot().value).toBe('idle');
    expect(seen).toEqual(['starting', 'booting', 'starting', 'booting', 'idle']);
  });

  it('a loading screen after idle, before anything went in, means the CLI was not ready; once a prompt went in it changes nothing', () => {
    // The ready-looking screen stayed quiet past the start settle time, then `Resuming session...`.
    const { actor, clock } = start(300, false, 700);
    actor.send(screen('idle', 'input-box', 1));
    clock.increment(700);
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send(screen('starting', 'resuming', 2));
    expect(actor.getSnapshot().value).toBe('starting');
    actor.send(screen('idle', 'input-box', 3));
    clock.increment(700);
    expect(actor.getSnapshot().value).toBe('idle');
    // A prompt went in: the turn is under way, and a screen its starting rule reads is no reason to
    // drop it (the delivery in flight decides whether the prompt was taken).
    actor.send({ type: 'INPUT_SENT', at: 4 });
    actor.send(screen('starting', 'resuming', 5));
    expect(actor.getSnapshot().value).toBe('idle');
    // After a turn, too (a screen that looks like a start, such as after /clear, is not one).
    const b = start();
    b.actor.send(screen('idle', 'input-box', 1));
    b.actor.send({ type: 'HOOK', at: 2, status: 'busy', rule: 'hook BeforeAgent' });
    b.actor.send({ type: 'HOOK', at: 3, status: 'done', rule: 'hook AfterAgent' });
    b.actor.send(screen('idle', 'input-box', 4));
    b.actor.send(screen('starting', 'before-config', 5));
    expect(b.actor.getSnapshot().value).toBe('done');
  });

  it('the turn engine confirms an open turn done, whatever the screen said; without an open turn it changes nothing', () => {
    const { actor } = start(300, true);
    actor.send(screen('idle'));
    actor.send({ type: 'TURN_CONFIRMED', at: 1, by: 'screen' });
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'INPUT_SENT', at: 2 });
    actor.send(screen('busy', 'spinner', 3));
    // codex: no summary rule matched (`Worked for <1s` once was missed), the engine saw the end.
    actor.send({ type: 'TURN_CONFIRMED', at: 4, by: 'screen' });
    expect(actor.getSnapshot().value).toBe('done');
    expect(actor.getSnapshot().context).toMatchObject({ turns: 1, turnOpen: false, rule: 'turn-confirmed (screen)', source: 'turn' });
  });

  it('boots, goes busy on a prompt, settles, and is done', () => {
    const { actor, clock, seen } = start();
    actor.send(screen('starting'));
    actor.send(screen('idle'));
    actor.send({ type: 'INPUT_SENT', at: 1 });
    actor.send(screen('busy', 'spinner', 2));
    actor.send(screen('idle', 'input-box', 3));
    clock.increment(299);
    expect(actor.getSnapshot().value).toBe('settling');
    clock.increment(1);
    const s = actor.getSnapshot();
    expect(s.value).toBe('done');
    expect(s.context).toMatchObject({ turns: 1, turnOpen: false, rule: 'input-box', since: 3 });
    expect(seen).toEqual(['starting', 'idle', 'busy', 'settling', 'done']);
  });

  it('does not flap: busy evidence while settling goes back to busy and restarts the wait', () => {
    const { actor, clock } = start();
    actor.send(screen('busy'));
    actor.send(screen('idle'));
    clock.increment(200);
    actor.send(screen('busy'));
    clock.increment(500);
    expect(actor.getSnapshot().value).toBe('busy');
    actor.send(screen('idle'));
    clock.increment(200);
    actor.send(screen('idle')); // more output: the wait starts again
    clock.increment(200);
    expect(actor.getSnapshot().value).toBe('settling');
    clock.increment(100);
    expect(actor.getSnapshot().value).toBe('done');
  });

  it('stays done on quiet screens and goes busy only on busy evidence', () => {
    const { actor, clock } = start(0);
    actor.send(screen('busy'));
    actor.send(screen('idle'));
    clock.increment(0);
    expect(actor.getSnapshot().value).toBe('done');
    actor.send(screen('idle'));
    actor.send(screen('done'));
    expect(actor.getSnapshot().value).toBe('done');
    actor.send(screen('busy'));
    expect(actor.getSnapshot().value).toBe('busy');
  });

  it('reports a permission menu as waiting_input, then finishes the turn', () => {
    const { actor, clock } = start(100);
    actor.send(screen('idle'));
    actor.send(screen('busy'));
    actor.send(screen('waiting_input', 'approval-menu'));
    expect(actor.getSnapshot().value).toBe('waiting_input');
    expect(actor.getSnapshot().context.rule).toBe('approval-menu');
    actor.send(screen('busy'));
    actor.send(screen('idle'));
    clock.increment(100);
    expect(actor.getSnapshot().value).toBe('done');
  });

  it('catches a turn too fast for its busy screen by its summary line', () => {
    const { actor, clock } = start(50);
    actor.send(screen('idle'));
    actor.send(screen('done')); // an old summary without new input: still idle
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'INPUT_SENT', at: 5 });
    actor.send(summary('✻ Worked for 1s', 6));
    clock.increment(50);
    expect(actor.getSnapshot().value).toBe('done');
    expect(actor.getSnapshot().context.turns).toBe(1);
  });

  it("after a resume the last turn's summary on screen is not the new prompt's turn", () => {
    const { actor, clock } = start(50);
    actor.send(summary('✻ Cogitated for 5s', 1)); // the resumed conversation, its old summary at the bottom
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'INPUT_SENT', at: 2 });
    actor.send(summary('✻ Cogitated for 5s', 3)); // the typed prompt redrew the input box; the summary is the old one
    clock.increment(500);
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send(screen('busy', 'spinner', 4));
    actor.send(summary('✻ Worked for 2s', 5));
    clock.increment(50);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
  });

  it('the old summary is told apart even when a quiet reading came between it and the prompt', () => {
    const { actor, clock } = start(50);
    actor.send(summary('✻ Cogitated for 5s', 1));
    actor.send(screen('idle', 'input-box', 2)); // a reading with no summary in view: nothing is old now
    actor.send({ type: 'INPUT_SENT', at: 3 });
    actor.send(summary('✻ Cogitated for 5s', 4)); // the same words, yet a new turn's summary
    clock.increment(50);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
  });

  it('the summary on the screen read just before typing is the old one, even when the last reading showed none (a turn ended by a hook)', () => {
    const { actor, clock } = start(50);
    actor.send(screen('idle'));
    actor.send({ type: 'INPUT_SENT', at: 1 });
    actor.send(screen('busy', 'spinner', 2)); // the last reading: the turn's spinner, no summary yet
    actor.send({ type: 'HOOK', at: 3, status: 'done', rule: 'hook session.idle' });
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
    // opencode: its summary drew after the hook; delivery read it before typing. The Enter was lost:
    // the screen after it shows the same summary (the prompt still in the box), which is no new turn.
    actor.send({ type: 'INPUT_SENT', at: 10, doneBefore: '▣  Build · Stub Model · 5.9s' });
    actor.send(summary('▣  Build · Stub Model · 5.9s', 11));
    clock.increment(500);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
    // The Enter pressed again: a summary the screen did not show before is that turn's.
    actor.send({ type: 'INPUT_SENT', at: 20, doneBefore: '▣  Build · Stub Model · 5.9s' });
    actor.send(summary('▣  Build · Stub Model · 6.1s', 21));
    clock.increment(50);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 2 } });
  });

  it('from done, the next turn too fast for its busy screen ends on its own new summary', () => {
    const { actor, clock } = start(50);
    actor.send(screen('idle'));
    actor.send({ type: 'INPUT_SENT', at: 1 });
    actor.send(screen('busy', 'spinner', 2));
    actor.send(summary('✻ Worked for 1s', 3));
    clock.increment(50);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
    actor.send({ type: 'INPUT_SENT', at: 10 });
    actor.send(summary('✻ Worked for 1s', 11)); // unchanged: the first turn's summary
    clock.increment(500);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 1 } });
    actor.send(summary('✻ Baked for 1s', 12));
    clock.increment(50);
    expect(actor.getSnapshot()).toMatchObject({ value: 'done', context: { turns: 2 } });
  });

  it('needs done evidence where the CLI shows no spinner while streaming', () => {
    const { actor, clock } = start(100, true);
    actor.send(screen('busy'));
    actor.send(screen('idle')); // streaming: only the input box is visible
    clock.increment(1000);
    expect(actor.getSnapshot().value).toBe('busy');
    actor.send(screen('done', 'turn-summary'));
    clock.increment(100);
    expect(actor.getSnapshot().value).toBe('done');
  });

  it('goes exited from any state when the pane dies, and starts again when it is respawned', () => {
    for (const prep of [[], [screen('idle')], [screen('busy')], [screen('waiting_input')]]) {
      const { actor } = start();
      for (const e of prep) actor.send(e);
      actor.send({ type: 'PANE_EXITED', at: 9, exitStatus: 3 });
      expect(actor.getSnapshot().value).toBe('exited');
      expect(actor.getSnapshot().context).toMatchObject({ exitStatus: 3, rule: 'pane-exited', since: 9 });
      actor.send(screen('idle'));
      expect(actor.getSnapshot().value).toBe('exited');
      actor.send({ type: 'PANE_RESTARTED', at: 10 });
      expect(actor.getSnapshot().value).toBe('starting');
    }
  });

  it('keeps starting through a slow boot and an error screen is error', () => {
    const { actor, clock } = start();
    actor.send(screen('starting'));
    clock.increment(5000);
    expect(actor.getSnapshot().value).toBe('starting');
    actor.send(screen('error', 'auth-failed'));
    expect(actor.getSnapshot().value).toBe('error');
    actor.send(screen('idle'));
    expect(actor.getSnapshot().value).toBe('idle');
  });
});
