// Delivering an inbox message (src/work/run-message.ts) on a scripted pane (test/helpers/fake-tui.ts) and
// an in-memory registry: each try claimed with a fresh nonce before anything is typed; a claim left by
// a supervisor that died is settled by its nonce on screen first; a failed try throws, claim kept.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/api/types.js';
import type { JaggersError } from '../../src/errors.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import type { TurnEnv } from '../../src/turns/turn.js';
import { runMessage } from '../../src/work/run-message.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, messageEvent, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-run-message-');
const T = 'jg-c0de';

async function setup(status = 'idle') {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { cwd: root }), messageEvent('m-0123abcd', { file: '.jaggers/inbox/m-0123abcd.md' }));
  const agents = new FakeAgents();
  const e = agents.add({ agent: 'coder', terminalId: T }, status);
  const tui = new FakeTui(e.pane.paneId, e.profile!, status);
  const hub = new EventHub();
  const published: StreamEvent[] = [];
  hub.subscribe((x) => published.push(x));
  const env: TurnEnv = { io: tui, watch: tui, registry: store, ...dirs, log: recordingLog(), emit: () => {}, homeOf: async () => root };
  const run = (o: { pane?: typeof e | null; signal?: AbortSignal } = {}) =>
    runMessage(
      { env, store, hub, agents },
      store.data.messages['m-0123abcd']!,
      o.pane === null ? undefined : (o.pane ?? e),
      o.signal ?? new AbortController().signal,
    );
  const m = () => store.data.messages['m-0123abcd']!;
  return { root, store, tui, hub, published, run, m };
}

const error = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (x: JaggersError) => `${x.code}: ${x.message}`,
  );

describe('delivering a message', () => {
  it('claims it with a nonce before typing its pointer, records it delivered, then holds the agent until its turn ends', async () => {
    const h = await setup();
    const claimedWhenTyped: string[] = [];
    const paste = h.tui.paste.bind(h.tui);
    h.tui.paste = async (p, t) => (claimedWhenTyped.push(`${h.m().state} ${h.m().nonce}`), paste(p, t));
    let ended = false;
    const delivered = new Promise<void>((r) => h.hub.subscribe((x) => x.type === 'message' && x.data.state === 'delivered' && r()));
    const run = h.run().then(() => (ended = true));
    await delivered;
    await settle();
    const { nonce } = h.m();
    expect(claimedWhenTyped).toEqual([`claimed ${nonce}`]);
    expect(h.tui.prompts).toEqual([`Read .jaggers/inbox/m-0123abcd.md and do what it asks. [jg:${nonce}]`]);
    expect(h.m()).toMatchObject({ state: 'delivered', how: 'verified', claims: 1 });
    expect(h.published.map((x) => [x.type, x.data.state])).toEqual([['message', 'delivered']]);
    // The receiver's turn on it holds the queue until it ends.
    expect(ended).toBe(false);
    h.tui.finish('Read it.');
    await run;
    expect(h.tui.confirmed).toEqual(['screen']);
  });

  it('a claim left by a supervisor that died, its nonce on screen: delivered as found, not typed again', async () => {
    const h = await setup('busy');
    h.store.seed({ type: 'message-claimed', messageId: 'm-0123abcd', nonce: '0123456789abcdef' });
    h.tui.lines.push('❯ Read .jaggers/inbox/m-0123abcd.md and do what it asks. [jg:0123456789abcdef]');
    await h.run();
    expect(h.tui.pasted).toEqual([]);
    expect(h.m()).toMatchObject({ state: 'delivered', how: 'found-on-screen', claims: 1 });
  });

  it('a claim whose nonce is nowhere is claimed again under a new nonce and typed once', async () => {
    const h = await setup();
    h.store.seed({ type: 'message-claimed', messageId: 'm-0123abcd', nonce: '0123456789abcdef' });
    h.tui.autoReply = () => 'ok';
    await h.run();
    expect(h.m()).toMatchObject({ state: 'delivered', how: 'verified', claims: 2 });
    expect(h.m().nonce).not.toBe('0123456789abcdef');
    expect(h.tui.prompts).toEqual([`Read .jaggers/inbox/m-0123abcd.md and do what it asks. [jg:${h.m().nonce}]`]);
  });

  it('a try that fails throws (for the runner to try again) and keeps its claim; no pane is E_PANE_GONE', async () => {
    const h = await setup('waiting_input');
    expect(await error(h.run())).toMatch(/^E_TIMEOUT: message m-0123abcd to coder: not ready \(waiting_input: coder /);
    expect(h.m()).toMatchObject({ state: 'claimed', claims: 1 });
    expect(h.tui.pasted).toEqual([]);
    expect(await error(h.run({ pane: null }))).toBe('E_PANE_GONE: message m-0123abcd: coder has no window open');
  });

  it('a delivered message is not delivered again; an aborted run stops after its claim', async () => {
    const h = await setup();
    h.store.seed({ type: 'message-delivered', messageId: 'm-0123abcd', how: 'verified' });
    await h.run();
    expect(h.tui.pasted).toEqual([]);

    const g = await setup();
    const stop = new AbortController();
    stop.abort();
    await g.run({ signal: stop.signal });
    expect(g.m().state).toBe('claimed');
    expect(g.tui.pasted).toEqual([]);
  });
});
