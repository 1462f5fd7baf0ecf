// Workflow tasks (src/workflows/tasks.ts) on fake ports: a fake Jobs that records turn jobs and finishes
// them, a fake launcher and table. A task runs its turns in order, each a job named by the task and
// the turn; a task restored after a restart finds a finished turn's job and does not run it again; an
// agent lost during a turn is restarted and the turn tried once more.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobResultView } from '../../src/api/types.js';
import { renderArtifact } from '../../src/handover/artifact.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { writeDurable } from '../../src/work/files.js';
import type { JobRequest } from '../../src/work/jobs.js';
import type { TerminalEntry } from '../../src/work/ports.js';
import { Tasks } from '../../src/workflows/tasks.js';
import { turnJobId } from '../../src/workflows/task-view.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-tasks-');

const PAIR = {
  name: 'pair',
  agents: ['writer', 'critic'],
  steps: [
    { id: 'draft', agent: 'writer', prompt: 'Draft: {{task}}' },
    { id: 'review', agent: 'critic', prompt: 'Review the draft.' },
  ],
};

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents('jg-a1', 'alpha', { cwd: root }), ...terminalEvents('jg-b2', 'beta', { cwd: root }));
  const hub = new EventHub();
  const agents = new FakeAgents();
  const created: JobRequest[] = [];
  let finishing = true;
  /** Finish a turn job: its reply file, its end in the registry, its `job` event (as the runner would). */
  const finish = async (id: string, text = `reply to ${id}`, o: { state?: 'done' | 'failed'; cause?: 'agent-lost' } = {}) => {
    const reply = `.jaggers/handover/${id}-reply.md`;
    const state = o.state ?? 'done';
    if (state === 'done') {
      const meta = { task: 't', workflow: 'pair', turn: 2, sourceAgent: 'a', sourceSession: null, targetAgent: 'user', targetSession: null, created: 'now' };
      await writeDurable(path.join(root, reply), renderArtifact(meta, `${text}\n`));
    }
    store.seed({
      type: 'job-state',
      jobId: id,
      state,
      reason: state === 'done' ? 'the agent finished its turn' : "the agent's pane died during its turn",
      ...(state === 'done' ? { reply, artifact: `.jaggers/handover/${id}.md` } : { code: 'E_PANE_GONE', cause: o.cause ?? 'agent-lost' }),
    });
    hub.publish('job', { id, state });
  };
  const jobs = {
    create: async (req: JobRequest) => {
      created.push(req);
      store.seed(
        jobEvent(req.id!, {
          target: req.target,
          terminalId: req.target,
          task: req.task ?? null,
          workflow: req.workflow!,
          work: 'turn',
          name: req.name ?? null,
        }),
      );
      hub.publish('job', { id: req.id, state: 'queued' });
      if (finishing) setImmediate(() => void finish(req.id!));
      return { ...store.data.jobs[req.id!]!, attach: null, waiting: null };
    },
    result: async (id: string): Promise<JobResultView> => {
      const j = store.data.jobs[id]!;
      return { job: { ...j, attach: null, waiting: null }, reply: `reply to ${id}`, artifact: j.reply };
    },
    cancel: async (id: string) => {
      store.seed({ type: 'job-state', jobId: id, state: 'cancelled', reason: 'cancelled' });
      hub.publish('job', { id, state: 'cancelled' });
      return { ...store.data.jobs[id]!, attach: null, waiting: null };
    },
  };
  const opened: string[] = [];
  const restarted: string[] = [];
  /** Each closing of a task's windows, with the task's status at that moment. */
  const closed: { task: string; status: string | undefined }[] = [];
  const launcher = {
    closeTask: async (task: string) => {
      closed.push({ task, status: store.data.tasks[task]?.status });
    },
    restart: async (e: TerminalEntry) => {
      restarted.push(e.pane.terminalId!);
      e.pane = { ...e.pane, dead: false, deadStatus: null };
    },
    openTaskWindow: async (terminalId: string, task: string) => {
      opened.push(terminalId);
      const t = store.data.terminals[terminalId]!;
      agents.add({ agent: t.agent, terminalId, task }, 'idle');
    },
  };
  /** Agents on other hosts (jaggers.json's `host`), by name. */
  const hosts: Record<string, string> = {};
  const make = () => {
    const stopping = new AbortController();
    const tasks = new Tasks({
      store,
      hub,
      log: recordingLog(),
      dirs,
      agents,
      jobs,
      launcher,
      waitFor: async () => {},
      untilEvent: (match, ms) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          const off = hub.subscribe((e) => match(e) && done());
          function done() {
            clearTimeout(timer);
            off();
            resolve();
          }
        }),
      project: async () => null,
      checkProfile: async (name) => {
        if (name !== 'fake') throw new Error(`unknown profile ${name}`);
      },
      profileNames: async () => ['fake'],
      hostOf: async (agent) => hosts[agent] ?? null,
      stopping: stopping.signal,
    });
    return { tasks, stopping };
  };
  /** Resolves when a turn job is created (the `n`-th one of all). */
  const nthJob = (n: number) =>
    new Promise<string>((resolve) => {
      if (created.length >= n) return resolve(created[n - 1]!.id!);
      const off = hub.subscribe(() => {
        if (created.length < n) return;
        off();
        resolve(created[n - 1]!.id!);
      });
    });
  const req = { id: 't-1', workflow: 'pair', text: 'a poem', roles: { writer: 'alpha', critic: 'beta' }, detached: true, definition: PAIR, source: 'built-in' };
  return { root, store, hub, agents, created, finish, opened, restarted, closed, make, nthJob, req, hosts, setFinishing: (v: boolean) => (finishing = v) };
}

describe('workflow tasks', () => {
  it("runs a task's turns in order, each a job in the task's own window of its agent", async () => {
    const h = await setup();
    const { tasks } = h.make();
    const v = await tasks.create(h.req);
    expect(v.id).toBe('t-1');
    const done = await tasks.wait('t-1', 60_000);
    expect(done).toMatchObject({ status: 'done', workflow: 'pair' });
    expect(h.created.map((r) => [r.id, r.work, r.task, r.name])).toEqual([
      [turnJobId('t-1', 1, 1), 'turn', 't-1', 't-1 turn 1: draft'],
      [turnJobId('t-1', 2, 1), 'turn', 't-1', 't-1 turn 2: review'],
    ]);
    expect(h.created[0]!.text).toBe('Draft: a poem');
    // Each agent got a terminal of its own for the task, opened for it, and the turn went there.
    const t = h.store.data.tasks['t-1']!;
    expect(Object.keys(t.agents)).toEqual(['alpha', 'beta']);
    const alpha = t.agents.alpha!.terminalId;
    expect(h.store.data.terminals[alpha]).toMatchObject({ agent: 'alpha', task: 't-1', profile: 'fake' });
    expect(h.opened).toEqual([alpha, t.agents.beta!.terminalId]);
    expect(h.created[0]!.target).toBe(alpha);
    expect(t.final).toBe(h.store.data.jobs[turnJobId('t-1', 2, 1)]!.reply);
    // Its windows closed once, as it ended and before its end was recorded (whoever waits finds them gone).
    expect(h.closed).toEqual([{ task: 't-1', status: 'running' }]);
    // A resent request changes nothing.
    await tasks.create(h.req);
    expect(h.created).toHaveLength(2);
  });

  it('a task restored after a restart finds the job of a turn that finished meanwhile and does not run it again', async () => {
    const h = await setup();
    h.setFinishing(false);
    const first = h.make();
    await first.tasks.create(h.req);
    const turn1 = await h.nthJob(1);
    await new Promise((r) => setImmediate(r));
    // The supervisor stops during turn 1; the turn's job ends while none runs.
    first.stopping.abort();
    first.tasks.stop();
    await h.finish(turn1);
    h.setFinishing(true);
    const second = h.make();
    await second.tasks.startAll();
    const done = await second.tasks.wait('t-1', 60_000);
    expect(done.status).toBe('done');
    expect(h.created.map((r) => r.id)).toEqual([turn1, turnJobId('t-1', 2, 1)]);
  });

  it('a turn whose job is still under way after a restart is followed, not made again', async () => {
    const h = await setup();
    h.setFinishing(false);
    const first = h.make();
    await first.tasks.create(h.req);
    const turn1 = await h.nthJob(1);
    await new Promise((r) => setImmediate(r));
    first.stopping.abort();
    first.tasks.stop();
    const second = h.make();
    await second.tasks.startAll();
    await new Promise((r) => setImmediate(r));
    expect(h.created).toHaveLength(1);
    h.setFinishing(true);
    await h.finish(turn1);
    expect((await second.tasks.wait('t-1', 60_000)).status).toBe('done');
    expect(h.created.map((r) => r.id)).toEqual([turn1, turnJobId('t-1', 2, 1)]);
  });

  it('an agent lost during a turn is restarted in its conversation and the turn tried once more', async () => {
    const h = await setup();
    h.setFinishing(false);
    const { tasks } = h.make();
    await tasks.create(h.req);
    const turn1 = await h.nthJob(1);
    const alpha = h.store.data.tasks['t-1']!.agents.alpha!.terminalId;
    h.agents.kill(alpha);
    h.setFinishing(true);
    await h.finish(turn1, '', { state: 'failed', cause: 'agent-lost' });
    expect((await tasks.wait('t-1', 60_000)).status).toBe('done');
    expect(h.restarted).toEqual([alpha]);
    expect(h.created.map((r) => r.id)).toEqual([turn1, turnJobId('t-1', 1, 2), turnJobId('t-1', 2, 1)]);
  });

  it('a turn that fails otherwise fails the task; a foreground task is left for `resume` after a restart', async () => {
    const h = await setup();
    h.setFinishing(false);
    const { tasks } = h.make();
    await tasks.create(h.req);
    const turn1 = await h.nthJob(1);
    h.store.seed({ type: 'job-state', jobId: turn1, state: 'failed', reason: 'handoff: coder never became ready', code: 'E_TIMEOUT' });
    h.hub.publish('job', { id: turn1, state: 'failed' });
    const failed = await tasks.wait('t-1', 60_000);
    expect(failed.status).toBe('failed');
    expect(h.closed.map((c) => c.task)).toEqual(['t-1']);
    expect(failed.reason).toMatch(new RegExp(`^turn 1 \\(draft, alpha\\) .*handoff: coder never became ready \\(job ${turn1}\\)`));
    expect(h.created).toHaveLength(1);

    const g = await setup();
    g.setFinishing(false);
    const one = g.make();
    await one.tasks.create({ ...g.req, detached: false });
    await g.nthJob(1);
    await new Promise((r) => setImmediate(r));
    one.stopping.abort();
    one.tasks.stop();
    await g.make().tasks.startAll();
    expect(g.store.data.tasks['t-1']).toMatchObject({ status: 'interrupted' });
    expect(g.store.data.tasks['t-1']!.reason).toBe('the supervisor restarted during turn 1; `jaggers resume t-1` continues it');
  });

  it('a task resumed the moment it fails (its machine not let go yet): its failed turn is tried once more, a new job', async () => {
    const h = await setup();
    h.setFinishing(false);
    const { tasks } = h.make();
    await tasks.create(h.req);
    const turn1 = await h.nthJob(1);
    const resumed = new Promise<unknown>((resolve) => {
      const off = h.hub.subscribe((e) => {
        if (e.type !== 'task' || e.data.status !== 'failed') return;
        off();
        resolve(tasks.resume('t-1'));
      });
    });
    h.store.seed({ type: 'job-state', jobId: turn1, state: 'failed', reason: 'the agent fell over', code: 'E_TIMEOUT' });
    h.hub.publish('job', { id: turn1, state: 'failed' });
    await resumed;
    const turn1again = await h.nthJob(2);
    expect(turn1again).not.toBe(turn1);
    expect(h.created.map((j) => j.id)).toEqual([turn1, turn1again]);
    tasks.stop();
  });

  it('refuses a role without an agent and an unknown agent', async () => {
    const h = await setup();
    const { tasks } = h.make();
    await expect(tasks.create({ ...h.req, roles: { writer: 'alpha' } })).rejects.toMatchObject({
      code: 'E_USAGE',
      message: 'run: no agent for the role "critic" of workflow pair (roles: writer, critic)',
    });
    await expect(tasks.create({ ...h.req, roles: { writer: 'alpha', critic: 'nobody' } })).rejects.toMatchObject({
      code: 'E_AGENT_UNKNOWN',
      message: 'run: unknown agent "nobody": agents are alpha, beta',
    });
    expect(h.created).toEqual([]);
    const jobs: JobRecord[] = Object.values(h.store.data.jobs);
    expect(jobs).toEqual([]);
  });
});

/** Three turns across two hosts: alpha here drafts, far (on box) reviews the draft, alpha revises from both. */
const ACROSS = {
  name: 'across',
  agents: ['writer', 'critic'],
  steps: [
    { id: 'draft', agent: 'writer', prompt: 'Draft: {{task}}' },
    { id: 'review', agent: 'critic', reads: ['draft'], prompt: 'Review:\n{{reads}}' },
    { id: 'revise', agent: 'writer', reads: ['draft', 'review'], prompt: 'Revise:\n{{reads}}' },
  ],
};

describe('a workflow whose roles are on two hosts', () => {
  const across = (h: Awaited<ReturnType<typeof setup>>) => {
    h.hosts.far = 'box';
    return { ...h.req, workflow: 'across', definition: ACROSS, roles: { writer: 'alpha', critic: 'far' } };
  };

  it("runs the remote role's turn as an item for the agent there, carrying the reply files its prompt names; the next turn here reads its reply", async () => {
    const h = await setup();
    const { tasks } = h.make();
    await tasks.create(across(h));
    const done = await tasks.wait('t-1', 60_000);
    expect(done.status).toBe('done');
    const [draft, review, revise] = [1, 2, 3].map((n) => turnJobId('t-1', n, 1));
    const draftReply = h.store.data.jobs[draft!]!.reply!;
    const reviewReply = h.store.data.jobs[review!]!.reply!;
    // No window here for far: only alpha's task window was opened.
    const t = h.store.data.tasks['t-1']!;
    expect(Object.keys(t.agents)).toEqual(['alpha']);
    expect(h.opened).toEqual([t.agents.alpha!.terminalId]);
    // The remote turn names the agent (the job forwards it to its host) and carries the draft's reply file.
    expect(h.created.map((r) => [r.id, r.target, r.carry])).toEqual([
      [draft, t.agents.alpha!.terminalId, undefined],
      [review, 'far', [draftReply]],
      [revise, t.agents.alpha!.terminalId, undefined],
    ]);
    expect(h.created[1]!.text).toBe(`Review:\n- draft (by alpha): ${draftReply}`);
    // The turn after it, here, reads far's reply (copied here) by its file.
    expect(h.created[2]!.text).toBe(`Revise:\n- draft (by alpha): ${draftReply}\n- review (by far): ${reviewReply}`);
    expect(t.final).toBe(h.store.data.jobs[revise!]!.reply);
  });

  it('a remote turn under way after a restart is followed, neither made again nor opened here', async () => {
    const h = await setup();
    h.setFinishing(false);
    const first = h.make();
    await first.tasks.create(across(h));
    await h.finish(await h.nthJob(1));
    const review = await h.nthJob(2);
    await new Promise((r) => setImmediate(r));
    first.stopping.abort();
    first.tasks.stop();
    const opened = h.opened.length;
    const second = h.make();
    await second.tasks.startAll();
    await new Promise((r) => setImmediate(r));
    expect(h.created.map((r) => r.id)).toEqual([turnJobId('t-1', 1, 1), review]);
    h.setFinishing(true);
    await h.finish(review);
    expect((await second.tasks.wait('t-1', 60_000)).status).toBe('done');
    expect(h.created.map((r) => r.id)).toEqual([1, 2, 3].map((n) => turnJobId('t-1', n, 1)));
    // Its window here (alpha's) was alive: nothing was opened or restarted for the remote turn.
    expect(h.opened).toHaveLength(opened);
    expect(h.restarted).toEqual([]);
  });

  it('a headless step of a role on another host is an item for the agent there, headless (run in its conversation there)', async () => {
    const h = await setup();
    const { tasks } = h.make();
    const req = across(h);
    const def = { ...ACROSS, steps: [ACROSS.steps[0]!, { ...ACROSS.steps[1]!, mode: 'headless' }] };
    await tasks.create({ ...req, definition: def });
    expect((await tasks.wait('t-1', 60_000)).status).toBe('done');
    expect(h.created.map((r) => [r.target, r.headless ?? false])).toEqual([
      [h.store.data.tasks['t-1']!.agents.alpha!.terminalId, false],
      ['far', true],
    ]);
  });
});
