// A host's agent answering an agent here (docs/hosts.md, "Messages from a host's agents"): the host's
// inbox (src/work/inbox.ts, the real one on an in-memory registry) keeps a message for an agent of the
// team elsewhere in its outbox, in no queue there; this supervisor's OutboxHome (src/work/outbox-home.ts)
// takes it by id through a fake forwarded API over that inbox, stores it here from `far@box`, and marks it
// taken there: one message here across a lost answer, a host down and a restart here.
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { Inbox } from '../../src/work/inbox.js';
import { OutboxHome } from '../../src/work/outbox-home.js';
import { Outbox, type OutboxReport } from '../../src/work/outbox.js';
import { Jobs, type JobRequest } from '../../src/work/jobs.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Handoffs } from '../../src/work/handoffs.js';
import { Outcomes } from '../../src/work/outcomes.js';
import { writeDurable } from '../../src/work/files.js';
import { remoteKey, type HostReach } from '../../src/work/remote-work.js';
import { queueOf, terminalsWithWork } from '../../src/work/queue.js';
import { remoteProjectFile } from '../../src/hosts/remote-project.js';
import type { ProjectFile } from '../../src/project/project-file.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { FakeAgents, FakeStore, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-outbox-');

async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((r) => setTimeout(r, 2));
  }
  await settle();
}

/** One side: a project folder, a registry, an event hub, its inbox, its jobs and handoffs, and its outbox. */
async function side(terminal: string, agent: string, o: { home?: string[]; hostOf?: (a: string) => string | null }) {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(terminal, agent));
  const hub = new EventHub();
  const log = recordingLog();
  const kicked: string[] = [];
  const runner = { kick: (t: string) => void kicked.push(t), waiting: () => null, abort: () => {} };
  const hostOf = o.hostOf ? { hostOf: async (a: string) => o.hostOf!(a) } : {};
  const homeAgents = o.home ? { homeAgents: async () => o.home! } : {};
  const agents = new FakeAgents();
  const inbox = new Inbox({ store, agents, hub, log, dirs, runner, ...hostOf, ...homeAgents });
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const jobs = new Jobs({
    store,
    journal,
    agents,
    hub,
    log,
    dirs,
    runner,
    workers: { pump: () => {}, waiting: () => '' },
    checkProfile: async (name) => {
      throw new JaggersError('E_PROFILE_UNKNOWN', `no profile ${name}: known fake`);
    },
    interrupt: async () => {},
    untilEvent: async () => {},
    ...hostOf,
    ...homeAgents,
  });
  const stopping = new AbortController();
  const handoffs = new Handoffs({
    jobs,
    store,
    agents,
    hub,
    outcomes: new Outcomes(),
    runner,
    clock: new FakeClock(),
    dirs,
    log,
    stopping: stopping.signal,
    ...hostOf,
    ...homeAgents,
  });
  const outbox = new Outbox({ inbox, journal, jobs, dirs });
  return { root, dirs, store, hub, inbox, kicked, journal, jobs, handoffs, outbox };
}

/** The host box's supervisor as the local one reaches it through the forwarded socket: its outbox routes over its inbox. */
class FakeBox {
  connected = true;
  /** Its supervisor answers (false: killed, the connection up). */
  supervisor = true;
  /** Event streams asked for. */
  streams = 0;
  /** The answer of the next `taken` is lost (the request was done there; the connection dropped). */
  cutTaken = false;
  readonly calls: string[] = [];
  constructor(private readonly box: Awaited<ReturnType<typeof side>>) {}

  reach = (): HostReach => ({
    view: { state: this.connected ? 'connected' : 'retrying', detail: this.connected ? 'connected' : 'retrying in 2 s' },
    api: {
      call: async <T>(method: string, at: string, body?: unknown): Promise<T> => {
        if (!this.connected || !this.supervisor) throw new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers at box.sock (ECONNREFUSED)');
        this.calls.push(`${method} ${at}`);
        if (method === 'GET' && at === '/v1/outbox') return (await this.box.outbox.list()) as T;
        const st = /^\/v1\/outbox\/([^/]+)\/state$/.exec(at);
        if (method === 'POST' && st) return (await this.box.outbox.report(decodeURIComponent(st[1]!), body as OutboxReport)) as T;
        const m = /^\/v1\/outbox\/([^/]+)\/taken$/.exec(at);
        if (method === 'POST' && m) {
          const r = await this.box.outbox.taken(decodeURIComponent(m[1]!));
          if (this.cutTaken) {
            this.cutTaken = false;
            throw new JaggersError('E_SUPERVISOR_DOWN', 'the supervisor at box.sock closed the connection before answering (ECONNRESET)');
          }
          return r as T;
        }
        throw new Error(`unexpected ${method} ${at}`);
      },
      events: (_p, onEvent, o) => {
        this.streams++;
        if (!this.connected || !this.supervisor) return Promise.reject(new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers at box.sock'));
        return new Promise<void>((resolve) => {
          const off = this.box.hub.subscribe((e) => onEvent({ type: e.type, data: e.data }));
          o?.signal?.addEventListener('abort', () => (off(), resolve()), { once: true });
        });
      },
    },
  });
}

async function setup() {
  // On box: far, and near of the team elsewhere (jaggers.json's `home`, written by the local side).
  const box = await side('jg-far', 'far', { home: ['near', 'gone'] });
  // Here: near, and far on host box.
  const here = await side('jg-near', 'near', { hostOf: (a) => (a === 'far' ? 'box' : null) });
  const link = new FakeBox(box);
  const clock = new FakeClock();
  const work = {
    create: async (req: JobRequest) => {
      const v = await here.jobs.create(req);
      if (v.work === 'handoff') here.handoffs.deadline(v.id);
      return v;
    },
    get: (id: string) => here.store.data.jobs[id],
    reply: async (id: string) => (await here.jobs.result(id)).reply,
    cancel: (id: string, by: string) => here.jobs.cancel(id, by),
  };
  const make = () => new OutboxHome({ reach: (h) => (h === 'box' ? link.reach() : null), inbox: here.inbox, work, hub: here.hub, log: recordingLog(), clock });
  return { box, here, link, make, clock };
}

describe("a host's agent messaging an agent of the team elsewhere (the host's outbox)", () => {
  it('is kept in the outbox there, in no queue, said unknown for a name of nobody', async () => {
    const { box } = await setup();
    const m = await box.inbox.send({ id: 'm-0000b0b0', to: 'near', text: 'the build is green', fromTerminal: 'jg-far' });
    expect(m).toMatchObject({ to: remoteKey('near', 'home'), toAgent: 'near', from: 'jg-far', fromAgent: 'far', outbox: true, state: 'pending' });
    // Not delivered by anyone there: no queue has it, the runner is not kicked for it.
    expect(box.kicked).toEqual([]);
    expect(terminalsWithWork(box.store.data).size).toBe(0);
    expect(queueOf(box.store.data, m.to)).toEqual([]);
    expect((await box.inbox.outbox()).map((x) => [x.id, x.text])).toEqual([['m-0000b0b0', 'the build is green']]);
    await expect(box.inbox.send({ to: 'nobody', text: 'x' })).rejects.toThrow(/unknown agent "nobody": agents are far; elsewhere in the team: near, gone/);
    // A message from near (forwarded from home) names near, whose reply goes back to the outbox.
    const back = await box.inbox.send({ id: 'm-0000c0c0', to: 'far', text: 'thanks', from: 'near' });
    expect(back).toMatchObject({ to: 'jg-far', from: remoteKey('near', 'home'), fromAgent: 'near', outbox: false });
    expect(await readFile(path.join(box.root, back.file), 'utf8')).toMatch(/^reply: "jaggers message near -m \\"...\\" \(or -f FILE\)"$/m);
  });

  it('is taken home by its id, from far@box, once across a lost answer, a host down and a restart here', async () => {
    const { box, here, link, make } = await setup();
    let home = make();
    home.follow('box');
    await box.inbox.send({ id: 'm-0000b0b1', to: 'near', text: 'line one\nline two, exactly\n', fromTerminal: 'jg-far' });
    await until(() => box.store.data.messages['m-0000b0b1']?.state === 'delivered', 'taken there');
    const m = here.store.data.messages['m-0000b0b1']!;
    expect(m).toMatchObject({ to: 'jg-near', toAgent: 'near', from: remoteKey('far', 'box'), fromAgent: 'far', state: 'pending', host: null, outbox: false });
    expect(box.store.data.messages['m-0000b0b1']).toMatchObject({ how: 'sent-home' });
    expect(here.kicked).toEqual(['jg-near']);
    const text = await readFile(path.join(here.root, m.file), 'utf8');
    expect(text).toMatch(/^from: far \(far@box\)$/m);
    // The reply goes back to far, on host box.
    expect(text).toMatch(/^reply: "jaggers message far -m/m);
    expect(text.endsWith('---\nline one\nline two, exactly\n')).toBe(true);

    // The answer to `taken` is lost, and the host goes down: it is stored here, still in the outbox there.
    link.cutTaken = true;
    await box.inbox.send({ id: 'm-0000b0b2', to: 'near', text: 'second', fromTerminal: 'jg-far' });
    await until(() => here.store.data.messages['m-0000b0b2'] !== undefined && !link.cutTaken, 'stored here, its answer lost');
    link.connected = false;
    home.stop();
    // A restart here while the host is down: nothing to take, nothing lost.
    home = make();
    home.follow('box');
    expect(here.store.of('message-created').filter((e) => e.messageId === 'm-0000b0b2')).toHaveLength(1);
    // The host back: the next supervisor takes it again, one message here, taken there.
    link.connected = true;
    home.follow('box');
    await until(() => box.store.data.messages['m-0000b0b2']?.state === 'delivered', 'taken there after the restart');
    expect(here.store.of('message-created').map((e) => e.messageId)).toEqual(['m-0000b0b1', 'm-0000b0b2']);
    expect(box.store.of('message-delivered').map((e) => [e.messageId, e.how])).toEqual([
      ['m-0000b0b1', 'sent-home'],
      ['m-0000b0b2', 'sent-home'],
    ]);
    // Taken again (a request sent again after a lost answer) is taken once.
    await box.inbox.taken('m-0000b0b2');
    expect(box.store.of('message-delivered')).toHaveLength(2);
    await expect(box.inbox.taken('m-0000c0c0')).rejects.toThrow(/outbox: no message "m-0000c0c0" in the outbox/);
    home.stop();
  });

  it('one for an agent this machine does not have waits there, said in the log; a person there stays a person', async () => {
    const { box, here, link } = await setup();
    const log = recordingLog();
    const home = new OutboxHome({ reach: (h) => (h === 'box' ? link.reach() : null), inbox: here.inbox, log, clock: new FakeClock() });
    await box.inbox.send({ id: 'm-0000b0b3', to: 'gone', text: 'for an agent removed here since', fromTerminal: 'jg-far' });
    await box.inbox.send({ id: 'm-0000b0b4', to: 'near', text: 'from a person on box' });
    await home.take('box');
    expect(here.store.data.messages['m-0000b0b3']).toBeUndefined();
    expect(box.store.data.messages['m-0000b0b3']).toMatchObject({ state: 'pending', outbox: true });
    expect(here.store.data.messages['m-0000b0b4']).toMatchObject({ from: null, fromAgent: 'user', toAgent: 'near' });
    expect(link.calls).toEqual(['GET /v1/outbox', 'POST /v1/outbox/m-0000b0b4/taken']);
    expect((await box.inbox.outbox()).map((m) => m.id)).toEqual(['m-0000b0b3']);
    expect(log.lines.find((l) => l.msg.includes('cannot be stored here'))?.obj).toMatchObject({ message: 'm-0000b0b3', to: 'gone' });
    home.stop();
  });
});

describe("following a host's outbox", () => {
  it("a host's supervisor that does not answer (the connection up) is followed again after 1 s, doubling; then its outbox is taken", async () => {
    const { box, here, link, make, clock } = await setup();
    await box.inbox.send({ id: 'm-0000b0b5', to: 'near', text: 'sent before its supervisor died', fromTerminal: 'jg-far' });
    link.supervisor = false;
    const home = make();
    home.follow('box');
    await until(() => clock.pending === 1, 'the pause after the failed stream');
    expect(link.streams).toBe(1);
    clock.advance(999);
    await settle();
    expect(link.streams).toBe(1);
    clock.advance(1);
    await until(() => link.streams === 2 && clock.pending === 1, 'followed again after 1 s');
    clock.advance(1999);
    await settle();
    expect(link.streams).toBe(2);
    link.supervisor = true;
    clock.advance(1);
    await until(() => here.store.data.messages['m-0000b0b5'] !== undefined && box.store.data.messages['m-0000b0b5']?.state === 'delivered', 'taken');
    expect(link.streams).toBe(3);
    home.stop();
    expect(clock.pending).toBe(0);
  });
});

describe("the host's project file", () => {
  it("names the team's other agents as its `home`", () => {
    const p = {
      agents: [
        { name: 'near', profile: 'fake' },
        { name: 'far', profile: 'fake', host: 'box' },
        { name: 'gpu1', profile: 'fake', host: 'gpu' },
      ],
    } as unknown as ProjectFile;
    expect(remoteProjectFile(p, 'box', 'web', '/srv/p').home).toEqual({ agents: ['near', 'gpu1'] });
  });
});

/** near's turn here, as a run records it: running, then done with its reply file. */
async function runHere(here: Awaited<ReturnType<typeof side>>, id: string, reply: string): Promise<void> {
  await here.journal.change(id, 'running', 'near is working on it');
  const file = `.jaggers/jobs/${id}.reply.md`;
  await writeDurable(path.join(here.root, file), `---\njob: ${id}\n---\n${reply}\n`);
  await here.journal.change(id, 'done', 'the agent finished its turn', { reply: file }, reply);
}

describe("a host's agent assigning work to an agent of the team elsewhere (jobs and handoffs through the outbox)", () => {
  it('a job waits in the outbox there, is run here under its id, and its end and reply go back to the asker there, once', async () => {
    const { box, here, make } = await setup();
    const v = await box.jobs.create({ id: 'j-0000000b0b01', target: 'near', text: 'run the tests\nand say', fromTerminal: 'jg-far' });
    expect(v).toMatchObject({ state: 'queued', outbox: true, terminalId: remoteKey('near', 'home'), agent: 'near', from: 'jg-far', fromAgent: 'far' });
    expect(v.waiting).toMatch(/^in the outbox: waits for the supervisor that started this host to take it home to near$/);
    // In no queue there.
    expect(box.kicked).toEqual([]);
    expect(terminalsWithWork(box.store.data).size).toBe(0);
    const home = make();
    home.follow('box');
    await until(() => box.store.data.jobs['j-0000000b0b01']?.state === 'starting', 'taken there');
    const j = here.store.data.jobs['j-0000000b0b01']!;
    expect(j).toMatchObject({
      state: 'queued',
      terminalId: 'jg-near',
      agent: 'near',
      from: remoteKey('far', 'box'),
      fromAgent: 'far',
      fromHost: 'box',
      outbox: false,
    });
    expect(await readFile(path.join(here.root, j.prompt), 'utf8')).toBe('run the tests\nand say');
    expect(here.kicked).toContain('jg-near');
    expect(box.store.data.jobs['j-0000000b0b01']!.reason).toBe("taken home: in near's queue there");
    // Taken again (a request sent again after a lost answer) is taken once.
    await box.outbox.taken('j-0000000b0b01');
    expect(box.store.of('job-state')).toHaveLength(1);

    // Its turn here: running there too, then done with the reply, and the result in far's inbox there.
    await here.journal.change('j-0000000b0b01', 'running', 'near is working on it');
    await until(() => box.store.data.jobs['j-0000000b0b01']?.state === 'running', 'running there');
    expect(box.store.data.jobs['j-0000000b0b01']!.reason).toBe('on home: near is working on it');
    const file = '.jaggers/jobs/j-0000000b0b01.reply.md';
    await writeDurable(path.join(here.root, file), '---\njob: j-0000000b0b01\n---\nall 12 pass\n');
    await here.journal.change('j-0000000b0b01', 'done', 'the agent finished its turn', { reply: file }, 'all 12 pass');
    await until(() => box.store.data.jobs['j-0000000b0b01']?.state === 'done', 'done there');
    const there = await box.jobs.result('j-0000000b0b01');
    expect(there).toMatchObject({ reply: 'all 12 pass', job: { reason: 'near on home: the agent finished its turn' } });
    const results = Object.values(box.store.data.messages).filter((m) => m.job === 'j-0000000b0b01');
    expect(results).toMatchObject([{ to: 'jg-far', toAgent: 'far', from: remoteKey('near', 'home'), fromAgent: 'near', outbox: false }]);
    expect(await readFile(path.join(box.root, results[0]!.file), 'utf8')).toMatch(/all 12 pass/);
    // None here (far is not of this machine: its result went back there).
    expect(Object.values(here.store.data.messages)).toEqual([]);
    // Taken again (another pass): nothing new on either side.
    await home.take('box');
    expect(here.store.of('job-created')).toHaveLength(1);
    expect(box.store.of('job-state').filter((e) => e.state === 'done')).toHaveLength(1);
    expect(box.store.of('message-created')).toHaveLength(1);
    expect(await box.outbox.list()).toEqual([]);
    home.stop();
  });

  it('is recorded here once and its end told there once across a lost answer, the host down and a restart here', async () => {
    const { box, here, link, make } = await setup();
    link.cutTaken = true;
    let home = make();
    home.follow('box');
    await box.jobs.create({ id: 'j-0000000b0b02', target: 'near', text: 'again', fromTerminal: 'jg-far' });
    await until(() => here.store.data.jobs['j-0000000b0b02'] !== undefined && !link.cutTaken, 'recorded here, its answer lost');
    // Taken there (its answer lost) and recorded here; then the host goes down and this supervisor restarts.
    link.connected = false;
    home.stop();
    // Ended here while the host is down: nothing told, nothing lost.
    home = make();
    home.follow('box');
    await runHere(here, 'j-0000000b0b02', 'second reply');
    await settle();
    expect(box.store.data.jobs['j-0000000b0b02']!.state).toBe('starting');
    link.connected = true;
    home.follow('box');
    await until(() => box.store.data.jobs['j-0000000b0b02']?.state === 'done', 'its end there after the host came back');
    expect((await box.jobs.result('j-0000000b0b02')).reply).toBe('second reply');
    expect(here.store.of('job-created').map((e) => e.jobId)).toEqual(['j-0000000b0b02']);
    expect(box.store.of('job-state').map((e) => e.state)).toEqual(['starting', 'done']);
    await home.take('box');
    expect(box.store.of('message-created')).toHaveLength(1);
    home.stop();
  });

  it('a handoff there follows the item taken home to its reply; one cancelled there is cancelled here; one this machine refuses fails there with its code', async () => {
    const { box, here, make } = await setup();
    const home = make();
    home.follow('box');
    const asked = box.handoffs.handoff({
      id: 'j-0000000b0b03',
      agent: 'near',
      message: 'review it',
      wait: true,
      headless: true,
      workflow: 'handoff',
      fromTerminal: 'jg-far',
    });
    await until(() => here.store.data.jobs['j-0000000b0b03'] !== undefined, 'taken home');
    expect(here.store.data.jobs['j-0000000b0b03']).toMatchObject({
      work: 'handoff',
      headless: true,
      workflow: 'handoff',
      fromHost: 'box',
      from: remoteKey('far', 'box'),
    });
    expect(here.store.data.jobs['j-0000000b0b03']!.task).toBe(box.store.data.jobs['j-0000000b0b03']!.task);
    await runHere(here, 'j-0000000b0b03', 'looks good');
    const r = await asked;
    expect(r).toMatchObject({ job: 'j-0000000b0b03', agent: 'near', terminalId: remoteKey('near', 'home'), reply: { text: 'looks good' } });
    // A handoff's caller has its reply: no result message.
    expect(box.store.of('message-created')).toHaveLength(0);

    await box.jobs.create({ id: 'j-0000000b0b04', target: 'near', text: 'long one', fromTerminal: 'jg-far' });
    await until(() => box.store.data.jobs['j-0000000b0b04']?.state === 'starting', 'taken');
    await box.jobs.cancel('j-0000000b0b04');
    await until(() => here.store.data.jobs['j-0000000b0b04']?.state === 'cancelled', 'cancelled here too');
    expect(here.store.data.jobs['j-0000000b0b04']!.reason).toMatch(/cancelled by its asker on host box/);

    await box.jobs.create({ id: 'j-0000000b0b05', target: 'gone', text: 'for an agent removed here since', fromTerminal: 'jg-far' });
    await until(() => box.store.data.jobs['j-0000000b0b05']?.state === 'failed', 'failed there');
    expect(box.store.data.jobs['j-0000000b0b05']).toMatchObject({
      code: 'E_AGENT_UNKNOWN',
      reason: expect.stringMatching(/^gone on home: refused: assign: "gone" is neither an agent/),
    });
    expect(here.store.data.jobs['j-0000000b0b05']).toBeUndefined();

    // Taken, and no record of it here (this registry lost it): never run again here; its asker is told.
    await box.jobs.create({ id: 'j-0000000b0b06', target: 'near', text: 'lost here', fromTerminal: 'jg-far' });
    await until(() => here.store.data.jobs['j-0000000b0b06'] !== undefined && box.store.data.jobs['j-0000000b0b06']?.state === 'starting', 'taken');
    delete here.store.data.jobs['j-0000000b0b06'];
    await home.take('box');
    expect(box.store.data.jobs['j-0000000b0b06']).toMatchObject({ state: 'failed', code: 'E_NOT_FOUND' });
    expect(box.store.data.jobs['j-0000000b0b06']!.reason).toMatch(/no record of it is here any more/);
    expect(here.store.data.jobs['j-0000000b0b06']).toBeUndefined();
    home.stop();
  });

  it('refuses there what cannot go home: a worktree, a budget; a name of nobody is unknown', async () => {
    const { box } = await setup();
    await expect(box.jobs.create({ target: 'near', text: 'x', budget: { tokens: 5 } })).rejects.toThrow(
      /assign with a budget .*: near is an agent of the machine that started this host, where this is not supported yet/,
    );
    await expect(box.jobs.create({ target: 'nobody', text: 'x' })).rejects.toThrow(/"nobody" is neither an agent/);
  });
});
