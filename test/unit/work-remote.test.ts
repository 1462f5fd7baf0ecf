// Work for an agent on another host (src/work/remote-work.ts) run by the one runner (src/work/runner.ts)
// on an in-memory registry, a fake host supervisor (its API records a job id once, as the real one does)
// and a simulated clock: the item is recorded there once across a cut connection and a restart here,
// waits while the host's connection is down and goes on when it is back, and its end and reply come here.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import type { JobView } from '../../src/api/types.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import type { JobState } from '../../src/sessions/registry.js';
import { writeDurable } from '../../src/work/files.js';
import { WorkJournal } from '../../src/work/journal.js';
import { RemoteWork, remoteKey, type HostReach } from '../../src/work/remote-work.js';
import { Runner } from '../../src/work/runner.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';
import { Inbox } from '../../src/work/inbox.js';
import { Jobs } from '../../src/work/jobs.js';
import { readFile } from 'node:fs/promises';

const temp = tempDirs('jaggers-remote-work-');

/** Let the runner go on (its file reads and writes are real) until `ok` holds; fails with `what` after 5 s. */
/** What the last runner made shows, for a failure's message. */
let seen: () => unknown = () => null;
async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; saw ${JSON.stringify(seen())}`);
    await new Promise<void>((r) => setTimeout(r, 2));
  }
  await settle();
}
const KEY = remoteKey('far', 'box');

/** A host's supervisor as its API answers: jobs recorded by id, a wait that answers when the job ends. */
class FakeHostSupervisor {
  state = 'connected';
  detail = 'connected';
  readonly jobs = new Map<string, { id: string; target: string; text: string; state: JobState; reason: string; reply: string | null }>();
  readonly posts: string[] = [];
  readonly handoffs: { id: string; agent: string; message: string; task: string; wait: boolean }[] = [];
  readonly messages = new Map<string, { id: string; to: string; text: string; from?: string; state: 'pending' | 'delivered'; how: string | null }>();
  /** The next answer of this request is lost (the request was taken; the connection dropped before the answer). */
  cutNext: 'POST' | 'wait' | null = null;
  private waiters: { id: string; resolve(v: JobView): void; reject(e: Error): void }[] = [];

  private streams = new Set<{ onEvent(e: { type: string; data: Record<string, unknown> }): void; end(): void }>();

  reach = (): HostReach => ({
    api: { call: (m, p, b) => this.call(m, p, b) as never, events: (_p, onEvent, o) => this.events(onEvent, o?.signal) },
    view: { state: this.state, detail: this.detail },
  });

  /** The event stream: each job's change, until it is stopped or the connection drops. */
  events(onEvent: (e: { type: string; data: Record<string, unknown> }) => void, signal?: AbortSignal): Promise<void> {
    if (this.state !== 'connected') return Promise.reject(new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers', { cause: { connect: true } }));
    return new Promise((resolve) => {
      const s = {
        onEvent,
        end: () => {
          this.streams.delete(s);
          resolve();
        },
      };
      this.streams.add(s);
      signal?.addEventListener('abort', s.end, { once: true });
    });
  }

  private view(id: string): JobView {
    return { ...this.jobs.get(id)!, code: null, waiting: null } as unknown as JobView;
  }

  private down(): JaggersError {
    return new JaggersError('E_SUPERVISOR_DOWN', 'the supervisor at box.sock closed the connection before answering (ECONNRESET): did it exit?');
  }

  async call(method: string, at: string, body?: unknown): Promise<unknown> {
    if (this.state !== 'connected')
      throw new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers at box.sock (ECONNREFUSED)', { cause: { connect: true } });
    if (method === 'POST' && at === '/v1/jobs') {
      const b = body as { id: string; target: string; text: string };
      this.posts.push(b.id);
      if (!this.jobs.has(b.id)) this.jobs.set(b.id, { id: b.id, target: b.target, text: b.text, state: 'queued', reason: 'recorded', reply: null });
      if (this.cutNext === 'POST') {
        this.cutNext = null;
        throw this.down();
      }
      return this.view(b.id);
    }
    if (method === 'POST' && at === '/v1/handoffs') {
      const b = body as { id: string; agent: string; message: string; task: string; wait: boolean };
      this.posts.push(b.id);
      this.handoffs.push(b);
      if (!this.jobs.has(b.id)) this.jobs.set(b.id, { id: b.id, target: b.agent, text: b.message, state: 'queued', reason: 'recorded', reply: null });
      return { job: b.id, task: b.task };
    }
    if (method === 'POST' && at === '/v1/messages') {
      const b = body as { id: string; to: string; text: string; from?: string };
      this.posts.push(b.id);
      if (!this.messages.has(b.id)) this.messages.set(b.id, { id: b.id, to: b.to, text: b.text, from: b.from, state: 'pending', how: null });
      if (this.cutNext === 'POST') {
        this.cutNext = null;
        throw this.down();
      }
      return { ...this.messages.get(b.id)! };
    }
    const m = /^\/v1\/jobs\/([^/?]+)(?:\/(wait|result|cancel))?/.exec(at);
    if (!m) throw new Error(`unexpected ${method} ${at}`);
    const id = decodeURIComponent(m[1]!);
    if (m[2] === undefined) return this.view(id);
    if (m[2] === 'result') {
      const j = this.jobs.get(id)!;
      return { job: this.view(id), reply: j.reply, artifact: `.jaggers/handover/${id}_reply.md` };
    }
    if (m[2] === 'cancel') {
      this.set(id, 'cancelled', 'cancelled by the user');
      return this.view(id);
    }
    if (this.cutNext === 'wait') {
      this.cutNext = null;
      throw this.down();
    }
    const j = this.jobs.get(id)!;
    if (['done', 'failed', 'cancelled'].includes(j.state)) return this.view(id);
    return new Promise((resolve, reject) => this.waiters.push({ id, resolve, reject }));
  }

  set(id: string, state: JobState, reason: string, reply: string | null = null): void {
    Object.assign(this.jobs.get(id)!, { state, reason, reply });
    for (const st of [...this.streams]) st.onEvent({ type: 'job', data: { id, state, reason } });
    // A wait answers at the item's end (or its timeout, never reached here).
    if (!['done', 'failed', 'cancelled'].includes(state)) return;
    const ready = this.waiters.filter((w) => w.id === id);
    this.waiters = this.waiters.filter((w) => w.id !== id);
    for (const w of ready) w.resolve(this.view(id));
  }

  /** The host's supervisor delivered a message to its agent. */
  delivered(id: string, how: string): void {
    Object.assign(this.messages.get(id)!, { state: 'delivered', how });
    for (const st of [...this.streams]) st.onEvent({ type: 'message', data: { id, state: 'delivered' } });
  }

  /** The connection drops: requests under way end without an answer. */
  drop(detail = 'retrying in 4 s (the connection dropped)'): void {
    this.state = 'retrying';
    this.detail = detail;
    for (const w of this.waiters.splice(0)) w.reject(this.down());
    for (const st of [...this.streams]) st.end();
  }
}

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents('jg-near', 'near'));
  const hub = new EventHub();
  const log = recordingLog();
  const clock = new FakeClock();
  const host = new FakeHostSupervisor();
  let connected = true;
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const make = () => {
    const remote = new RemoteWork({
      journal,
      store,
      hub,
      dirs,
      reach: () => (connected ? host.reach() : null),
      clock,
      log,
      teamAgent: async (name) => name === 'near',
    });
    const runner = new Runner({
      data: () => store.data,
      pane: () => undefined,
      status: () => undefined,
      run: (item, _e, signal) => (item.kind === 'job' ? remote.run(item.j, signal) : remote.deliver(item.m, signal)),
      remote: (host) => remote.blocked(host),
      lost: async () => {},
      broken: async (j, err) => void (await journal.change(j.id, 'failed', err.message)),
      log,
    });
    seen = () => ({ waiting: runner.waiting(KEY), runs: runner.current(KEY), jobs: Object.values(store.data.jobs).map((j) => [j.id, j.state, j.reason]) });
    return { remote, runner };
  };
  const assign = async (id: string, text: string, from: string | null = null) => {
    await writeDurable(path.join(dirs.jaggersDir, 'jobs', `${id}.md`), text);
    store.seed(jobEvent(id, { target: 'far', terminalId: KEY, host: 'box', from }));
  };
  const inbox = new Inbox({
    store,
    agents: new FakeAgents(),
    hub,
    log,
    dirs,
    runner: { kick: () => {}, waiting: () => null },
    hostOf: async (a) => (a === 'far' ? 'box' : null),
  });
  return { root, dirs, store, host, clock, journal, make, assign, inbox, setConnected: (v: boolean) => (connected = v) };
}

const state = (h: Awaited<ReturnType<typeof setup>>, id: string) => h.store.data.jobs[id]!.state;

describe('a job for an agent on another host', () => {
  it('is recorded there under its own id, followed to its end, and its reply is copied here (and sent home)', async () => {
    const h = await setup();
    const { runner } = h.make();
    await h.assign('j-000000000001', 'write the tests', 'jg-near');
    runner.kick(KEY);
    await until(() => h.store.data.jobs['j-000000000001']!.reason.startsWith('forwarded'), 'the item forwarded');
    expect(h.host.jobs.get('j-000000000001')).toMatchObject({ target: 'far', text: 'write the tests', state: 'queued' });
    expect(h.store.data.jobs['j-000000000001']).toMatchObject({ state: 'starting', reason: 'forwarded to far on host box; queued there' });
    h.host.set('j-000000000001', 'running', 'far took the prompt (busy)');
    await until(() => state(h, 'j-000000000001') === 'running', 'running here');
    h.host.set('j-000000000001', 'done', 'the agent finished its turn', 'all 12 tests pass');
    await until(() => state(h, 'j-000000000001') === 'done', 'done here');
    const j = h.store.data.jobs['j-000000000001']!;
    expect(j).toMatchObject({ state: 'done', reason: 'far on host box: the agent finished its turn', reply: '.jaggers/jobs/j-000000000001.reply.md' });
    const copied = await readFile(path.join(h.root, j.reply!), 'utf8');
    expect(copied).toMatch(/^---\njob: j-000000000001\nagent: far\nhost: box\n/);
    expect(copied.endsWith('---\nall 12 tests pass\n')).toBe(true);
    // Home: the result in the inbox of whoever assigned it, as for a local job.
    const home = Object.values(h.store.data.messages);
    expect(home).toHaveLength(1);
    expect(home[0]).toMatchObject({ to: 'jg-near', job: 'j-000000000001', fromAgent: 'far' });
    expect(h.host.posts).toEqual(['j-000000000001']);
    runner.stop();
  });

  it('counts the tokens its turn spent there here too (agent and session far@box, the job), once', async () => {
    const h = await setup();
    let { runner } = h.make();
    const spent = { 'claude-sonnet-4-5': { input: 1200, output: 340, cacheRead: 5000, cacheWrite: 60 } };
    await h.assign('j-00000000000a', 'count');
    runner.kick(KEY);
    await until(() => h.store.data.jobs['j-00000000000a']!.reason.startsWith('forwarded'), 'the item forwarded');
    Object.assign(h.host.jobs.get('j-00000000000a')!, { usage: spent });
    h.host.set('j-00000000000a', 'done', 'the agent finished its turn', 'counted');
    await until(() => state(h, 'j-00000000000a') === 'done', 'done here');
    expect(h.store.data.jobs['j-00000000000a']!.usage).toEqual(spent);
    expect(h.store.data.usage.agents[KEY]).toEqual(spent);
    expect(h.store.data.usage.sessions[KEY]).toEqual(spent);
    expect(h.store.of('usage')).toHaveLength(1);
    runner.stop();
    // Counted by a supervisor that died before it journaled the end: the next one copies the end, not the tokens again.
    ({ runner } = h.make());
    await h.assign('j-00000000000b', 'count again');
    h.store.seed({
      type: 'usage',
      terminalId: KEY,
      agent: KEY,
      sessionId: KEY,
      jobId: 'j-00000000000b',
      task: null,
      reader: 'remote',
      turn: spent,
      session: spent,
    });
    h.host.jobs.set('j-00000000000b', {
      id: 'j-00000000000b',
      target: 'far',
      text: 'count again',
      state: 'done',
      reason: 'the agent finished its turn',
      reply: 'again',
      usage: spent,
    } as never);
    runner.kick(KEY);
    await until(() => state(h, 'j-00000000000b') === 'done', 'the second done here');
    expect(h.store.of('usage')).toHaveLength(2);
    expect(h.store.data.usage.agents[KEY]).toEqual({ 'claude-sonnet-4-5': { input: 2400, output: 680, cacheRead: 10000, cacheWrite: 120 } });
    runner.stop();
  });

  it('is created once there across an answer lost to a cut connection and a restart here', async () => {
    const h = await setup();
    let { runner } = h.make();
    await h.assign('j-000000000002', 'refactor');
    h.host.cutNext = 'POST';
    runner.kick(KEY);
    // Taken there, the answer lost while the connection was still up: asked again after a pause.
    await until(() => h.clock.pending > 0, 'the pause');
    expect(h.host.jobs.size).toBe(1);
    h.clock.advance(1000);
    await until(() => h.host.posts.length === 2, 'the request sent again');
    await until(() => h.store.data.jobs['j-000000000002']!.reason.startsWith('forwarded'), 'the item forwarded');
    expect(h.host.jobs.size).toBe(1);
    // This supervisor killed (-9): the next one follows the item from the phase the journal has.
    runner.stop();
    ({ runner } = h.make());
    runner.kickAll();
    await until(() => h.host.posts.length === 3, 'the request of the next supervisor');
    expect(h.host.jobs.size).toBe(1);
    h.host.set('j-000000000002', 'done', 'the agent finished its turn', 'done refactoring');
    await until(() => state(h, 'j-000000000002') === 'done', 'done here');
    expect(h.store.of('job-state').filter((e) => e.jobId === 'j-000000000002' && e.state === 'done')).toHaveLength(1);
    runner.stop();
  });

  it("asks again at once, not after its pause, when the host's supervisor was started again (wake)", async () => {
    const h = await setup();
    const { runner, remote } = h.make();
    await h.assign('j-00000000000c', 'refactor');
    h.host.cutNext = 'POST';
    runner.kick(KEY);
    await until(() => h.clock.pending > 0, 'the pause');
    remote.wake('other-host');
    await new Promise((r) => setImmediate(r));
    expect(h.host.posts).toHaveLength(1);
    remote.wake('box');
    await until(() => h.host.posts.length === 2, 'the request sent again without the clock moving');
    await until(() => h.store.data.jobs['j-00000000000c']!.reason.startsWith('forwarded'), 'the item forwarded');
    h.host.set('j-00000000000c', 'done', 'the agent finished its turn', 'done');
    await until(() => state(h, 'j-00000000000c') === 'done', 'done here');
    runner.stop();
  });

  it('waits while the host is down, says why, and goes on once the connection is back', async () => {
    const h = await setup();
    const { runner, remote } = h.make();
    h.host.drop('retrying in 8 s (the connection dropped: Connection reset)');
    await h.assign('j-000000000003', 'build it');
    runner.kick(KEY);
    await settle();
    expect(h.host.jobs.size).toBe(0);
    expect(state(h, 'j-000000000003')).toBe('queued');
    expect(runner.waiting(KEY, 'j-000000000003')).toBe('waits for host box: the connection is retrying in 8 s (the connection dropped: Connection reset)');
    // Back: the connection's change kicks the queue.
    h.host.state = 'connected';
    runner.kickAll();
    await until(() => h.host.jobs.has('j-000000000003'), 'the item there');
    h.host.set('j-000000000003', 'running', 'far took the prompt (busy)');
    await until(() => state(h, 'j-000000000003') === 'running', 'running here');
    // Cut in the middle of its turn: it waits again, in flight, and follows the same item once back.
    h.host.drop();
    await until(() => runner.current(KEY) === null, 'the run given up');
    expect(state(h, 'j-000000000003')).toBe('running');
    expect(runner.waiting(KEY, 'j-000000000003')).toBe('waits for host box: the connection is retrying in 4 s (the connection dropped)');
    expect(remote.waiting(h.store.data.jobs['j-000000000003']!)).toBeNull();
    h.host.state = 'connected';
    runner.kickAll();
    await until(() => h.host.posts.length === 2, 'the item asked for again');
    h.host.set('j-000000000003', 'done', 'the agent finished its turn', 'built');
    await until(() => state(h, 'j-000000000003') === 'done', 'done here');
    expect(h.host.jobs.size).toBe(1);
    runner.stop();
  });

  it('with no connection kept to the host, it waits for `up`', async () => {
    const h = await setup();
    h.setConnected(false);
    const { runner } = h.make();
    await h.assign('j-000000000004', 'x');
    runner.kick(KEY);
    await settle();
    expect(runner.waiting(KEY, 'j-000000000004')).toBe('waits for host box: this supervisor keeps no connection to it (run `jaggers up`)');
    runner.stop();
  });

  it('an item the host refuses fails with its code; one that failed there fails here', async () => {
    const h = await setup();
    const { runner } = h.make();
    await h.assign('j-000000000005', 'x');
    const call = h.host.call.bind(h.host);
    h.host.call = async (m, p, b) => {
      if (m === 'POST') throw new JaggersError('E_AGENT_UNKNOWN', 'assign: unknown agent "far": agents are (none)');
      return call(m, p, b);
    };
    runner.kick(KEY);
    await until(() => state(h, 'j-000000000005') === 'failed', 'failed here');
    expect(h.store.data.jobs['j-000000000005']).toMatchObject({ code: 'E_AGENT_UNKNOWN', reason: 'host box: assign: unknown agent "far": agents are (none)' });
    h.host.call = call;
    await h.assign('j-000000000006', 'y');
    runner.kick(KEY);
    await until(() => h.host.jobs.has('j-000000000006'), 'the item there');
    h.host.set('j-000000000006', 'failed', 'far never became ready (error)');
    await until(() => state(h, 'j-000000000006') === 'failed', 'failed here');
    expect(h.store.data.jobs['j-000000000006']).toMatchObject({ reason: 'on host box: far never became ready (error)' });
    runner.stop();
  });
});

describe('a handoff to an agent on another host', () => {
  it("goes through the host supervisor's handoffs (its handover file written there) under its id and task; its reply is copied here", async () => {
    const h = await setup();
    const { runner } = h.make();
    await writeDurable(path.join(h.dirs.jaggersDir, 'jobs', 'j-00000000000a.md'), 'review the diff');
    h.store.seed(
      jobEvent('j-00000000000a', { target: 'far', terminalId: KEY, host: 'box', work: 'handoff', task: 't-0000beef', workflow: 'handoff', timeoutMs: 600_000 }),
    );
    runner.kick(KEY);
    await until(() => h.host.jobs.has('j-00000000000a'), 'the handoff there');
    expect(h.host.handoffs).toEqual([
      { id: 'j-00000000000a', agent: 'far', message: 'review the diff', wait: false, task: 't-0000beef', workflow: 'handoff', timeout: 600 },
    ]);
    h.host.set('j-00000000000a', 'done', 'the agent finished its turn', 'looks good');
    await until(() => state(h, 'j-00000000000a') === 'done', 'done here');
    const j = h.store.data.jobs['j-00000000000a']!;
    expect(await readFile(path.join(h.root, j.reply!), 'utf8')).toMatch(/\nlooks good\n$/);
    // A handoff's caller waits for its reply itself: nothing goes to an inbox.
    expect(Object.keys(h.store.data.messages)).toEqual([]);
    runner.stop();
  });
  it('a headless one runs headless there (its conversation pinned there)', async () => {
    const h = await setup();
    const { runner } = h.make();
    await writeDurable(path.join(h.dirs.jaggersDir, 'jobs', 'j-00000000000c.md'), 'summarise');
    h.store.seed(jobEvent('j-00000000000c', { target: 'far', terminalId: KEY, host: 'box', work: 'handoff', task: 't-0000beef', headless: true }));
    runner.kick(KEY);
    await until(() => h.host.jobs.has('j-00000000000c'), 'the handoff there');
    expect(h.host.handoffs).toEqual([{ id: 'j-00000000000c', agent: 'far', message: 'summarise', wait: false, headless: true, task: 't-0000beef' }]);
    h.host.set('j-00000000000c', 'done', 'the headless turn ended', 'the summary');
    await until(() => state(h, 'j-00000000000c') === 'done', 'done here');
    runner.stop();
  });
});

describe("a workflow's turn for an agent on another host", () => {
  it("goes through the host's handoffs under its id and task, with the files of this project its prompt names; its reply is copied here", async () => {
    const h = await setup();
    const { runner } = h.make();
    const draft = '.jaggers/handover/turn_1_ab12.reply.md';
    await writeDurable(path.join(h.root, draft), '---\nturn: 1\n---\nthe draft, by near\n');
    await writeDurable(path.join(h.dirs.jaggersDir, 'jobs', 'j-0000000000c1.md'), `Review the draft:\n- draft (by near): ${draft}\n`);
    h.store.seed(
      jobEvent('j-0000000000c1', {
        target: 'far',
        terminalId: KEY,
        host: 'box',
        work: 'turn',
        task: 't-0000f10e',
        workflow: 'pair',
        timeoutMs: 605_000,
        carry: [draft],
      }),
    );
    runner.kick(KEY);
    await until(() => h.host.jobs.has('j-0000000000c1'), 'the turn there');
    expect(h.host.handoffs).toEqual([
      {
        id: 'j-0000000000c1',
        agent: 'far',
        message: `Review the draft:\n- draft (by near): ${draft}\n`,
        wait: false,
        task: 't-0000f10e',
        workflow: 'pair',
        timeout: 605,
        files: [{ path: draft, text: '---\nturn: 1\n---\nthe draft, by near\n' }],
      },
    ]);
    expect(h.store.data.jobs['j-0000000000c1']).toMatchObject({ state: 'starting', work: 'turn', carry: [draft] });
    h.host.set('j-0000000000c1', 'done', 'the agent finished its turn', 'the review, by far');
    await until(() => state(h, 'j-0000000000c1') === 'done', 'done here');
    const j = h.store.data.jobs['j-0000000000c1']!;
    expect(j.reply).toBe('.jaggers/jobs/j-0000000000c1.reply.md');
    expect(await readFile(path.join(h.root, j.reply!), 'utf8')).toMatch(/\nthe review, by far\n$/);
    expect(h.host.posts).toEqual(['j-0000000000c1']);
    runner.stop();
  });

  it('a carried file that is no longer here fails the turn, naming it; nothing is sent', async () => {
    const h = await setup();
    const { runner } = h.make();
    await writeDurable(path.join(h.dirs.jaggersDir, 'jobs', 'j-0000000000c2.md'), 'Review .jaggers/handover/gone.reply.md');
    h.store.seed(
      jobEvent('j-0000000000c2', { target: 'far', terminalId: KEY, host: 'box', work: 'turn', task: 't-0000f10e', carry: ['.jaggers/handover/gone.reply.md'] }),
    );
    runner.kick(KEY);
    await until(() => state(h, 'j-0000000000c2') === 'failed', 'failed here');
    expect(h.store.data.jobs['j-0000000000c2']!.reason).toContain('.jaggers/handover/gone.reply.md');
    expect(h.host.posts).toEqual([]);
    runner.stop();
  });
});

describe('a message for an agent on another host', () => {
  it('is stored here, sent there under its own id (once across a lost answer and a host down), delivered here when it is there', async () => {
    const h = await setup();
    const { runner } = h.make();
    const m = await h.inbox.send({ id: 'm-0000aaaa', to: 'far', text: 'line one\nline two, exactly', from: 'near' });
    expect(m).toMatchObject({ to: KEY, toAgent: 'far', host: 'box', fromAgent: 'near', state: 'pending' });
    h.host.cutNext = 'POST';
    runner.kick(KEY);
    await until(() => h.clock.pending > 0, 'the pause after the lost answer');
    expect(h.store.data.messages['m-0000aaaa']!.state).toBe('claimed');
    // The host goes down meanwhile: the message waits for it, claimed, and says why.
    h.host.drop();
    h.clock.advance(1000);
    await until(() => runner.current(KEY) === null, 'the run given up');
    expect(runner.waiting(KEY, 'm-0000aaaa')).toBe('waits for host box: the connection is retrying in 4 s (the connection dropped)');
    h.host.state = 'connected';
    runner.kickAll();
    await until(() => h.host.posts.length === 2, 'the message sent again');
    expect(h.host.messages.size).toBe(1);
    // From near, an agent of the team: named there, so far's reply comes home (through that host's outbox).
    expect(h.host.messages.get('m-0000aaaa')).toMatchObject({ to: 'far', text: 'line one\nline two, exactly', from: 'near', state: 'pending' });
    h.host.delivered('m-0000aaaa', 'verified');
    await until(() => h.store.data.messages['m-0000aaaa']!.state === 'delivered', 'delivered here');
    expect(h.store.data.messages['m-0000aaaa']).toMatchObject({ how: 'verified', claims: 1 });
    expect(h.store.of('message-delivered')).toHaveLength(1);
    expect(h.host.messages.size).toBe(1);
    // Listed in its inbox here, as a local agent's.
    expect(await h.inbox.list('far')).toMatchObject({ agent: 'far', terminalId: KEY, pending: 0 });
    runner.stop();
  });
});

describe('assign and cancel of a job for an agent on another host (src/work/jobs.ts)', () => {
  async function jobsOn(h: Awaited<ReturnType<typeof setup>>, remote: RemoteWork) {
    const kicks: string[] = [];
    const aborted: string[] = [];
    const jobs = new Jobs({
      store: h.store,
      journal: h.journal,
      agents: new FakeAgents(),
      hub: new EventHub(),
      log: recordingLog(),
      dirs: h.dirs,
      runner: { kick: (t) => void kicks.push(t), waiting: () => null, abort: (id) => void aborted.push(id) },
      workers: { pump: () => {}, waiting: () => '' },
      checkProfile: async (name) => {
        throw new JaggersError('E_PROFILE_UNKNOWN', `unknown profile ${JSON.stringify(name)}: known profiles: claude`);
      },
      interrupt: async () => {},
      untilEvent: async () => {},
      hostOf: async (a) => (a === 'far' ? 'box' : null),
      remote,
    });
    return { jobs, kicks, aborted };
  }

  it("records it for the agent's queue here, with its host; refuses what a host cannot do yet", async () => {
    const h = await setup();
    const { remote } = h.make();
    const { jobs, kicks } = await jobsOn(h, remote);
    const v = await jobs.create({ id: 'j-0000000000b1', target: 'far', text: 'go', fromTerminal: 'jg-near' });
    expect(v).toMatchObject({ target: 'far', agent: 'far', terminalId: KEY, host: 'box', kind: 'agent', work: 'job', from: 'jg-near', state: 'queued' });
    expect(kicks).toEqual([KEY]);
    await expect(jobs.create({ target: 'far', text: 'go', worktree: true })).rejects.toThrow(
      'assign --worktree: far is an agent on host box, where this is not supported yet',
    );
    await expect(jobs.create({ target: 'far', text: 'go', budget: { tokens: 10 } })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(jobs.create({ target: 'nowhere', text: 'go' })).rejects.toMatchObject({ code: 'E_AGENT_UNKNOWN' });
    // A workflow's turn (its task's) is forwarded too, with the files it carries; a task's own job stays here.
    const turn = await jobs.create({
      id: 'j-0000000000b3',
      target: 'far',
      text: 'review',
      task: 't-0000f10e',
      workflow: 'pair',
      work: 'turn',
      carry: ['.jaggers/a.md'],
    });
    expect(turn).toMatchObject({ terminalId: KEY, host: 'box', work: 'turn', task: 't-0000f10e', carry: ['.jaggers/a.md'] });
    await expect(jobs.create({ target: 'far', text: 'go', task: 't-0000f10e' })).rejects.toMatchObject({ code: 'E_AGENT_UNKNOWN' });
  });

  it('cancel: cancelled here and there', async () => {
    const h = await setup();
    const { runner, remote } = h.make();
    const { jobs, aborted } = await jobsOn(h, remote);
    await h.assign('j-0000000000b2', 'a long one');
    runner.kick(KEY);
    await until(() => h.host.jobs.has('j-0000000000b2'), 'the job there');
    h.host.set('j-0000000000b2', 'running', 'far took the prompt (busy)');
    await until(() => state(h, 'j-0000000000b2') === 'running', 'running here');
    await jobs.cancel('j-0000000000b2');
    expect(h.host.jobs.get('j-0000000000b2')!.state).toBe('cancelled');
    expect(h.store.data.jobs['j-0000000000b2']).toMatchObject({ state: 'cancelled', reason: 'cancelled by the user while running; cancelled on host box too' });
    expect(aborted).toEqual(['j-0000000000b2']);
    runner.stop();
  });
});
