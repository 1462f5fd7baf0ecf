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

/** One side: a project folder, a registry, an event hub and its inbox. */
async function side(terminal: string, agent: string, o: { home?: string[]; hostOf?: (a: string) => string | null }) {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(terminal, agent));
  const hub = new EventHub();
  const kicked: string[] = [];
  const inbox = new Inbox({
    store,
    agents: new FakeAgents(),
    hub,
    log: recordingLog(),
    dirs,
    runner: { kick: (t) => void kicked.push(t), waiting: () => null },
    ...(o.hostOf ? { hostOf: async (a: string) => o.hostOf!(a) } : {}),
    ...(o.home ? { homeAgents: async () => o.home! } : {}),
  });
  return { root, dirs, store, hub, inbox, kicked };
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
      call: async <T>(method: string, at: string): Promise<T> => {
        if (!this.connected || !this.supervisor) throw new JaggersError('E_SUPERVISOR_DOWN', 'no supervisor answers at box.sock (ECONNREFUSED)');
        this.calls.push(`${method} ${at}`);
        if (method === 'GET' && at === '/v1/outbox') return (await this.box.inbox.outbox()) as T;
        const m = /^\/v1\/outbox\/([^/]+)\/taken$/.exec(at);
        if (method === 'POST' && m) {
          const r = await this.box.inbox.taken(decodeURIComponent(m[1]!));
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
  const make = () => new OutboxHome({ reach: (h) => (h === 'box' ? link.reach() : null), inbox: here.inbox, log: recordingLog(), clock });
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
