// A fallback that names a profile (docs/limits.md): the limited agent's waiting jobs go to idle agents of
// that profile (one each, with nothing in their queues), and the rest become workers' jobs of the profile,
// whose windows the workers' pump opens (src/work/workers.ts, through the launcher's port); every move is
// journaled with where it went and why, and the job keeps whoever asked for it.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProjectFile } from '../../../src/project/project-file.js';
import { moveToFallback } from '../../../src/work/fallback.js';
import { WorkJournal } from '../../../src/work/journal.js';
import { Workers } from '../../../src/work/workers.js';
import { tempDirs } from '../../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, recordingLog, terminalEvents, testProfile } from '../../helpers/work-fakes.js';

const temp = tempDirs('jaggers-fallback-profile-');
const CODER = 'jg-c0de';
const LEAD = 'jg-1ead';
const SPARE1 = 'jg-5a1e';
const SPARE2 = 'jg-5a2e';
const WHY = 'hit a usage limit that resets at 2026-11-26T14:30:00.000Z';

async function setup(spares: { terminalId: string; status: string }[]) {
  const root = await temp();
  const store = new FakeStore();
  store.seed(...terminalEvents(CODER, 'coder'), ...terminalEvents(LEAD, 'lead'));
  const agents = new FakeAgents();
  agents.add({ agent: 'coder', terminalId: CODER }, 'limited');
  agents.add({ agent: 'lead', terminalId: LEAD }, 'idle');
  spares.forEach((s, i) => {
    store.seed(...terminalEvents(s.terminalId, `spare-${i + 1}`, { profile: 'spare' }));
    agents.add({ agent: `spare-${i + 1}`, terminalId: s.terminalId, profile: testProfile({ name: 'spare' }) }, s.status);
  });
  const log = recordingLog();
  const published: Record<string, unknown>[] = [];
  const hub = { publish: (_t: string, d: Record<string, unknown>) => void published.push(d) };
  const journal = new WorkJournal({ store, hub, log, dirs: { projectRoot: root, jaggersDir: path.join(root, '.jaggers') }, ended: async () => {} });
  const kicked: string[] = [];
  const opened: { id: string; target: string; kind: string; profile: string }[] = [];
  // The workers' pump with the launcher's port faked: it records the window's terminal with the job's `starting`, as openWorker does.
  const workers = new Workers({
    store,
    journal,
    log,
    maxWorkers: async () => 4,
    loadProfile: async (name) => testProfile({ name }),
    open: async (j, profile) => {
      opened.push({ id: j.id, target: j.target, kind: j.kind, profile: profile.name });
      const terminalId = `jg-w${opened.length}`;
      agents.add({ agent: `${j.target}-${j.id}`, terminalId, profile }, 'starting');
      await store.record(...terminalEvents(terminalId, `${j.target}-${j.id}`, { profile: j.target }), {
        type: 'job-state',
        jobId: j.id,
        state: 'starting',
        reason: 'worker window opened',
        terminalId,
        agent: `${j.target}-${j.id}`,
      });
      return true;
    },
    hasPane: (t) => agents.find(t) !== undefined,
    kick: (t) => kicked.push(t),
  });
  let pumps = 0;
  const move = () =>
    moveToFallback(
      {
        store,
        journal,
        agents,
        fallbackOf: async (a) => (a === 'coder' ? { profile: 'spare' } : undefined),
        workers: { pump: () => (pumps++, workers.pump()) },
        kick: (t) => kicked.push(t),
        log,
      },
      CODER,
      'coder',
      WHY,
    );
  const job = (id: string) => store.seed(jobEvent(id, { terminalId: CODER, from: LEAD, fromAgent: 'lead' }));
  return { store, agents, workers, kicked, opened, move, job, pumps: () => pumps, published };
}

describe('a fallback that names a profile', () => {
  it('moves each waiting job to an idle agent of the profile with an empty queue, one each', async () => {
    const h = await setup([
      { terminalId: SPARE1, status: 'busy' },
      { terminalId: SPARE2, status: 'idle' },
    ]);
    h.job('j-000000000001');
    expect(await h.move()).toBe(1);
    expect(h.store.data.jobs['j-000000000001']).toMatchObject({
      state: 'queued',
      kind: 'agent',
      terminalId: SPARE2,
      agent: 'spare-2',
      from: LEAD,
      reason: `moved from coder to spare-2 (an idle agent of spare, its fallback): coder ${WHY}`,
    });
    expect(h.kicked).toEqual([SPARE2]);
    expect(h.pumps()).toBe(0);
    expect(h.published.some((d) => d.id === 'j-000000000001' && d.agent === 'spare-2')).toBe(true);
  });

  it('with no idle agent of it, the jobs become workers of the profile, and the launcher opens their windows', async () => {
    const h = await setup([{ terminalId: SPARE1, status: 'idle' }]);
    // spare-1 has work of its own in its queue: it is not idle for this.
    h.store.seed(jobEvent('j-00000000000a', { terminalId: SPARE1 }));
    h.job('j-000000000001');
    h.job('j-000000000002');
    expect(await h.move()).toBe(2);
    for (const id of ['j-000000000001', 'j-000000000002'])
      expect(h.store.of('job-state').find((e) => e.jobId === id)).toMatchObject({
        state: 'queued',
        terminalId: null,
        worker: { target: 'spare' },
        reason: `moved from coder to a new spare worker (its fallback): coder ${WHY}`,
      });
    expect(h.pumps()).toBe(1);
    await h.workers.pumpNow();
    await new Promise((r) => setImmediate(r));
    // One window each, opened for the profile, each job now a worker's job there; the asker kept.
    expect(h.opened.map((o) => [o.id, o.target, o.kind, o.profile])).toEqual([
      ['j-000000000001', 'spare', 'worker', 'spare'],
      ['j-000000000002', 'spare', 'worker', 'spare'],
    ]);
    expect(h.store.data.jobs['j-000000000001']).toMatchObject({ kind: 'worker', target: 'spare', state: 'starting', terminalId: 'jg-w1', from: LEAD });
    expect(h.kicked).toEqual(expect.arrayContaining(['jg-w1', 'jg-w2']));
    // Nothing is left in the limited agent's queue, and nothing is opened twice.
    await h.workers.pumpNow();
    expect(h.opened).toHaveLength(2);
  });

  it('moves nothing that is not waiting: a workflow turn, a send, an item in flight', async () => {
    const h = await setup([{ terminalId: SPARE1, status: 'idle' }]);
    h.store.seed(jobEvent('j-000000000001', { terminalId: CODER, work: 'send' }), jobEvent('j-000000000002', { terminalId: CODER }), {
      type: 'job-state',
      jobId: 'j-000000000002',
      state: 'running',
      reason: 'took it',
    });
    expect(await h.move()).toBe(0);
    expect(h.store.data.jobs['j-000000000001']!.terminalId).toBe(CODER);
    expect(h.store.data.jobs['j-000000000002']!.terminalId).toBe(CODER);
  });
});

describe('"fallback" in jaggers.json', () => {
  const parse = (o: unknown) => parseProjectFile(JSON.stringify(o), '/p/jaggers.json');

  it('takes another agent, or a name that is none of its agents as a profile; not the agent itself', async () => {
    const team = await parse({
      agents: [
        { name: 'coder', profile: 'claude', fallback: 'helper' },
        { name: 'helper', profile: 'codex' },
      ],
    });
    expect(team.agents[0]!.fallback).toBe('helper');
    expect((await parse({ agents: [{ name: 'coder', profile: 'claude', fallback: 'codex' }] })).agents[0]!.fallback).toBe('codex');
    await expect(parse({ agents: [{ name: 'coder', profile: 'claude', fallback: 'coder' }] })).rejects.toThrow(/fallback.*must be another agent, or a profile/);
  });
});
