// Workflow tasks in the registry: the reducer steps of task-workflow, task-snapshot and task-status, and
// a snapshot written before workflows existed still reads.
import { describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/sessions/events.js';
import { applyEvent, applyEvents, emptyRegistry, registrySchema } from '../../src/sessions/schema.js';
import { isJobTask, taskView, turnJobId } from '../../src/workflows/task-view.js';

const ts = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T10:00:05.000Z';
const created: JournalEvent[] = [{ ts, type: 'task-created', taskId: 't-1', workflow: 'collaborative' }];
const workflow: JournalEvent = {
  ts,
  type: 'task-workflow',
  taskId: 't-1',
  workflow: 'collaborative',
  source: 'built-in',
  definition: { name: 'collaborative' },
  text: 'design it',
  roles: { a: 'alpha', b: 'beta' },
  detached: true,
};

describe('workflow tasks in the registry', () => {
  it('records the workflow once; a second one for the same task is refused', () => {
    const d = applyEvents(emptyRegistry(), [...created, workflow]);
    expect(d.tasks['t-1']).toMatchObject({
      workflow: 'collaborative',
      source: 'built-in',
      text: 'design it',
      roles: { a: 'alpha', b: 'beta' },
      detached: true,
      status: 'created',
    });
    expect(() => applyEvent(d, { ...workflow, ts: later })).toThrow(/task "t-1" already runs workflow collaborative/);
    expect(() => applyEvent(emptyRegistry(), workflow)).toThrow(/unknown task "t-1"/);
  });

  it('keeps the latest snapshot, and the latest one taken while the machine ran for a resume after a failure', () => {
    let d = applyEvents(emptyRegistry(), [...created, workflow]);
    const running = { status: 'active', value: { s_critique: 'working' }, context: { seq: 2 } };
    const failed = { status: 'done', value: 'failed', context: { seq: 2 } };
    d = applyEvent(d, { ts, type: 'task-snapshot', taskId: 't-1', snapshot: running });
    expect(d.tasks['t-1']!.snapshot).toEqual(running);
    expect(d.tasks['t-1']!.resumable).toEqual(running);
    d = applyEvent(d, { ts: later, type: 'task-snapshot', taskId: 't-1', snapshot: failed });
    expect(d.tasks['t-1']!.snapshot).toEqual(failed);
    expect(d.tasks['t-1']!.resumable).toEqual(running);
    expect(d.tasks['t-1']!.updated).toBe(later);
  });

  it('task-status keeps its reason, step, agent, final and outcome, and a history', () => {
    let d = applyEvents(emptyRegistry(), [...created, workflow]);
    d = applyEvent(d, { ts, type: 'task-status', taskId: 't-1', status: 'running', reason: 'turn 1: propose by alpha', step: 'propose', agent: 'alpha' });
    d = applyEvent(d, {
      ts: later,
      type: 'task-status',
      taskId: 't-1',
      status: 'done',
      reason: 'every step done',
      step: null,
      agent: null,
      final: '.jaggers/handover/turn_6_aa.md',
      outcome: null,
    });
    expect(d.tasks['t-1']).toMatchObject({ status: 'done', reason: 'every step done', step: null, agent: null, final: '.jaggers/handover/turn_6_aa.md' });
    expect(d.tasks['t-1']!.history.map((h) => h.status)).toEqual(['running', 'done']);
    // A bare task-status (as `up` and older journals write) changes the status only.
    const bare = applyEvent(d, { ts: later, type: 'task-status', taskId: 't-1', status: 'closed' });
    expect(bare.tasks['t-1']).toMatchObject({ status: 'closed', final: '.jaggers/handover/turn_6_aa.md' });
  });

  it('a snapshot from before workflows parses, its tasks get empty workflow fields', () => {
    const old = {
      version: 1,
      journal: { bytes: 0, lines: 0 },
      terminals: {},
      tasks: { A: { id: 'A', workflow: 'up', status: 'created', created: ts, agents: {} } },
    };
    const d = registrySchema.parse(old);
    expect(d.tasks.A).toMatchObject({ definition: null, snapshot: null, roles: {}, detached: false, history: [] });
  });

  it('the job of a turn is named by the task, the turn and the try', () => {
    expect(turnJobId('t-1', 2, 1)).toMatch(/^j-[0-9a-f]{12}$/);
    expect(turnJobId('t-1', 2, 1)).toBe(turnJobId('t-1', 2, 1));
    expect(new Set([turnJobId('t-1', 2, 1), turnJobId('t-1', 2, 2), turnJobId('t-1', 3, 1), turnJobId('t-2', 2, 1)]).size).toBe(4);
  });

  describe('a task no workflow runs (a handoff, the demo, a job) is what its work items say', () => {
    const item = (jobId: string, task: string | null, work: 'handoff' | 'job'): JournalEvent => ({
      ts,
      type: 'job-created',
      jobId,
      name: null,
      target: 'coder',
      kind: 'agent',
      terminalId: 'jg-1',
      from: null,
      fromAgent: null,
      prompt: `.jaggers/jobs/${jobId}.md`,
      bytes: 2,
      timeoutMs: null,
      keep: false,
      ...(task ? { task, workflow: 'handoff' } : {}),
      work,
    });
    const state = (jobId: string, s: 'running' | 'done' | 'failed', more: Record<string, unknown> = {}): JournalEvent =>
      ({ ts: later, type: 'job-state', jobId, state: s, reason: s === 'done' ? 'the agent finished its turn' : s, ...more }) as JournalEvent;
    const handoff = (): JournalEvent[] => [
      { ts, type: 'task-created', taskId: 't-2', workflow: 'handoff' },
      item('j-00000001', 't-2', 'handoff'),
      state('j-00000001', 'running', { agent: 'coder', artifact: '.jaggers/handover/turn_1_a.md', turn: 1 }),
    ];

    it('running while an item runs; its turns with prompt and reply; done with the reply as its final file', () => {
      let d = applyEvents(emptyRegistry(), handoff());
      let v = taskView(d.tasks['t-2']!, d, false);
      expect(v).toMatchObject({ status: 'running', seq: 1, agent: 'coder', reason: 'handoff j-00000001 to coder: running' });
      expect(v.turns).toMatchObject([
        { seq: 1, step: 'handoff', agent: 'coder', job: 'j-00000001', state: 'running', prompt: '.jaggers/handover/turn_1_a.md', reply: null },
      ]);
      d = applyEvent(d, state('j-00000001', 'done', { reply: '.jaggers/handover/turn_2_b.md' }));
      v = taskView(d.tasks['t-2']!, d, false);
      expect(v).toMatchObject({ status: 'done', reason: 'the agent finished its turn', final: '.jaggers/handover/turn_2_b.md', seq: 1 });
      expect(v.turns[0]).toMatchObject({ state: 'done', reply: '.jaggers/handover/turn_2_b.md' });
      // The end is on the task itself: once the item is pruned from the snapshot, the reply is still found.
      expect(d.tasks['t-2']).toMatchObject({ status: 'done', final: '.jaggers/handover/turn_2_b.md', agent: 'coder' });
      const pruned = { ...d, jobs: {} };
      expect(taskView(pruned.tasks['t-2']!, pruned, false)).toMatchObject({ status: 'done', final: '.jaggers/handover/turn_2_b.md' });
    });

    it('a failed item fails the task and keeps the last reply; a workflow task is left to its machine', () => {
      let d = applyEvents(emptyRegistry(), handoff());
      d = applyEvent(d, state('j-00000001', 'failed'));
      expect(d.tasks['t-2']).toMatchObject({ status: 'failed', reason: 'failed', final: null });
      let w = applyEvents(emptyRegistry(), [...created, workflow, item('j-00000002', 't-1', 'handoff')]);
      w = applyEvent(w, state('j-00000002', 'done', { reply: 'r.md' }));
      expect(w.tasks['t-1']).toMatchObject({ status: 'created', final: null });
    });

    it("a job's own task (its handover files under its id) is a job, not a task", () => {
      let d = applyEvents(emptyRegistry(), [item('j-00000003', null, 'job'), { ts, type: 'task-created', taskId: 'j-00000003', workflow: 'job' }]);
      d = applyEvent(d, state('j-00000003', 'done', { reply: 'reply.md' }));
      expect(isJobTask(d.tasks['j-00000003']!)).toBe(true);
      expect(isJobTask({ id: 't-2', workflow: 'handoff' })).toBe(false);
      expect(taskView(d.tasks['j-00000003']!, d, false)).toMatchObject({ status: 'done', final: 'reply.md', seq: 1 });
    });
  });
});
