// The scheduler of flows (src/flows/scheduler.ts) on a temp folder of flow files, an in-memory registry
// and fake jobs and tasks: a tick creates one run (a job of kind `flow`), with its id recorded before
// it is created; a tick while that run still goes is skipped; a run recorded and never created, or a
// tick missed while no supervisor ran, is made up on start. Cron ticks on vitest's fake timers.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StreamEvent } from '../../src/api/types.js';
import type { JaggersError } from '../../src/errors.js';
import { Flows, readFlowState, runId } from '../../src/flows/scheduler.js';
import { parseFlowFile } from '../../src/flows/flow.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeStore, jobEvent, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-flows-');
const running: Flows[] = [];
afterEach(() => {
  for (const f of running.splice(0)) f.stop();
  vi.useRealTimers();
});

const flowText = (schedule: string, target = 'agent: coder') => `---\nschedule: "${schedule}"\n${target}\ntimeout: 120\n---\nReview the commits of the day.\n`;

async function setup(files: Record<string, string>, state?: unknown) {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  await mkdir(path.join(dirs.jaggersDir, 'flows'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dirs.jaggersDir, 'flows', `${name}.md`), text);
  if (state) await writeFile(path.join(dirs.jaggersDir, 'flow-state.json'), JSON.stringify(state));
  const store = new FakeStore();
  store.seed(...terminalEvents('jg-c0de', 'coder'));
  const hub = new EventHub();
  const notices: StreamEvent[] = [];
  hub.subscribe((e) => e.type === 'notice' && notices.push(e));
  const created: { id: string; target: string; text: string; name: string; timeout?: number; work: 'flow' }[] = [];
  /** What flow-state.json said when each run was created. */
  const stateAtCreate: string[] = [];
  const tasksCreated: { id: string; workflow: string }[] = [];
  const waiters: (() => void)[] = [];
  /** Resolves once `n` runs were created. */
  const createdCount = async (n: number) => {
    while (created.length < n) await new Promise<void>((r) => waiters.push(r));
  };
  const skipped = () => notices.filter((x) => x.data.kind === 'flow-skipped').length;
  /** Resolves once `n` ticks were skipped. */
  const skippedCount = async (n: number) => {
    while (skipped() < n)
      await new Promise<void>((r) => {
        const off = hub.subscribe(() => (off(), r()));
      });
  };
  const flows = new Flows({
    store,
    hub,
    log: recordingLog(),
    dirs,
    project: async () => null,
    profileNames: async () => ['claude'],
    workflowNames: async () => ['pair'],
    jobs: {
      create: async (req) => {
        const st = await readFlowState(dirs.jaggersDir);
        stateAtCreate.push(Object.values(st)[0]?.last?.id ?? 'none');
        created.push(req);
        store.seed(jobEvent(req.id, { target: req.target, name: req.name, work: req.work }));
        for (const w of waiters.splice(0)) w();
        return null;
      },
    },
    tasks: {
      create: async (req) => {
        tasksCreated.push(req);
        store.seed({ type: 'task-created', taskId: req.id, workflow: req.workflow });
        return null;
      },
    },
    stopping: new AbortController().signal,
  });
  running.push(flows);
  const end = (id: string) => store.seed({ type: 'job-state', jobId: id, state: 'done', reason: 'finished' });
  return { root, dirs, store, flows, created, tasksCreated, stateAtCreate, notices, end, createdCount, skippedCount };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: JaggersError) => `${e.code}: ${e.message}`,
  );

describe('the flow scheduler', () => {
  it('a run creates one job of kind `flow`, its id recorded first; a run while it goes is skipped and said so', async () => {
    const h = await setup({ nightly: flowText('0 3 * * *') });
    await h.flows.start();
    expect(h.created).toEqual([]);
    const v = await h.flows.runNow('nightly');
    expect(h.created).toHaveLength(1);
    const [job] = h.created;
    expect(job).toMatchObject({ target: 'coder', text: 'Review the commits of the day.', name: 'flow nightly', work: 'flow', timeout: 120 });
    expect(job!.id).toMatch(/^j-[0-9a-f]{12}$/);
    expect(h.stateAtCreate).toEqual([job!.id]);
    expect(h.store.data.jobs[job!.id]).toMatchObject({ work: 'flow', state: 'queued' });
    expect(v).toMatchObject({ name: 'nightly', runs: 1, last: { kind: 'job', id: job!.id, how: 'manual', state: 'queued' }, problem: null });
    expect(v.next).not.toBeNull();

    expect(await refusal(h.flows.runNow('nightly'))).toMatch(new RegExp(`^E_FLOW_BUSY: flow nightly: its run ${job!.id} \\(.*\\) is still going$`));
    expect(h.created).toHaveLength(1);
    expect(h.notices.map((n) => n.data)).toContainEqual(expect.objectContaining({ kind: 'flow-skipped', flow: 'nightly', run: job!.id }));

    h.end(job!.id);
    await h.flows.runNow('nightly');
    expect(h.created).toHaveLength(2);
    expect(h.created[1]!.id).not.toBe(job!.id);
  });

  it('each tick of its schedule runs it once, and skips while the run goes (fake timers)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(new Date('2026-11-25T10:00:00.500Z'));
    const h = await setup({ often: flowText('* * * * * *') });
    await h.flows.start();
    expect(h.created).toEqual([]);
    await vi.advanceTimersByTimeAsync(600);
    await h.createdCount(1);
    await vi.advanceTimersByTimeAsync(1000);
    await h.skippedCount(1);
    await vi.advanceTimersByTimeAsync(1000);
    await h.skippedCount(2);
    expect(h.created).toHaveLength(1);
    h.end(h.created[0]!.id);
    await vi.advanceTimersByTimeAsync(1000);
    await h.createdCount(2);
    expect((await readFlowState(h.dirs.jaggersDir)).often).toMatchObject({ runs: 2, last: { how: 'schedule', id: h.created[1]!.id } });
    expect(h.created[0]!.id).not.toBe(h.created[1]!.id);
  });

  it('on start: a run recorded and never created is created with that same id; a missed tick runs once', async () => {
    const file = '/x/.jaggers/flows/nightly.md';
    const def = parseFlowFile(flowText('0 3 * * *'), file);
    const tick = '2026-11-24T03:00:00.000Z';
    const last = { ...runId(def, `${tick}\0schedule`), tick, how: 'schedule' };
    const h = await setup({ nightly: flowText('0 3 * * *') }, { nightly: { seen: '2026-11-20T00:00:00.000Z', last, runs: 3 } });
    await h.flows.start();
    expect(h.created.map((c) => c.id)).toEqual([last.id]);

    // Down for days, never run: one run for all the ticks missed.
    const g = await setup({ nightly: flowText('0 3 * * *') }, { nightly: { seen: '2026-11-01T00:00:00.000Z', last: null, runs: 0 } });
    await g.flows.start();
    await g.flows.list();
    expect(g.created).toHaveLength(1);
    expect((await readFlowState(g.dirs.jaggersDir)).nightly).toMatchObject({ runs: 1, last: { how: 'missed' } });
  });

  it('a workflow flow runs as a detached task; a flow that names nothing known is listed with its problem', async () => {
    const h = await setup({ review: flowText('0 3 * * *', 'workflow: pair\nagents: [coder, claude]'), broken: flowText('0 3 * * *', 'agent: nobody') });
    await h.flows.start();
    const v = await h.flows.runNow('review');
    expect(h.tasksCreated).toEqual([{ id: v.last!.id, workflow: 'pair', text: 'Review the commits of the day.', agents: ['coder', 'claude'], detached: true }]);
    expect(v.last!.id).toMatch(/^flow-review-[0-9a-f]{8}$/);
    expect(await refusal(h.flows.runNow('broken'))).toMatch(/^E_FLOW_INVALID: .*broken\.md: field `agent`: unknown agent "nobody"; agents are coder$/);
    expect(await refusal(h.flows.runNow('other'))).toBe(`E_FLOW_UNKNOWN: no flow "other" in ${path.join(h.dirs.jaggersDir, 'flows')}; flows: review`);
    expect((await h.flows.list()).map((f) => [f.name, f.problem === null])).toEqual([
      ['broken', false],
      ['review', true],
    ]);
    expect(JSON.parse(await readFile(path.join(h.dirs.jaggersDir, 'flow-state.json'), 'utf8'))).toHaveProperty('review');
  });
});
