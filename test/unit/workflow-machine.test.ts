// The workflow machine with a scripted turn actor on a simulated clock: the order of turns and what
// each is told, loops and exit conditions, timeouts, cancellation, and a restart from a saved snapshot.
import { createActor, fromPromise, SimulatedClock, type Snapshot } from 'xstate';
import { ZodError } from 'zod';
import { describe, expect, it } from 'vitest';
import { workflowMachine, workflowStatus, type TurnInput, type TurnOutput, type WorkflowMachine } from '../../machines/workflow.machine.js';
import * as adversarial from '../../machines/workflows/adversarial.machine.js';
import * as collaborative from '../../machines/workflows/collaborative.machine.js';
import * as handoff from '../../machines/workflows/handoff.machine.js';
import * as handshake from '../../machines/workflows/handshake.machine.js';
import * as troubleshoot from '../../machines/workflows/troubleshoot.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

const TASK = 'Make the parser accept trailing commas.';
const AB = { a: 'claude', b: 'codex' };

/** The files a turn's handover would have: `<seq>-<step>.prompt.md` and `.reply.md`. */
const fileOf = (i: TurnInput, kind: 'prompt' | 'reply') => `.jaggers/tasks/${i.taskId}/${i.seq}-${i.step}.${kind}.md`;

interface Call {
  input: TurnInput;
  signal: AbortSignal;
  settled: boolean;
  answer(text: string): Promise<void>;
  fail(error: Error): Promise<void>;
}

/**
 * A task of `machine` whose turns wait until the test answers them (so the clock can move while one is
 * out), recorded in `calls` in the order the machine started them.
 */
function start(machine: WorkflowMachine, roles: Record<string, string>, opts: { snapshot?: Snapshot<unknown>; taskId?: string } = {}) {
  const clock = new SimulatedClock();
  const calls: Call[] = [];
  const turn = fromPromise<TurnOutput, TurnInput>(
    ({ input, signal }) =>
      new Promise<TurnOutput>((resolve, reject) => {
        const call: Call = {
          input,
          signal,
          settled: false,
          answer: async (text) => {
            call.settled = true;
            resolve({ prompt: fileOf(input, 'prompt'), reply: fileOf(input, 'reply'), text, job: `job-${input.seq}` });
            await flush();
          },
          fail: async (error) => {
            call.settled = true;
            reject(error);
            await flush();
          },
        };
        calls.push(call);
      }),
  );
  const input = { taskId: opts.taskId ?? 't1', task: TASK, roles };
  const actor = createActor(machine.provide({ actors: { turn } }), opts.snapshot ? { input, clock, snapshot: opts.snapshot } : { input, clock });
  actor.start();

  /** The turn the machine waits for now. */
  const current = async (): Promise<Call> => {
    await flush();
    const call = calls.at(-1);
    if (!call || call.settled) throw new Error(`no turn is outstanding (${calls.length} turns started, state ${JSON.stringify(actor.getSnapshot().value)})`);
    return call;
  };
  /** Answers the outstanding turns one after the other with these replies. */
  const reply = async (...texts: string[]) => {
    for (const text of texts) await (await current()).answer(text);
  };
  const advance = async (ms: number) => {
    await flush();
    clock.increment(ms);
    await flush();
  };
  const snap = () => actor.getSnapshot();
  /** What was asked of whom: `step:agent:round` per turn. */
  const sequence = () => snap().context.turns.map((t) => `${t.step}:${t.agent}:${t.round}`);
  return { actor, calls, current, reply, advance, snap, sequence };
}

describe('workflow machine: the built-ins', () => {
  it('handoff: one turn whose prompt is the task, recorded with its files and job', async () => {
    const t = start(handoff.machine, { agent: 'claude' });
    const call = await t.current();
    expect(call.input).toEqual({
      taskId: 't1',
      workflow: 'handoff',
      seq: 1,
      step: 'work',
      role: 'agent',
      agent: 'claude',
      prompt: TASK,
      mode: 'pane',
      timeoutMs: 600_000,
    });
    expect(workflowStatus(t.snap())).toEqual({ status: 'running', step: 'work', agent: 'claude', seq: 1 });
    await call.answer('Done: commas are fine now.');

    const s = t.snap();
    expect(s.status).toBe('done');
    expect(s.value).toBe('done');
    expect(s.context.turns).toEqual([
      {
        seq: 1,
        step: 'work',
        agent: 'claude',
        round: 1,
        prompt: '.jaggers/tasks/t1/1-work.prompt.md',
        reply: '.jaggers/tasks/t1/1-work.reply.md',
        job: 'job-1',
      },
    ]);
    expect(s.context.latest).toEqual({ work: { reply: '.jaggers/tasks/t1/1-work.reply.md', agent: 'claude', seq: 1, passes: [] } });
    expect(s.context).toMatchObject({ seq: 1, rounds: {}, error: null, outcome: null, asking: null });
    expect(workflowStatus(s)).toEqual({ status: 'done', step: null, agent: null, seq: 1 });
    expect(call.signal.aborted).toBe(false);
  });

  it('collaborative: a, b, a with seq 1, 2, 3, each prompt naming the replies it reads', async () => {
    const t = start(collaborative.machine, AB);
    await t.reply('proposal', 'critique', 'final');
    expect(t.calls.map((c) => [c.input.seq, c.input.step, c.input.role, c.input.agent])).toEqual([
      [1, 'propose', 'a', 'claude'],
      [2, 'critique', 'b', 'codex'],
      [3, 'synthesize', 'a', 'claude'],
    ]);
    const [p1, p2, p3] = t.calls.map((c) => c.input.prompt);
    expect(p1).toContain(TASK);
    expect(p1).toContain('Task (t1, step 1 of 3: propose)');
    expect(p1).toContain('codex will critique your proposal next');
    expect(p1).not.toContain('.reply.md');
    expect(p2).toContain('claude proposed a solution:\n- propose (by claude): .jaggers/tasks/t1/1-propose.reply.md\n');
    expect(p2).not.toContain('2-critique');
    expect(p3).toContain('- propose (by claude): .jaggers/tasks/t1/1-propose.reply.md\n- critique (by codex): .jaggers/tasks/t1/2-critique.reply.md\n');
    expect(p3).not.toContain('3-synthesize');

    const s = t.snap();
    expect(s.value).toBe('done');
    expect(s.context.turns.map((x) => [x.seq, x.step, x.agent, x.round, x.reply])).toEqual([
      [1, 'propose', 'claude', 1, '.jaggers/tasks/t1/1-propose.reply.md'],
      [2, 'critique', 'codex', 1, '.jaggers/tasks/t1/2-critique.reply.md'],
      [3, 'synthesize', 'claude', 1, '.jaggers/tasks/t1/3-synthesize.reply.md'],
    ]);
    expect(Object.keys(s.context.latest)).toEqual(['propose', 'critique', 'synthesize']);
    expect(s.context.latest.synthesize).toMatchObject({ agent: 'claude', seq: 3 });
    expect(s.context).toMatchObject({ seq: 3, error: null, outcome: null });
  });

  describe('adversarial', () => {
    it('ACCEPTED in round 1 ends after the attack: 2 turns, the outcome names the round', async () => {
      const t = start(adversarial.machine, AB);
      await t.reply('the work', 'Checked every case.\n\nACCEPTED\n');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['produce:claude:1', 'attack:codex:1']);
      expect(s.context.outcome).toBe('attack: its reply matches /^\\W*ACCEPTED\\W*$/ (round 1)');
      expect(s.context.rounds).toEqual({});
      expect(s.context.latest.attack!.passes).toEqual([1]);
      expect(t.calls[1]!.input.prompt).toContain('attack, round 1 of 3');
    });

    it('ACCEPTED in round 2: produce, attack, defend, attack', async () => {
      const t = start(adversarial.machine, AB);
      await t.reply('the work', '1. the empty list breaks', 'fixed the empty list', '**ACCEPTED**');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['produce:claude:1', 'attack:codex:1', 'defend:claude:1', 'attack:codex:2']);
      expect(s.context.rounds).toEqual({ defend: 1 });
      expect(s.context.outcome).toBe('attack: its reply matches /^\\W*ACCEPTED\\W*$/ (round 2)');
      const attack2 = t.calls[3]!.input;
      expect(attack2).toMatchObject({ seq: 4, step: 'attack', agent: 'codex' });
      expect(attack2.prompt).toContain('round 2 of 3');
      expect(attack2.prompt).toContain('- defend (by claude): .jaggers/tasks/t1/3-defend.reply.md');
      expect(t.calls[2]!.input.prompt).toContain('- attack (by codex): .jaggers/tasks/t1/2-attack.reply.md');
    });

    it('never accepted: stops after the third defence, the outcome says the limit', async () => {
      const t = start(adversarial.machine, AB);
      await t.reply('work', 'no 1', 'defence 1', 'no 2', 'defence 2', 'no 3', 'defence 3');
      const s = t.snap();
      expect(s.status).toBe('done');
      expect(t.calls).toHaveLength(7);
      expect(t.sequence()).toEqual([
        'produce:claude:1',
        'attack:codex:1',
        'defend:claude:1',
        'attack:codex:2',
        'defend:claude:2',
        'attack:codex:3',
        'defend:claude:3',
      ]);
      expect(s.context.turns.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(s.context.rounds).toEqual({ defend: 2 });
      expect(s.context.outcome).toBe('the loop attack..defend reached its limit of 2 rounds back without its exit condition');
      expect(s.context.error).toBeNull();
    });

    it('ACCEPTED inside a sentence does not count', async () => {
      const t = start(adversarial.machine, AB);
      await t.reply('work', 'Not ACCEPTED yet: the empty list breaks.');
      expect(t.snap().value).toEqual({ s_defend: 'working' });
      expect(t.snap().context.latest.attack!.passes).toEqual([]);
      await t.reply('fixed', 'Looks right now.\nACCEPTED.');
      expect(t.snap().value).toBe('done');
      expect(t.snap().context.outcome).toMatch(/\(round 2\)$/);
      expect(t.calls).toHaveLength(4);
    });
  });

  describe('troubleshoot', () => {
    it('VERIFIED on the second verify: diagnose, fix, verify, fix, verify', async () => {
      const t = start(troubleshoot.machine, AB);
      await t.reply('cause: off by one', 'patch 1', 'still fails on empty input', 'patch 2', 'VERIFIED');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['diagnose:claude:1', 'fix:codex:1', 'verify:claude:1', 'fix:codex:2', 'verify:claude:2']);
      expect(s.context.rounds).toEqual({ verify: 1 });
      expect(s.context.outcome).toBe('verify: its reply matches /^\\W*VERIFIED\\W*$/ (round 2)');
      // The second fix reads the diagnosis and the failed verification.
      const fix2 = t.calls[3]!.input.prompt;
      expect(fix2).toContain('attempt 2 of 3');
      expect(fix2).toContain('- diagnose (by claude): .jaggers/tasks/t1/1-diagnose.reply.md\n- verify (by claude): .jaggers/tasks/t1/3-verify.reply.md');
      expect(t.calls[4]!.input.prompt).toContain('- fix (by codex): .jaggers/tasks/t1/4-fix.reply.md');
    });

    it('never verified: three fixes, then done with the limit as the outcome', async () => {
      const t = start(troubleshoot.machine, AB);
      await t.reply('cause', 'p1', 'fails', 'p2', 'fails', 'p3', 'still fails, not VERIFIED');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['diagnose:claude:1', 'fix:codex:1', 'verify:claude:1', 'fix:codex:2', 'verify:claude:2', 'fix:codex:3', 'verify:claude:3']);
      expect(s.context.rounds).toEqual({ verify: 2 });
      expect(s.context.outcome).toBe('the loop fix..verify reached its limit of 2 rounds back without its exit condition');
    });
  });

  describe('handshake: the marker must be in both latest drafts', () => {
    it('A agrees but B does not: the exchange goes on', async () => {
      const t = start(handshake.machine, AB);
      await t.reply('AGREED', 'my draft: use a token list');
      expect(t.snap().value).toEqual({ s_draft_a: 'working' });
      expect(t.snap().context.rounds).toEqual({ draft_b: 1 });
      expect(t.snap().context.latest.draft_a!.passes).toEqual([0, 1]);
      expect(t.snap().context.latest.draft_b!.passes).toEqual([]);
      const a2 = await t.current();
      expect(a2.input).toMatchObject({ seq: 3, step: 'draft_a', agent: 'claude' });
      expect(a2.input.prompt).toContain('round 2 of 4');
      expect(a2.input.prompt).toContain('- draft_b (by codex): .jaggers/tasks/t1/2-draft_b.reply.md');
    });

    it('both agree in the same round: done after B', async () => {
      const t = start(handshake.machine, AB);
      await t.reply('draft one', 'draft two', 'AGREED', 'AGREED');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['draft_a:claude:1', 'draft_b:codex:1', 'draft_a:claude:2', 'draft_b:codex:2']);
      expect(s.context.outcome).toBe('draft_b: the replies of draft_a and draft_b each match /^\\W*AGREED\\W*$/ (round 2)');
    });

    it('B agrees first, then A: done after A, without another turn of B', async () => {
      const t = start(handshake.machine, AB);
      await t.reply('draft one', 'AGREED', 'AGREED');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.sequence()).toEqual(['draft_a:claude:1', 'draft_b:codex:1', 'draft_a:claude:2']);
      expect(s.context.outcome).toBe('draft_a: the replies of draft_a and draft_b each match /^\\W*AGREED\\W*$/ (round 2)');
    });

    it('an agreement that is not renewed does not count: A agrees, B revises, A revises', async () => {
      const t = start(handshake.machine, AB);
      await t.reply('draft', 'AGREED', 'new draft, not agreed', 'revised');
      expect(t.snap().value).toEqual({ s_draft_a: 'working' });
      expect(t.calls).toHaveLength(5);
    });

    it('never both: four rounds (8 turns), then done with the limit', async () => {
      const t = start(handshake.machine, AB);
      await t.reply('a1', 'AGREED', 'a2', 'b2', 'AGREED', 'b3', 'a4', 'b4');
      const s = t.snap();
      expect(s.value).toBe('done');
      expect(t.calls).toHaveLength(8);
      expect(s.context.turns.map((x) => x.round)).toEqual([1, 1, 2, 2, 3, 3, 4, 4]);
      expect(s.context.rounds).toEqual({ draft_b: 3 });
      expect(s.context.outcome).toBe('the loop draft_a..draft_b reached its limit of 3 rounds back without its exit condition');
    });
  });
});

describe('workflow machine: time, failures and people', () => {
  it('a turn that never answers fails the task at the step timeout, not before, and its signal is aborted', async () => {
    const t = start(handoff.machine, { agent: 'claude' });
    const call = await t.current();
    await t.advance(600_000 - 1);
    expect(workflowStatus(t.snap()).status).toBe('running');
    expect(call.signal.aborted).toBe(false);
    await t.advance(1);
    const s = t.snap();
    expect(s.value).toBe('failed');
    expect(s.status).toBe('done');
    expect(s.context.error).toBe("turn 1 (work, claude) did not finish within 600 s (the step's timeout)");
    expect(call.signal.aborted).toBe(true);
    expect(workflowStatus(s)).toEqual({ status: 'failed', step: null, agent: null, seq: 1 });
    expect(s.context.turns).toEqual([{ seq: 1, step: 'work', agent: 'claude', round: 1, prompt: null, reply: null, job: null }]);
  });

  it("each turn gets its step's timeout (else the workflow's), counted from its own start", async () => {
    const def: WorkflowInput = {
      name: 'timed',
      agents: ['a', 'b'],
      timeout: 100,
      steps: [
        { id: 'one', agent: 'a', prompt: '{{task}}' },
        { id: 'two', agent: 'b', prompt: '{{task}}', timeout: 5 },
      ],
    };
    const t = start(workflowMachine(def), AB);
    expect((await t.current()).input.timeoutMs).toBe(100_000);
    await t.advance(99_000);
    await t.reply('one done');
    const two = await t.current();
    expect(two.input.timeoutMs).toBe(5_000);
    await t.advance(4_999); // past the 100 s of turn 1: its timer went with its state
    expect(t.snap().value).toEqual({ s_two: 'working' });
    await t.advance(1);
    expect(t.snap().value).toBe('failed');
    expect(t.snap().context.error).toBe("turn 2 (two, codex) did not finish within 5 s (the step's timeout)");
    expect(two.signal.aborted).toBe(true);
  });

  it('a turn actor that rejects fails the task with its message', async () => {
    const t = start(collaborative.machine, AB);
    await t.reply('proposal');
    await (await t.current()).fail(new Error('codex: the pane died'));
    const s = t.snap();
    expect(s.value).toBe('failed');
    expect(s.context.error).toBe('turn 2 (critique, codex) failed: codex: the pane died');
    expect(s.context.outcome).toBeNull();
    expect(t.calls).toHaveLength(2);
  });

  it("a turn actor that kept the step's deadline itself (after a restore) fails the task as the machine's own timer would", async () => {
    const t = start(collaborative.machine, AB);
    await (await t.current()).fail(new Error("did not finish within 600 s (the step's timeout)"));
    expect(t.snap().context.error).toBe("turn 1 (propose, claude) did not finish within 600 s (the step's timeout)");
  });

  it('WAITING and WORKING: waiting with the question, then running again; the clock keeps counting', async () => {
    const t = start(collaborative.machine, AB);
    await t.reply('proposal');
    t.actor.send({ type: 'WAITING', what: 'Allow codex to run `npm test`?' });
    expect(t.snap().value).toEqual({ s_critique: 'waiting' });
    expect(t.snap().context.asking).toBe('Allow codex to run `npm test`?');
    expect(workflowStatus(t.snap())).toEqual({ status: 'waiting', step: 'critique', agent: 'codex', seq: 2 });
    t.actor.send({ type: 'WORKING' });
    expect(t.snap().context.asking).toBeNull();
    expect(workflowStatus(t.snap())).toEqual({ status: 'running', step: 'critique', agent: 'codex', seq: 2 });
    t.actor.send({ type: 'WAITING', what: 'again?' });
    await t.reply('critique');
    expect(t.snap().value).toEqual({ s_synthesize: 'working' });
    expect(t.snap().context.asking).toBeNull();
    // Waiting for a person does not stop the step's timeout.
    t.actor.send({ type: 'WAITING', what: 'still there?' });
    await t.advance(600_000);
    expect(t.snap().value).toBe('failed');
  });

  it('CANCEL: cancelled by whom, the outstanding turn aborted, no more turns', async () => {
    const t = start(collaborative.machine, AB);
    await t.reply('proposal');
    const critique = await t.current();
    t.actor.send({ type: 'CANCEL', by: 'alice' });
    await t.advance(0);
    const s = t.snap();
    expect(s.value).toBe('cancelled');
    expect(s.status).toBe('done');
    expect(s.context.error).toBe('cancelled by alice');
    expect(workflowStatus(s)).toEqual({ status: 'cancelled', step: null, agent: null, seq: 2 });
    expect(critique.signal.aborted).toBe(true);
    await critique.answer('too late');
    await t.advance(600_000);
    expect(t.snap().value).toBe('cancelled');
    expect(t.calls).toHaveLength(2);
  });
});

describe('workflow machine: a saved snapshot', () => {
  it('restored in the middle of turn 2: turn 2 runs again with the same input, turn 1 does not', async () => {
    const first = start(collaborative.machine, AB);
    await first.reply('proposal');
    const turn2 = await first.current();
    const saved = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot())) as Snapshot<unknown>;
    first.actor.stop();
    expect(turn2.signal.aborted).toBe(true);

    const second = start(collaborative.machine, AB, { snapshot: saved });
    const again = await second.current();
    expect(second.calls).toHaveLength(1);
    expect(again.input).toEqual(turn2.input);
    expect(again.input).toMatchObject({ seq: 2, step: 'critique', agent: 'codex' });
    // XState does not persist delayed events: after a restore the step's `after` timer is gone, and only
    // the turn actor, which gets the timeout in its input, can bound the turn.
    expect(again.input.timeoutMs).toBe(600_000);
    expect(again.input.prompt).toContain('- propose (by claude): .jaggers/tasks/t1/1-propose.reply.md');
    expect(workflowStatus(second.snap())).toEqual({ status: 'running', step: 'critique', agent: 'codex', seq: 2 });

    await second.reply('critique', 'final');
    const s = second.snap();
    expect(s.value).toBe('done');
    expect(second.calls.map((c) => c.input.seq)).toEqual([2, 3]);
    expect(s.context.turns.map((x) => [x.seq, x.step, x.job])).toEqual([
      [1, 'propose', 'job-1'],
      [2, 'critique', 'job-2'],
      [3, 'synthesize', 'job-3'],
    ]);
    expect(second.calls[1]!.input.prompt).toContain(
      '- propose (by claude): .jaggers/tasks/t1/1-propose.reply.md\n- critique (by codex): .jaggers/tasks/t1/2-critique.reply.md',
    );
  });
});

describe('workflow machine: a definition of its own', () => {
  // `poll` loops on itself (headless) until READY, at most 2 times back, else the task fails; `review`
  // then goes round with `revise` until the latest *revision* says FINAL (an `until` of another step).
  const def: WorkflowInput = {
    name: 'custom',
    agents: ['runner', 'reviewer'],
    steps: [
      {
        id: 'poll',
        agent: 'runner',
        mode: 'headless',
        prompt: 'Poll {{round}}/{{max_rounds}} for {{agent.reviewer}}: {{task}}',
        until: { contains: 'ready' },
        loop: { back: 'poll', max: 2, onLimit: 'fail' },
      },
      {
        id: 'review',
        agent: 'reviewer',
        reads: ['poll', 'revise'],
        prompt: 'Review {{reply.poll}}; last revision {{reply.revise}}',
        until: { contains: 'FINAL', of: ['revise'] },
      },
      { id: 'revise', agent: 'runner', prompt: 'Revise after {{reply.review}} (round {{round}})', loop: { back: 'review', max: 3 } },
    ],
  };
  const roles = { runner: 'gemini', reviewer: 'claude' };

  it('a step looping on itself until its marker, headless passed through, then an `until` of another step', async () => {
    const t = start(workflowMachine(def), roles);
    await t.reply('not yet', 'READY now');
    expect(t.calls.map((c) => [c.input.seq, c.input.step, c.input.mode, c.input.agent])).toEqual([
      [1, 'poll', 'headless', 'gemini'],
      [2, 'poll', 'headless', 'gemini'],
      [3, 'review', 'pane', 'claude'],
    ]);
    expect(t.calls[0]!.input.prompt).toBe(`Poll 1/3 for claude: ${TASK}`);
    expect(t.calls[1]!.input.prompt).toBe(`Poll 2/3 for claude: ${TASK}`);
    expect(t.calls[2]!.input.prompt).toBe('Review .jaggers/tasks/t1/2-poll.reply.md; last revision (none yet)');
    expect(t.snap().context.rounds).toEqual({ poll: 1 });
    expect(t.snap().context.outcome).toBe('poll: its reply contains "ready" (round 2)');

    // The reviewer's own FINAL does not count: the condition is on the revision.
    await t.reply('FINAL from the reviewer', 'revision 1');
    expect(t.snap().value).toEqual({ s_review: 'working' });
    expect((await t.current()).input.prompt).toBe('Review .jaggers/tasks/t1/2-poll.reply.md; last revision .jaggers/tasks/t1/4-revise.reply.md');
    await t.reply('more', 'revision 2, FINAL');
    expect(t.snap().value).toEqual({ s_review: 'working' }); // tested after review, not after revise
    await t.reply('fine');
    const s = t.snap();
    expect(s.value).toBe('done');
    expect(t.sequence()).toEqual([
      'poll:gemini:1',
      'poll:gemini:2',
      'review:claude:1',
      'revise:gemini:1',
      'review:claude:2',
      'revise:gemini:2',
      'review:claude:3',
    ]);
    expect(s.context.rounds).toEqual({ poll: 1, revise: 2 });
    expect(s.context.latest.revise!.passes).toEqual([1]);
    expect(s.context.outcome).toBe('review: the reply of revise contains "FINAL" (round 3)');
    expect(s.context.error).toBeNull();
  });

  it("onLimit 'fail': the self loop runs out, the task fails with the limit and goes no further", async () => {
    const t = start(workflowMachine(def), roles);
    await t.reply('no', 'no', 'no');
    const s = t.snap();
    expect(s.value).toBe('failed');
    expect(t.sequence()).toEqual(['poll:gemini:1', 'poll:gemini:2', 'poll:gemini:3']);
    expect(s.context.error).toBe('the loop poll..poll reached its limit of 2 rounds back without its exit condition');
    expect(s.context.outcome).toBeNull();
    expect(s.context.turns.at(-1)!.reply).toBe('.jaggers/tasks/t1/3-poll.reply.md');
    expect(t.calls.every((c) => !c.signal.aborted)).toBe(true);
  });

  it('a self loop restarts the step timeout for each round', async () => {
    const t = start(workflowMachine({ ...def, timeout: 10 }), roles);
    await t.advance(9_000);
    await t.reply('no');
    await t.advance(9_000);
    expect(t.snap().value).toEqual({ s_poll: 'working' });
    expect(t.calls).toHaveLength(2);
    await t.advance(1_000);
    expect(t.snap().context.error).toBe("turn 2 (poll, gemini) did not finish within 10 s (the step's timeout)");
  });
});

describe('workflowMachine rejects an invalid definition', () => {
  const base = { name: 'bad', agents: ['a', 'b'] };
  /** The ZodError's issues as `path: message`. */
  const issues = (def: unknown) => {
    try {
      workflowMachine(def as WorkflowInput);
    } catch (e) {
      expect(e).toBeInstanceOf(ZodError);
      return (e as ZodError).issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    }
    throw new Error('the definition was accepted');
  };

  it('`until` outside a loop', () => {
    expect(issues({ ...base, steps: [{ id: 'x', agent: 'a', prompt: 'p', until: { contains: 'OK' } }] })).toEqual([
      'steps.0.until: only a step inside a loop (between a `loop.back` target and its step) can have `until`',
    ]);
  });

  it('`loop.back` naming a later step', () => {
    const steps = [
      { id: 'x', agent: 'a', prompt: 'p', loop: { back: 'y', max: 1 } },
      { id: 'y', agent: 'b', prompt: 'p' },
    ];
    expect(issues({ ...base, steps })).toEqual(['steps.0.loop.back: must name this step or an earlier one']);
  });

  it('an unknown template variable', () => {
    const [issue] = issues({ ...base, steps: [{ id: 'x', agent: 'a', prompt: 'Do {{taks}}' }] });
    expect(issue).toMatch(/^steps\.0\.prompt: unknown template variable \{\{taks\}\} \(known: \{\{task\}\}/);
    expect(issues({ ...base, steps: [{ id: 'x', agent: 'a', prompt: '{{reply.y}} {{agent.c}}' }] })).toEqual([
      'steps.0.prompt: {{reply.y}}: no step "y" (steps: x)',
      'steps.0.prompt: {{agent.c}}: no agent role "c" (roles: a, b)',
    ]);
  });

  it('an unknown role', () => {
    expect(issues({ ...base, steps: [{ id: 'x', agent: 'c', prompt: 'p' }] })).toEqual(['steps.0.agent: "c" is not one of the workflow\'s agents (a, b)']);
  });

  it('a definition that is fine compiles, and so do the five built-ins', () => {
    expect(() => workflowMachine({ ...base, steps: [{ id: 'x', agent: 'a', prompt: '{{task}}' }] })).not.toThrow();
    for (const w of [handoff, collaborative, adversarial, troubleshoot, handshake]) expect(() => workflowMachine(w.definition)).not.toThrow();
  });
});

describe('workflow machine: nested loops', () => {
  it('a loop inside another starts its rounds over on each pass of the outer one', async () => {
    const m = workflowMachine({
      name: 'nested',
      agents: ['a'],
      steps: [
        { id: 'plan', agent: 'a', prompt: 'plan {{round}}' },
        { id: 'try', agent: 'a', prompt: 'try {{round}}' },
        { id: 'check', agent: 'a', prompt: 'check', until: { contains: 'PASS' }, loop: { back: 'try', max: 1 } },
        { id: 'review', agent: 'a', prompt: 'review', loop: { back: 'plan', max: 1 } },
      ],
    });
    const t = start(m, { a: 'claude' });
    // Outer pass 1: the inner loop runs to its limit (2 tries); outer pass 2: again 2 tries, not 1.
    await t.reply('p', 't', 'no', 't', 'no', 'r', 'p', 't', 'no', 't', 'no', 'r');
    expect(t.snap().status).toBe('done');
    expect(t.sequence()).toEqual([
      'plan:claude:1',
      'try:claude:1',
      'check:claude:1',
      'try:claude:2',
      'check:claude:2',
      'review:claude:1',
      'plan:claude:2',
      'try:claude:1',
      'check:claude:1',
      'try:claude:2',
      'check:claude:2',
      'review:claude:2',
    ]);
    expect(t.snap().context.outcome).toBe('the loop plan..review reached its limit of 1 rounds back');
  });
});
