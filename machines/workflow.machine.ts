// The shared shape of every workflow: one state per step, each running one turn (the `turn` actor the
// supervisor provides: a job in the agent's pinned pane, or a headless run), then following the step's
// loop and exit condition. Built-ins (machines/workflows/) and a project's YAML files compile to it.
// Pure: the turn actor is handed in, time is the actor system's clock (SimulatedClock in tests).
import { assign, fromPromise, setup, type SnapshotFrom } from 'xstate';
import { conditionHolds, loopAround, renderTemplate, workflowSchema, type StepDef, type WorkflowDef, type WorkflowInput } from '../src/workflows/schema.js';

/** What the supervisor's turn actor gets: the rendered prompt and where it goes. */
export interface TurnInput {
  taskId: string;
  workflow: string;
  /** The task's turn number (1, 2, ...): with the task id it names the turn's job, so a restart never runs it twice. */
  seq: number;
  step: string;
  role: string;
  agent: string;
  prompt: string;
  mode: 'pane' | 'headless';
  timeoutMs: number;
}

export interface TurnOutput {
  /** The handover file of the turn and its reply's, relative to the project. */
  prompt: string;
  reply: string;
  text: string;
  job: string | null;
}

export interface TurnRecord {
  seq: number;
  step: string;
  agent: string;
  round: number;
  prompt: string | null;
  reply: string | null;
  job: string | null;
}

export interface WorkflowContext {
  taskId: string;
  task: string;
  workflow: string;
  roles: Record<string, string>;
  seq: number;
  /** Times each loop went back, by the id of the step that closes it. */
  rounds: Record<string, number>;
  /** The latest reply of each step that ran, and the conditions (by the index of their step) it passed. */
  latest: Record<string, { reply: string; agent: string; seq: number; passes: number[] }>;
  turns: TurnRecord[];
  /** What the agent asks while it waits for a person. */
  asking: string | null;
  error: string | null;
  outcome: string | null;
}

export interface WorkflowRunInput {
  taskId: string;
  task: string;
  roles: Record<string, string>;
}

export type WorkflowEvent = { type: 'CANCEL'; by: string } | { type: 'WAITING'; what: string } | { type: 'WORKING' };

const stateOf = (s: StepDef) => `s_${s.id}`;

/** Validate a definition (throws a ZodError) and build its machine. */
export function workflowMachine(input: WorkflowInput | WorkflowDef) {
  const def = workflowSchema.parse(input);
  const steps = def.steps;
  const timeoutOf = (s: StepDef) => Math.round((s.timeout ?? def.timeout) * 1000);
  // Which conditions a step's reply is tested against: those whose `of` names it.
  const testedBy = (id: string) => steps.flatMap((s, i) => (s.until && (s.until.of ?? [s.id]).includes(id) ? [{ i, cond: s.until }] : []));

  const roundOf = (ctx: WorkflowContext, i: number) => {
    const loop = loopAround(steps, i);
    return loop ? (ctx.rounds[steps[loop.end]!.id] ?? 0) + 1 : 1;
  };

  function turnInput(ctx: WorkflowContext, i: number): TurnInput {
    const s = steps[i]!;
    const agent = ctx.roles[s.agent] ?? s.agent;
    const reads = s.reads
      .filter((r) => ctx.latest[r])
      .map((r) => `- ${r} (by ${ctx.latest[r]!.agent}): ${ctx.latest[r]!.reply}`)
      .join('\n');
    const loop = loopAround(steps, i);
    const prompt = renderTemplate(s.prompt, {
      task: ctx.task,
      taskId: ctx.taskId,
      workflow: ctx.workflow,
      agent,
      step: s.id,
      round: roundOf(ctx, i),
      maxRounds: loop ? steps[loop.end]!.loop!.max + 1 : null,
      reads: reads || '(nothing yet)',
      replies: Object.fromEntries(Object.entries(ctx.latest).map(([k, v]) => [k, v.reply])),
      roles: ctx.roles,
    });
    return { taskId: ctx.taskId, workflow: ctx.workflow, seq: ctx.seq, step: s.id, role: s.agent, agent, prompt, mode: s.mode, timeoutMs: timeoutOf(s) };
  }

  const record = (i: number) =>
    assign(({ context, event }: { context: WorkflowContext; event: unknown }) => {
      const out = (event as { output: TurnOutput }).output;
      const s = steps[i]!;
      const agent = context.roles[s.agent] ?? s.agent;
      const passes = testedBy(s.id)
        .filter((t) => conditionHolds(t.cond, out.text))
        .map((t) => t.i);
      const turns = context.turns.map((t) => (t.seq === context.seq ? { ...t, prompt: out.prompt, reply: out.reply, job: out.job } : t));
      return { latest: { ...context.latest, [s.id]: { reply: out.reply, agent, seq: context.seq, passes } }, turns, asking: null };
    });

  /** After step i: the condition of its `until` holds for the latest replies of every step it names. */
  const untilHolds = (i: number) => (ctx: WorkflowContext, out: TurnOutput) => {
    const s = steps[i]!;
    if (!s.until) return false;
    return (s.until.of ?? [s.id]).every((id) => (id === s.id ? conditionHolds(s.until!, out.text) : (ctx.latest[id]?.passes.includes(i) ?? false)));
  };

  const next = (i: number) => (i + 1 < steps.length ? `#wf.${stateOf(steps[i + 1]!)}` : '#wf.done');

  const stepStates = Object.fromEntries(
    steps.map((s, i) => {
      const loop = loopAround(steps, i);
      const afterLoop = loop ? next(loop.end) : next(i);
      const holds = untilHolds(i);
      const onDone = [
        {
          guard: ({ context, event }: { context: WorkflowContext; event: unknown }) => holds(context, (event as { output: TurnOutput }).output),
          target: afterLoop,
          reenter: true,
          actions: [assign(({ context }: { context: WorkflowContext }) => ({ outcome: `${s.id}: ${describe(s)} (round ${roundOf(context, i)})` })), record(i)],
        },
      ];
      const transitions: unknown[] = [...onDone];
      if (s.loop) {
        const back = steps.findIndex((x) => x.id === s.loop!.back);
        transitions.push({
          guard: ({ context }: { context: WorkflowContext }) => (context.rounds[s.id] ?? 0) < s.loop!.max,
          target: `#wf.${stateOf(steps[back]!)}`,
          reenter: true,
          actions: [
            record(i),
            assign({
              rounds: ({ context }: { context: WorkflowContext }) => {
                // Loops inside this one start their rounds over on each pass of it.
                const rounds = { ...context.rounds, [s.id]: (context.rounds[s.id] ?? 0) + 1 };
                for (const inner of steps.slice(back, i)) if (inner.loop) delete rounds[inner.id];
                return rounds;
              },
            }),
          ],
        });
        const limit = `the loop ${s.loop.back}..${s.id} reached its limit of ${s.loop.max} rounds back${s.until || inLoopUntil(steps, i) ? ' without its exit condition' : ''}`;
        transitions.push(
          s.loop.onLimit === 'fail'
            ? { target: '#wf.failed', actions: [record(i), assign({ error: limit })] }
            : { target: next(i), reenter: true, actions: [record(i), assign({ outcome: limit })] },
        );
      } else {
        transitions.push({ target: next(i), reenter: true, actions: [record(i)] });
      }
      const timeoutMs = timeoutOf(s);
      return [
        stateOf(s),
        {
          initial: 'working',
          entry: assign(({ context }: { context: WorkflowContext }) => ({
            seq: context.seq + 1,
            turns: [
              ...context.turns,
              { seq: context.seq + 1, step: s.id, agent: context.roles[s.agent] ?? s.agent, round: roundOf(context, i), prompt: null, reply: null, job: null },
            ],
            asking: null,
          })),
          invoke: {
            src: 'turn',
            input: ({ context }: { context: WorkflowContext }) => turnInput(context, i),
            onDone: transitions,
            onError: {
              target: '#wf.failed',
              actions: assign(({ context, event }: { context: WorkflowContext; event: unknown }) => ({
                error: `turn ${context.seq} (${s.id}, ${context.roles[s.agent] ?? s.agent}) ${turnError(errorText((event as { error: unknown }).error))}`,
              })),
            },
          },
          after: {
            [timeoutMs]: {
              target: '#wf.failed',
              actions: assign(({ context }: { context: WorkflowContext }) => ({
                error: `turn ${context.seq} (${s.id}, ${context.roles[s.agent] ?? s.agent}) did not finish within ${timeoutMs / 1000} s (the step's timeout)`,
              })),
            },
          },
          states: {
            working: { on: { WAITING: { target: 'waiting', actions: assign({ asking: ({ event }) => (event as unknown as { what: string }).what }) } } },
            waiting: { on: { WORKING: { target: 'working', actions: assign({ asking: null }) } } },
          },
        },
      ];
    }),
  );

  return setup({
    types: {
      context: {} as WorkflowContext,
      input: {} as WorkflowRunInput,
      events: {} as WorkflowEvent,
    },
    actors: {
      turn: fromPromise<TurnOutput, TurnInput>(() => Promise.reject(new Error('no turn actor was provided to the workflow machine'))),
    },
  }).createMachine({
    id: 'wf',
    initial: stateOf(steps[0]!),
    context: ({ input }) => ({
      taskId: input.taskId,
      task: input.task,
      workflow: def.name,
      roles: input.roles,
      seq: 0,
      rounds: {},
      latest: {},
      turns: [],
      asking: null,
      error: null,
      outcome: null,
    }),
    on: { CANCEL: { target: '.cancelled', actions: assign({ error: ({ event }) => `cancelled by ${event.by}` }) } },
    states: {
      // States built from data: xstate's config types cannot follow them.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      ...(stepStates as any),
      done: { type: 'final' },
      failed: { type: 'final' },
      cancelled: { type: 'final' },
    },
  });
}

function describe(s: StepDef): string {
  const c = s.until!;
  const what = c.contains !== undefined ? `contains ${JSON.stringify(c.contains)}` : `matches /${c.matches}/`;
  if (!c.of || (c.of.length === 1 && c.of[0] === s.id)) return `its reply ${what}`;
  if (c.of.length === 1) return `the reply of ${c.of[0]} ${what}`;
  return `the replies of ${c.of.join(' and ')} each ${what.replace('contains', 'contain').replace('matches', 'match')}`;
}

/** Whether a step of the loop that `end` closes (not of a loop inside it) has an exit condition. */
function inLoopUntil(steps: readonly StepDef[], end: number): boolean {
  return steps.some((s, j) => s.until !== undefined && loopAround(steps, j)?.end === end);
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));
/** A turn actor that kept the step's deadline itself (after a restore) says so as the machine's timer would. */
const turnError = (m: string) => (m.startsWith('did not finish within ') ? m : `failed: ${m}`);

export type WorkflowMachine = ReturnType<typeof workflowMachine>;
export type WorkflowSnapshot = SnapshotFrom<WorkflowMachine>;

export type WorkflowStatus = 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

/** The task's status and current step, read off a snapshot. */
export function workflowStatus(snap: { value: unknown; status: string; context: WorkflowContext }): {
  status: WorkflowStatus;
  step: string | null;
  agent: string | null;
  seq: number;
} {
  const v = snap.value;
  if (typeof v === 'string' && (v === 'done' || v === 'failed' || v === 'cancelled')) return { status: v, step: null, agent: null, seq: snap.context.seq };
  const [state, sub] = typeof v === 'string' ? [v, 'working'] : (Object.entries(v as Record<string, string>)[0] ?? ['', 'working']);
  const step = state.replace(/^s_/, '');
  const last = snap.context.turns.at(-1);
  return { status: sub === 'waiting' ? 'waiting' : 'running', step, agent: last?.agent ?? null, seq: snap.context.seq };
}

/** The definition a machine was made from is kept beside it for listings: the built-ins export both. */
export interface BuiltinWorkflow {
  definition: WorkflowInput;
}
