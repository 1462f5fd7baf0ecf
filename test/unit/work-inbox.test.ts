// The inbox (src/work/inbox.ts): a message is on disk and in the journal before `send` returns, joins
// its receiver's queue, is stored once for one id; `list` says what the first pending one waits for.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/api/types.js';
import type { JaggersError } from '../../src/errors.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { Inbox } from '../../src/work/inbox.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-inbox-');
const T = 'jg-c0de';

async function setup() {
  const root = await temp();
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder'), ...terminalEvents('jg-b055', 'boss'), ...terminalEvents('jg-01d', 'archived'));
  const agents = new FakeAgents();
  agents.add({ agent: 'coder', terminalId: T }, 'idle');
  agents.add({ agent: 'boss', terminalId: 'jg-b055' }, 'idle');
  const hub = new EventHub();
  const published: StreamEvent[] = [];
  hub.subscribe((e) => published.push(e));
  const kicks: string[] = [];
  let waiting: string | null = 'coder is busy; the next item goes in when it is idle or done';
  const inbox = new Inbox({
    store,
    agents,
    hub,
    log: recordingLog(),
    dirs: { projectRoot: root, jaggersDir: path.join(root, '.jaggers') },
    runner: { kick: (t) => void kicks.push(t), waiting: () => waiting },
  });
  return { root, store, inbox, kicks, published, setWaiting: (w: string | null) => (waiting = w) };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: JaggersError) => `${e.code}: ${e.message}`,
  );

describe('the inbox', () => {
  it("stores a message's file and record before it returns, publishes it and kicks the receiver's queue", async () => {
    const h = await setup();
    const m = await h.inbox.send({ to: 'coder', text: 'look at PR 7\n', from: 'boss' });
    expect(m).toMatchObject({ to: T, toAgent: 'coder', from: 'jg-b055', fromAgent: 'boss', state: 'pending', job: null, bytes: 13 });
    const text = await readFile(path.join(h.root, m.file), 'utf8');
    expect(text).toMatch(new RegExp(`^---\\nmessage: ${m.id}\\nfrom: boss \\(jg-b055\\)\\nto: coder \\(${T}\\)\\nsent: .*\\nreply: "jaggers message boss -m`));
    expect(text.endsWith('---\nlook at PR 7\n')).toBe(true);
    expect(h.published.map((e) => [e.type, e.data.id, e.data.state])).toEqual([['message', m.id, 'queued']]);
    expect(h.kicks).toEqual([T]);
    // A person's message says there is nothing to answer.
    const p = await h.inbox.send({ to: T, text: 'hi' });
    expect(p.fromAgent).toBe('user');
    expect(await readFile(path.join(h.root, p.file), 'utf8')).toContain('reply: "none needed (sent by a person from the command line)"');
  });

  it('stores a message once for one id, and publishes it once', async () => {
    const h = await setup();
    const a = await h.inbox.send({ id: 'm-0123abcd', to: 'coder', text: 'one' });
    const b = await h.inbox.send({ id: 'm-0123abcd', to: 'coder', text: 'two' });
    expect(b).toEqual(a);
    const [c, d] = await Promise.all([h.inbox.send({ id: 'm-4567abcd', to: 'coder', text: 'x' }), h.inbox.send({ id: 'm-4567abcd', to: 'coder', text: 'x' })]);
    expect(c.id).toBe(d.id);
    expect(h.store.of('message-created').map((e) => e.messageId)).toEqual(['m-0123abcd', 'm-4567abcd']);
    expect(h.published.filter((e) => e.type === 'message')).toHaveLength(2);
  });

  it('refuses a bad id, an empty text and an unknown receiver or sender', async () => {
    const h = await setup();
    expect(await codeOf(h.inbox.send({ id: 'j-0123abcd', to: 'coder', text: 'x' }))).toBe('E_USAGE: message id must look like m-0123abcd, got "j-0123abcd"');
    expect(await codeOf(h.inbox.send({ to: 'coder', text: ' \n ' }))).toBe('E_USAGE: message: the text is empty');
    expect(await codeOf(h.inbox.send({ to: 'nobody', text: 'x' }))).toBe('E_AGENT_UNKNOWN: message: unknown agent "nobody": agents are archived, boss, coder');
    expect(await codeOf(h.inbox.send({ to: '__proto__', text: 'x' }))).toMatch(/^E_AGENT_UNKNOWN: message: unknown agent "__proto__"/);
    expect(await codeOf(h.inbox.send({ to: 'coder', text: 'x', from: 'constructor' }))).toMatch(
      /^E_AGENT_UNKNOWN: message --from: unknown agent "constructor"/,
    );
    expect(h.store.of('message-created')).toEqual([]);
    expect(h.kicks).toEqual([]);
  });

  it('takes an agent the registry knows without a window (it is delivered when `up` opens it)', async () => {
    const h = await setup();
    const m = await h.inbox.send({ to: 'archived', text: 'x' });
    expect(m).toMatchObject({ to: 'jg-01d', toAgent: 'archived' });
    expect(h.kicks).toEqual(['jg-01d']);
  });

  it('lists an agent’s messages with how many are pending and what the first one waits for', async () => {
    const h = await setup();
    expect(await h.inbox.list('coder')).toEqual({ agent: 'coder', terminalId: T, waiting: null, pending: 0, messages: [] });
    const a = await h.inbox.send({ to: 'coder', text: 'a' });
    const b = await h.inbox.send({ to: 'coder', text: 'b' });
    await h.inbox.send({ to: 'boss', text: 'c' });
    let v = await h.inbox.list('coder');
    expect([v.pending, v.waiting, v.messages.map((m) => m.id)]).toEqual([2, 'coder is busy; the next item goes in when it is idle or done', [a.id, b.id]]);
    h.setWaiting(null);
    expect((await h.inbox.list(T)).waiting).toBe('being delivered now');
    h.store.seed({ type: 'message-delivered', messageId: a.id, how: 'verified' });
    v = await h.inbox.list('coder');
    expect([v.pending, v.messages.length]).toEqual([1, 2]);
    expect(await codeOf(h.inbox.list('nobody'))).toMatch(/^E_AGENT_UNKNOWN: inbox: unknown agent "nobody"/);
  });
});
