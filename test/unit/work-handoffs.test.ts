// `handoff` and `send` as work items their caller follows (src/work/handoffs.ts), on a fake registry,
// fake panes, the real jobs, journal and event hub, and a simulated clock for the deadlines: the
// item's end (or its delivery) resolves the request, its failure is the caller's error with its code,
// an agent that waits for a person refuses at once, and a queued item is cancelled at its deadline.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HandoffResult } from '../../src/api/types.js';
import type { JaggersError } from '../../src/errors.js';
import { renderArtifact } from '../../src/handover/artifact.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { writeDurable } from '../../src/work/files.js';
import { Handoffs, type HandoffRequest } from '../../src/work/handoffs.js';
import { Jobs } from '../../src/work/jobs.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Outcomes } from '../../src/work/outcomes.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-handoffs-');
const T = 'jg-c0de';
const MENU = ['Working on it', '', ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No', '', ' Esc to cancel'].join('\n');

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const clock = new FakeClock(Date.UTC(2026, 10, 25, 12));
  const store = new FakeStore(() => clock.now());
  store.seed(...terminalEvents(T, 'coder'), ...terminalEvents('jg-b055', 'boss'));
  const agents = new FakeAgents();
  const coder = agents.add({ agent: 'coder', terminalId: T }, 'idle');
  agents.add({ agent: 'boss', terminalId: 'jg-b055' }, 'idle');
  const hub = new EventHub();
  const log = recordingLog();
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const runner = { kick: () => {}, waiting: () => 'coder is busy; the next item goes in when it is idle or done', abort: () => {} };
  const jobs = new Jobs({
    store,
    journal,
    agents,
    hub,
    log,
    dirs,
    runner,
    workers: { pump: () => {}, waiting: () => '' },
    checkProfile: async () => {},
    interrupt: async () => {},
    untilEvent: async () => {},
  });
  const outcomes = new Outcomes();
  const stopping = new AbortController();
  const make = () => new Handoffs({ jobs, store, agents, hub, outcomes, runner, clock, dirs, log, stopping: stopping.signal });
  const handoffs = make();
  const req = (o: Partial<HandoffRequest> = {}): HandoffRequest => ({
    agent: 'coder',
    message: 'review it',
    wait: true,
    headless: false,
    workflow: 'handoff',
    ...o,
  });
  /** The next item of `work` recorded (call it before anything else awaits, right after the request). */
  const item = (work = 'handoff') =>
    new Promise<JobRecord>((resolve) => {
      const off = hub.subscribe((e) => {
        if (e.type !== 'job' || e.data.work !== work || e.data.state !== 'queued') return;
        off();
        resolve(store.data.jobs[e.data.id as string]!);
      });
    });
  /** The agent replied: the reply artifact is written and the item done, as a run would record it. */
  const reply = async (id: string, text: string) => {
    const file = '.jaggers/handover/turn_2_r.md';
    const meta = {
      task: 't',
      workflow: 'handoff',
      turn: 2,
      sourceAgent: 'coder',
      sourceSession: null,
      targetAgent: 'user',
      targetSession: null,
      created: 'now',
    };
    await writeDurable(path.join(root, file), renderArtifact(meta, `${text}\n`));
    await journal.change(id, 'done', 'the agent finished its turn', { reply: file });
  };
  return { root, clock, store, agents, coder, hub, journal, jobs, outcomes, stopping, handoffs, make, req, item, reply };
}

const failed = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: JaggersError) => ({ code: e.code, message: e.message }),
  );

describe('handoff', () => {
  it('records a handoff item in the agent’s queue and resolves with its reply when it ends', async () => {
    const h = await setup();
    let result: HandoffResult | null = null;
    const p = h.handoffs.handoff(h.req({ task: 't-1', from: 'boss' })).then((r) => (result = r));
    const j = await h.item();
    expect(j).toMatchObject({ work: 'handoff', terminalId: T, task: 't-1', workflow: 'handoff', timeoutMs: 600_000, from: 'jg-b055', state: 'queued' });
    await h.journal.change(j.id, 'starting', 'typing', { artifact: '.jaggers/handover/turn_1_p.md', turn: 1 });
    await h.journal.change(j.id, 'running', 'took it');
    await settle();
    expect(result).toBeNull();
    const o = h.outcomes.start(j.id);
    o.delivery = { kind: 'delivered', submits: 1, evidence: 'echo', ms: 12 };
    o.confirmedBy = 'screen';
    o.replyFrom = 'screen';
    await h.reply(j.id, 'Looks good.');
    await p;
    expect(result).toMatchObject({
      job: j.id,
      task: 't-1',
      turn: 1,
      agent: 'coder',
      terminalId: T,
      artifact: path.join(h.root, '.jaggers/handover/turn_1_p.md'),
      delivery: { kind: 'delivered', submits: 1, evidence: 'echo' },
      reply: { text: 'Looks good.', from: 'screen', artifact: path.join(h.root, '.jaggers/handover/turn_2_r.md') },
      confirmedBy: 'screen',
    });
  });

  it("records the caller's terminal as the sender; one of another project makes it a person's handoff, not an error", async () => {
    const h = await setup();
    void h.handoffs.handoff(h.req({ wait: false, fromTerminal: 'jg-b055' })).catch(() => {});
    expect(await h.item()).toMatchObject({ work: 'handoff', from: 'jg-b055' });
    void h.handoffs.handoff(h.req({ wait: false, fromTerminal: 'jg-e15e' })).catch(() => {});
    expect((await h.item()).from).toBeNull();
    // --from names the sender whatever the terminal says.
    void h.handoffs.handoff(h.req({ wait: false, from: 'boss', fromTerminal: 'jg-e15e' })).catch(() => {});
    expect(await h.item()).toMatchObject({ from: 'jg-b055' });
  });

  it('with wait false resolves once the prompt went in (running), not while it is typed', async () => {
    const h = await setup();
    let done = false;
    const p = h.handoffs.handoff(h.req({ wait: false })).then((r) => ((done = true), r));
    const j = await h.item();
    expect(j.task).toMatch(/^t-[0-9a-f]{8}$/);
    await h.journal.change(j.id, 'starting', 'typing');
    await settle();
    expect(done).toBe(false);
    await h.journal.change(j.id, 'running', 'took it');
    expect((await p).reply).toBeNull();
  });

  it('one that carries files (a turn forwarded from another host): they are written beside the handover files, once, and its prompt points at them', async () => {
    const h = await setup();
    const draft = '.jaggers/handover/turn_1_ab12.reply.md';
    const notes = '.jaggers/jobs/j-000000000009.reply.md';
    const files = [
      { path: draft, text: 'the draft, written on the other host\n' },
      { path: notes, text: 'notes\n' },
    ];
    const message = `Review:\n- draft: ${draft}\n- notes: ${notes}\n- draft again: ${draft}`;
    const p = h.handoffs.handoff(h.req({ id: 'j-0000000000f1', task: 't-0000f10e', workflow: 'pair', wait: false, message, files }));
    const j = await h.item();
    const dir = path.join(h.root, '.jaggers', 'handover', 'carried', 'j-0000000000f1');
    const here = (n: string) => path.join(dir, n);
    expect(await readFile(here('turn_1_ab12.reply.md'), 'utf8')).toBe('the draft, written on the other host\n');
    expect(await readFile(here('j-000000000009.reply.md'), 'utf8')).toBe('notes\n');
    const prompt = await readFile(path.join(h.root, j.prompt), 'utf8');
    expect(prompt).toBe(
      `Review:\n- draft: ${here('turn_1_ab12.reply.md')}\n- notes: ${here('j-000000000009.reply.md')}\n- draft again: ${here('turn_1_ab12.reply.md')}`,
    );
    await h.journal.change(j.id, 'running', 'took it');
    await p;
    // Sent again (a cut answer): the item is the one recorded, its files not written again.
    await writeFile(here('turn_1_ab12.reply.md'), 'read by the agent meanwhile');
    await h.handoffs.handoff(h.req({ id: 'j-0000000000f1', task: 't-0000f10e', workflow: 'pair', wait: false, message, files }));
    expect(await readFile(here('turn_1_ab12.reply.md'), 'utf8')).toBe('read by the agent meanwhile');
    expect(Object.keys(h.store.data.jobs)).toEqual(['j-0000000000f1']);
    // A name that is not a plain file name is refused, naming it; so is a carrying handoff without its id.
    const bad = failed(h.handoffs.handoff(h.req({ id: 'j-0000000000f2', files: [{ path: '../..', text: 'x' }], message: 'see ../..' })));
    expect(await bad).toEqual({ code: 'E_USAGE', message: 'handoff j-0000000000f2: a carried file\'s name must be a plain file name, got "../.."' });
    expect(await failed(h.handoffs.handoff(h.req({ files })))).toMatchObject({
      code: 'E_USAGE',
      message: 'handoff: a handoff that carries files needs its id',
    });
  });

  it("a failed or cancelled item is the caller's error, with the item's code", async () => {
    const h = await setup();
    const a = failed(h.handoffs.handoff(h.req()));
    const j = await h.item();
    await h.journal.change(j.id, 'failed', 'handoff: coder never became ready (busy after 60000 ms)', { code: 'E_TIMEOUT' });
    expect(await a).toEqual({ code: 'E_TIMEOUT', message: 'handoff: coder never became ready (busy after 60000 ms)' });
    const b = failed(h.handoffs.handoff(h.req()));
    const k = await h.item();
    await h.journal.change(k.id, 'failed', "the agent's pane died during its turn", { code: 'E_PANE_GONE' });
    expect(await b).toEqual({ code: 'E_PANE_GONE', message: `handoff ${k.id}: the agent's pane died during its turn` });
    const c = failed(h.handoffs.handoff(h.req()));
    const l = await h.item();
    await h.journal.change(l.id, 'cancelled', 'cancelled by the user while queued');
    expect(await c).toEqual({ code: 'E_CANCELLED', message: `handoff ${l.id}: cancelled by the user while queued` });
  });

  it('refuses at once when the agent waits for a person and nothing is queued for it; queues behind what is', async () => {
    const h = await setup();
    h.agents.statuses.set(h.coder.pane.paneId, 'waiting_input');
    h.agents.screens.set(h.coder.pane.paneId, MENU);
    expect(await failed(h.handoffs.handoff(h.req()))).toEqual({
      code: 'E_AGENT_WAITING',
      message:
        'handoff: coder never became ready (waiting_input: coder asks "Do you want to proceed?" [1. Yes / 2. No]; answer it with `jaggers answer coder <number or label>`)',
    });
    expect(await failed(h.handoffs.input('coder', 'hello'))).toMatchObject({ code: 'E_AGENT_WAITING', message: expect.stringMatching(/^send: coder never/) });
    // A question without choices is answered in the pane; no screen at all says only that it waits.
    h.agents.screens.set(h.coder.pane.paneId, 'Which file?');
    expect((await failed(h.handoffs.handoff(h.req())))?.message).toMatch(/coder asks "Which file\?"; answer it with `jaggers attach coder`\)$/);
    h.agents.screens.delete(h.coder.pane.paneId);
    expect((await failed(h.handoffs.handoff(h.req())))?.message).toMatch(
      /coder is waiting for a person to answer on its screen; answer it with `jaggers attach coder`\)$/,
    );
    expect(h.store.of('job-created')).toEqual([]);
    // Behind an item already queued it waits its turn like any other.
    await h.jobs.create({ target: 'coder', text: 'first' });
    const behind = h.handoffs.handoff(h.req());
    const queued = await Promise.race([
      h.item(),
      behind.then(
        () => 'ended',
        (e: Error) => e.message,
      ),
    ]);
    expect(queued).toMatchObject({ state: 'queued', work: 'handoff' });
    h.stopping.abort();
    await behind.catch(() => {});
  });

  it('refuses an unknown agent, and a dead pane, before recording anything', async () => {
    const h = await setup();
    expect((await failed(h.handoffs.handoff(h.req({ agent: 'nobody' }))))?.code).toBe('E_AGENT_UNKNOWN');
    expect((await failed(h.handoffs.handoff(h.req({ from: 'nobody' }))))?.code).toBe('E_AGENT_UNKNOWN');
    h.agents.kill(T);
    expect((await failed(h.handoffs.handoff(h.req())))?.code).toBe('E_PANE_GONE');
    expect(h.store.of('job-created')).toEqual([]);
  });

  it('cancels a handoff still queued at its deadline (the simulated clock), saying why it never went in', async () => {
    const h = await setup();
    const p = failed(h.handoffs.handoff(h.req({ timeout: 30 })));
    const j = await h.item();
    await settle();
    h.clock.advance(29_999);
    await settle();
    expect(h.store.data.jobs[j.id]!.state).toBe('queued');
    h.clock.advance(1);
    expect(await p).toEqual({
      code: 'E_CANCELLED',
      message: `handoff ${j.id}: cancelled by its deadline (30 s): it never went in (coder is busy; the next item goes in when it is idle or done) while queued`,
    });
  });

  it('leaves a handoff that started before its deadline alone', async () => {
    const h = await setup();
    const p = h.handoffs.handoff(h.req({ timeout: 30 }));
    const j = await h.item();
    await h.journal.change(j.id, 'running', 'took it');
    h.clock.advance(60_000);
    await settle();
    expect(h.store.data.jobs[j.id]!.state).toBe('running');
    await h.reply(j.id, 'ok');
    expect((await p).reply?.text).toBe('ok');
  });

  it('leaves a handoff a usage limit cut alone at its deadline, and after a restart: it waits for the reset (docs/limits.md)', async () => {
    const h = await setup();
    const p = h.handoffs.handoff(h.req({ timeout: 30 }));
    const j = await h.item();
    await h.journal.change(j.id, 'running', 'took it');
    await h.journal.change(j.id, 'queued', "its turn was cut by coder's usage limit", { limit: { resetAt: null, said: null } });
    h.clock.advance(60_000);
    await settle();
    expect(h.store.data.jobs[j.id]!.state).toBe('queued');
    const again = h.make();
    again.start();
    h.clock.advance(1);
    await settle();
    expect(h.store.data.jobs[j.id]!.state).toBe('queued');
    again.stop();
    await h.reply(j.id, 'ok');
    expect((await p).reply?.text).toBe('ok');
  });

  it('start() arms the deadlines of queued handoffs and sends again after a restart; one already past goes at once', async () => {
    const h = await setup();
    const created = h.clock.now();
    await h.jobs.create({ id: 'j-0000000a', target: 'coder', text: 'x', work: 'handoff', timeout: 60 });
    await h.jobs.create({ id: 'j-0000000b', target: 'coder', text: 'x', work: 'send', timeout: 10 });
    await h.jobs.create({ id: 'j-0000000c', target: 'coder', text: 'x', timeout: 10 });
    // The supervisor was down for 20 s.
    h.clock.advance(20_000);
    const again = h.make();
    again.start();
    h.clock.advance(1);
    await settle();
    const state = (id: string) => h.store.data.jobs[id]!.state;
    expect([state('j-0000000a'), state('j-0000000b'), state('j-0000000c')]).toEqual(['queued', 'cancelled', 'queued']);
    h.clock.advance(created + 60_000 - h.clock.now() - 1);
    await settle();
    expect(state('j-0000000a')).toBe('queued');
    h.clock.advance(1);
    await settle();
    expect(state('j-0000000a')).toBe('cancelled');
    // An assigned job has no such deadline: its own timeout bounds its turn once it runs.
    expect(state('j-0000000c')).toBe('queued');
    again.stop();
  });

  it('follow() returns an ended item at once; the supervisor stopping ends a wait with E_SUPERVISOR_DOWN', async () => {
    const h = await setup();
    const a = h.handoffs.handoff(h.req());
    const j = await h.item();
    await h.reply(j.id, 'done already');
    await a;
    expect((await h.handoffs.follow(j.id, 'end')).reply?.text).toBe('done already');
    const b = failed(h.handoffs.handoff(h.req()));
    const k = await h.item();
    await settle();
    h.stopping.abort();
    expect(await b).toEqual({
      code: 'E_SUPERVISOR_DOWN',
      message: `the supervisor is stopping; ${k.id} goes on when it is back (follow it: jaggers wait ${k.id})`,
    });
    expect(h.store.data.jobs[k.id]!.state).toBe('queued');
  });
});

describe('send (input)', () => {
  it('records a send item and resolves with how it went in', async () => {
    const h = await setup();
    const p = h.handoffs.input('coder', '/compact');
    const j = await h.item('send');
    expect(j).toMatchObject({ work: 'send', terminalId: T, timeoutMs: 600_000 });
    const o = h.outcomes.start(j.id);
    o.delivery = { kind: 'delivered', submits: 2, evidence: 'cleared', ms: 40 };
    o.bytes = 8;
    await h.journal.change(j.id, 'done', 'coder took the text (cleared)');
    expect(await p).toEqual({ agent: 'coder', pane: h.coder.pane.paneId, bytes: 8, submits: 2, evidence: 'cleared', ms: 40, job: j.id });
  });

  it('a send that fails is the error of its caller; one not in by its deadline is cancelled', async () => {
    const h = await setup();
    const a = failed(h.handoffs.input('coder', 'x'));
    const j = await h.item('send');
    await h.journal.change(j.id, 'failed', 'send: coder did not show that it took the text within 30000 ms', { code: 'E_TIMEOUT' });
    expect(await a).toEqual({ code: 'E_TIMEOUT', message: 'send: coder did not show that it took the text within 30000 ms' });
    const b = failed(h.handoffs.input('coder', 'y'));
    await h.item('send');
    await settle();
    h.clock.advance(600_000);
    expect((await b)?.code).toBe('E_CANCELLED');
  });
});
