// A usage limit and the agent's queue, on a simulated clock: the pane's real terminal machine says
// `limited` with the reset time it read, the one runner holds the next item (and `why` says until
// when), the machine's own timer at the reset ends the state and the queue goes on with no other
// event; with a fallback, the waiting job moves to the other agent, journaled, and its reply still
// goes home to whoever asked for it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { terminalMachine } from '../../../machines/terminal.machine.js';
import { moveToFallback } from '../../../src/work/fallback.js';
import { WorkJournal } from '../../../src/work/journal.js';
import { Runner } from '../../../src/work/runner.js';
import type { WorkItem } from '../../../src/work/queue.js';
import { deferred, FakeAgents, FakeStore, jobEvent, recordingLog, settle, terminalEvents } from '../../helpers/work-fakes.js';

const T0 = Date.UTC(2026, 10, 26, 13, 30);
const CODER = 'jg-c0de';
const HELPER = 'jg-he1p';
const LEAD = 'jg-1ead';
const LIMIT = ["  ⎿  You've hit your session limit · resets 2:30pm (UTC)"];

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function setup(o: { fallback?: string } = {}) {
  const root = await mkdtemp(path.join(tmpdir(), 'jg-limits-'));
  dirs.push(root);
  const clock = new SimulatedClock();
  clock.set(T0);
  const store = new FakeStore(() => clock.now());
  store.seed(...terminalEvents(CODER, 'coder'), ...terminalEvents(HELPER, 'helper'), ...terminalEvents(LEAD, 'lead'));
  const agents = new FakeAgents();
  const coder = agents.add({ agent: 'coder', terminalId: CODER }, 'idle');
  const helper = agents.add({ agent: 'helper', terminalId: HELPER }, 'idle');
  agents.add({ agent: 'lead', terminalId: LEAD }, 'idle');
  const log = recordingLog();
  const hub = {
    published: [] as { type: string; data: Record<string, unknown> }[],
    publish(type: string, data: Record<string, unknown>) {
      this.published.push({ type, data });
    },
  };
  const journal = new WorkJournal({ store, hub, log, dirs: { projectRoot: root, jaggersDir: path.join(root, '.jaggers') }, ended: async () => {} });
  // The coder's pane: its real machine on the simulated clock; every change kicks the runner, as the supervisor's does.
  const actor = createActor(terminalMachine, { input: { settleMs: 100, at: T0, timeZone: 'UTC' }, clock });
  const runs: { item: WorkItem; terminal: string; end(reply: string): Promise<void> }[] = [];
  const runner: Runner = new Runner({
    data: () => store.data,
    pane: (t) => agents.find(t),
    status: (p) => agents.status(p),
    limit: (p) => (p === coder.pane.paneId ? actor.getSnapshot().context.limit : null),
    limited: (t, agent, why) =>
      moveToFallback(
        { store, journal, agents, fallbackOf: async (a) => (a === 'coder' ? o.fallback : undefined), kick: (x) => runner.kick(x), log },
        t,
        agent,
        why,
      ),
    run: (item, e) => {
      const d = deferred();
      if (item.kind === 'job') store.seed({ type: 'job-state', jobId: item.id, state: 'running', reason: 'took it' });
      runs.push({
        item,
        terminal: e!.pane.terminalId!,
        end: async (reply) => {
          await journal.change(item.id, 'done', 'finished', {}, reply);
          d.resolve();
        },
      });
      return d.promise;
    },
    lost: async () => {},
    broken: async () => {},
    log,
  });
  actor.subscribe((s) => {
    agents.statuses.set(coder.pane.paneId, s.value === 'settling' ? 'busy' : (s.value as string));
    runner.kick(CODER);
  });
  actor.start();
  actor.send({ type: 'SCREEN', at: T0, classification: { status: 'idle', rule: 'input-box', lines: ['>'] }, source: 'screen' });
  const limitHits = () =>
    actor.send({ type: 'SCREEN', at: clock.now(), classification: { status: 'limited', rule: 'usage-limit', lines: LIMIT }, source: 'screen' });
  return { clock, store, agents, actor, runner, runs, hub, helper, limitHits };
}

describe('a limited agent and its queue', () => {
  it('pauses at the limit, says until when, and resumes on its own at the reset time', async () => {
    const h = await setup();
    h.limitHits();
    expect(h.actor.getSnapshot().value).toBe('limited');
    h.store.seed(jobEvent('j-000000000001', { from: LEAD, fromAgent: 'lead' }));
    h.runner.kick(CODER);
    await settle();
    expect(h.runs).toEqual([]);
    expect(h.runner.waiting(CODER, 'j-000000000001')).toBe(
      "coder hit a usage limit (resets 2:30pm); the next item waits for the limit's reset at 2026-11-26T14:30:00.000Z",
    );
    h.clock.increment(59 * 60_000);
    await settle();
    expect(h.runs).toEqual([]);
    h.clock.increment(60_000);
    await settle();
    expect(h.actor.getSnapshot().value).toBe('idle');
    expect(h.runs.map((r) => r.item.id)).toEqual(['j-000000000001']);
    expect(h.runs[0]!.terminal).toBe(CODER);
  });

  it('with a fallback, the waiting job moves to it (journaled) and its reply comes home to the asker', async () => {
    const h = await setup({ fallback: 'helper' });
    // The coder runs one job; a second waits behind it when the limit hits.
    h.store.seed(jobEvent('j-000000000001', { from: LEAD, fromAgent: 'lead' }), jobEvent('j-000000000002', { from: LEAD, fromAgent: 'lead' }));
    h.runner.kick(CODER);
    await settle();
    expect(h.runs.map((r) => r.item.id)).toEqual(['j-000000000001']);
    h.limitHits();
    await h.runs[0]!.end("You've hit your session limit · resets 2:30pm (UTC)");
    await settle();
    // Journaled: the move names the new terminal and agent, and why; the job keeps whoever asked for it.
    const move = h.store.of('job-state').find((e) => e.jobId === 'j-000000000002' && e.terminalId === HELPER);
    expect(move).toMatchObject({
      state: 'queued',
      agent: 'helper',
      reason: 'moved from coder to helper (its fallback): coder hit a usage limit that resets at 2026-11-26T14:30:00.000Z',
    });
    expect(h.store.data.jobs['j-000000000002']).toMatchObject({ terminalId: HELPER, agent: 'helper', from: LEAD, fromAgent: 'lead' });
    expect(h.hub.published.some((e) => e.type === 'job' && e.data.id === 'j-000000000002' && e.data.agent === 'helper')).toBe(true);
    // The helper runs it; its end sends the reply to the lead's inbox, from the helper.
    expect(h.runs.map((r) => [r.item.id, r.terminal])).toEqual([
      ['j-000000000001', CODER],
      ['j-000000000002', HELPER],
    ]);
    await h.runs[1]!.end('the answer');
    const home = Object.values(h.store.data.messages).filter((m) => m.job === 'j-000000000002');
    expect(home).toHaveLength(1);
    expect(home[0]).toMatchObject({ to: LEAD, toAgent: 'lead', fromAgent: 'helper' });
  });

  it('no move to a fallback that is limited itself: the job waits for the reset', async () => {
    const h = await setup({ fallback: 'helper' });
    h.agents.statuses.set(h.helper.pane.paneId, 'limited');
    h.limitHits();
    h.store.seed(jobEvent('j-000000000003'));
    h.runner.kick(CODER);
    await settle();
    expect(h.store.data.jobs['j-000000000003']).toMatchObject({ state: 'queued', terminalId: CODER });
    expect(h.runs).toEqual([]);
  });
});
