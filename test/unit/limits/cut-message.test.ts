// A message whose turn a usage limit cut (docs/limits.md), on a scripted pane (test/helpers/fake-tui.ts):
// the CLI showed its limit instead of an answer, so the message waits again (pending, its record's
// `limited` says why) and is delivered anew on the next run, once; after MAX_LIMIT_CUTS it stays delivered.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../../src/api/types.js';
import { EventHub } from '../../../src/supervisor/event-hub.js';
import type { TurnEnv } from '../../../src/turns/turn.js';
import { MAX_LIMIT_CUTS } from '../../../src/work/limit-wait.js';
import { runMessage } from '../../../src/work/run-message.js';
import { FakeTui } from '../../helpers/fake-tui.js';
import { tempDirs } from '../../helpers/temp-dir.js';
import { FakeAgents, FakeStore, messageEvent, recordingLog, terminalEvents, testProfile } from '../../helpers/work-fakes.js';

const temp = tempDirs('jaggers-cut-message-');
const T = 'jg-c0de';
const RESET = Date.UTC(2026, 10, 26, 14, 30);
const LIMIT_LINE = '✕ Usage limit reached · resets 2:30pm (UTC)';

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { cwd: root }), messageEvent('m-0123abcd', { file: '.jaggers/inbox/m-0123abcd.md' }));
  const base = testProfile();
  const profile = testProfile({
    detect: { ...base.detect, rules: [{ name: 'usage-limit', status: 'limited', pattern: 'Usage limit reached', lines: 6 }, ...base.detect.rules] },
  });
  const agents = new FakeAgents();
  const e = agents.add({ agent: 'coder', terminalId: T, profile }, 'idle');
  const tui = new FakeTui(e.pane.paneId, profile, 'idle');
  const hub = new EventHub();
  const published: StreamEvent[] = [];
  hub.subscribe((x) => published.push(x));
  const env: TurnEnv = { io: tui, watch: tui, registry: store, ...dirs, log: recordingLog(), emit: () => {}, homeOf: async () => root };
  const limit = { resetAt: RESET, until: RESET, said: 'resets 2:30pm (UTC)' };
  const run = () => runMessage({ env, store, hub, agents, limit: () => limit }, store.data.messages['m-0123abcd']!, e, new AbortController().signal);
  const m = () => store.data.messages['m-0123abcd']!;
  return { store, tui, published, run, m };
}

describe('a message whose turn a usage limit cut', () => {
  it('waits again with why, and is delivered anew on the next run, once', async () => {
    const h = await setup();
    h.tui.limitOn = () => LIMIT_LINE;
    await h.run();
    expect(h.m()).toMatchObject({ state: 'pending', nonce: null, delivered: null, how: null, claims: 1 });
    expect(h.m().limited).toMatchObject({ cuts: 1, resetAt: new Date(RESET).toISOString(), said: 'resets 2:30pm (UTC)' });
    expect(h.m().limited!.reason).toMatch(
      /^its turn was cut by coder's usage limit \(✕ Usage limit reached · resets 2:30pm \(UTC\)\): it is delivered again when the limit resets at /,
    );
    expect(h.published.map((x) => [x.type, x.data.state])).toEqual([
      ['message', 'delivered'],
      ['message', 'pending'],
    ]);
    expect(h.store.events.filter((e) => e.type === 'message-cut')).toHaveLength(1);

    // After the reset: the agent answers; the message goes in again, with a new nonce, and stays delivered.
    h.tui.limitOn = null;
    h.tui.set('idle');
    h.tui.autoReply = () => 'Read it.';
    await h.run();
    expect(h.m()).toMatchObject({ state: 'delivered', claims: 2 });
    expect(h.tui.prompts).toHaveLength(2);
    expect(new Set(h.tui.prompts.map((p) => /\[jg:([0-9a-f]+)\]/.exec(p)![1])).size).toBe(2);
  });

  it(`stays delivered once it was cut ${MAX_LIMIT_CUTS} times`, async () => {
    const h = await setup();
    h.tui.limitOn = () => LIMIT_LINE;
    for (let i = 0; i < MAX_LIMIT_CUTS; i++) {
      h.tui.set('idle');
      await h.run();
    }
    expect(h.m()).toMatchObject({ state: 'delivered', claims: MAX_LIMIT_CUTS });
    expect(h.m().limited?.cuts).toBe(MAX_LIMIT_CUTS - 1);
    expect(h.store.events.filter((e) => e.type === 'message-cut')).toHaveLength(MAX_LIMIT_CUTS - 1);
  });
});
