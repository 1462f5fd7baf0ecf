// A turn cut by a usage limit (docs/limits.md), on scripted panes (test/helpers/fake-tui.ts), the one
// runner, the real turn runner (src/work/run-turn.ts) and a simulated clock for the limit's reset: the
// job does not end `done` with the limit's message as its reply; it goes back to wait (its record says
// why), runs again once when the reset passes, or moves to the fallback; nothing runs twice.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { parseArtifact } from '../../../src/handover/artifact.js';
import type { JobRecord } from '../../../src/sessions/registry.js';
import { EventHub } from '../../../src/supervisor/event-hub.js';
import type { TurnEnv } from '../../../src/turns/turn.js';
import { moveToFallback } from '../../../src/work/fallback.js';
import { writeDurable } from '../../../src/work/files.js';
import { WorkJournal } from '../../../src/work/journal.js';
import { cutByLimit, MAX_LIMIT_CUTS, type LimitNow } from '../../../src/work/limit-wait.js';
import { Outcomes } from '../../../src/work/outcomes.js';
import { Runner } from '../../../src/work/runner.js';
import { runPaneTurn } from '../../../src/work/run-turn.js';
import { FakeTui } from '../../helpers/fake-tui.js';
import { tempDirs } from '../../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, recordingLog, settle, terminalEvents, testProfile } from '../../helpers/work-fakes.js';

const temp = tempDirs('jaggers-cut-turn-');
const T0 = Date.UTC(2026, 10, 26, 13, 30);
const RESET = Date.UTC(2026, 10, 26, 14, 30);
const CODER = 'jg-c0de';
const HELPER = 'jg-he1p';
const LEAD = 'jg-1ead';
const LIMIT_LINE = '✕ Usage limit reached · resets 2:30pm (UTC)';

/** The test profile, with a usage-limit rule first (as the shipped profiles have it). */
const profile = () => {
  const base = testProfile();
  return testProfile({
    detect: { ...base.detect, rules: [{ name: 'usage-limit', status: 'limited', pattern: 'Usage limit reached', lines: 6 }, ...base.detect.rules] },
  });
};

async function setup(o: { fallback?: string } = {}) {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const clock = new SimulatedClock();
  clock.set(T0);
  const store = new FakeStore(() => clock.now());
  store.seed(
    ...terminalEvents(CODER, 'coder', { cwd: root }),
    ...terminalEvents(HELPER, 'helper', { cwd: root }),
    ...terminalEvents(LEAD, 'lead', { cwd: root }),
  );
  const agents = new FakeAgents();
  const hub = new EventHub();
  const log = recordingLog();
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const outcomes = new Outcomes();
  const tuis = new Map<string, FakeTui>();
  const pane = (agent: string, terminalId: string) => {
    const e = agents.add({ agent, terminalId, profile: profile() }, 'idle');
    const tui = new FakeTui(e.pane.paneId, e.profile!, 'idle');
    tuis.set(e.pane.paneId, tui);
    return { e, tui };
  };
  const coder = pane('coder', CODER);
  const helper = pane('helper', HELPER);
  pane('lead', LEAD);
  // The coder's limit, as its pane's machine reads it: its reset ends the state by a timer on the clock.
  let limit: LimitNow | null = null;
  coder.tui.limitOn = () => null;
  const envOf = (paneId: string): TurnEnv => {
    const tui = tuis.get(paneId)!;
    return { io: tui, watch: tui, registry: store, ...dirs, log, emit: () => {}, homeOf: async () => root };
  };
  const runner: Runner = new Runner({
    data: () => store.data,
    pane: (t) => agents.find(t),
    status: (p) => tuis.get(p)?.status(p),
    limit: (p) => (p === coder.e.pane.paneId && coder.tui.current === 'limited' ? limit : null),
    limited: (t, agent, why) =>
      moveToFallback(
        {
          store,
          journal,
          agents: { find: (n) => agents.find(n), status: (p) => tuis.get(p)?.status(p) },
          fallbackOf: async (a) => (a === 'coder' ? o.fallback : undefined),
          kick: (x) => runner.kick(x),
          log,
        },
        t,
        agent,
        why,
      ),
    run: (item, e, signal) =>
      item.kind === 'job' ? runPaneTurn({ env: envOf(e!.pane.paneId), journal, agents, outcomes, limit: () => limit }, item.j, e, signal) : Promise.resolve(),
    lost: async () => {},
    broken: async (j, err) => void (await journal.change(j.id, 'failed', err.message)),
    log,
  });
  for (const [paneId, tui] of tuis) {
    const terminalId = agents.entries.find((x) => x.pane.paneId === paneId)!.pane.terminalId!;
    tui.onChange(() => runner.kick(terminalId));
  }
  /** The coder's next prompt ends at its limit; the reset, on the simulated clock, makes it idle again. */
  const limitNext = () => {
    let once = true;
    coder.tui.limitOn = () => {
      if (!once) return null;
      once = false;
      limit = { resetAt: RESET, until: RESET, said: 'resets 2:30pm (UTC)' };
      clock.setTimeout(() => coder.tui.set('idle'), RESET - clock.now());
      return LIMIT_LINE;
    };
  };
  const job = async (id: string, text: string) => {
    await writeDurable(path.join(root, '.jaggers', 'jobs', `${id}.md`), text);
    store.seed(jobEvent(id, { terminalId: CODER, from: LEAD, fromAgent: 'lead' }));
    runner.kick(CODER);
  };
  /** Lets the runner look again (the queue's own kicks are promise chains). */
  const quiet = () => settle(20);
  /** Resolves once the job's record, published on the hub, satisfies `ok` (a turn's phases write files: real I/O). */
  const until = (id: string, ok: (j: JobRecord) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        const j = store.data.jobs[id];
        if (!j || !ok(j)) return false;
        off();
        resolve();
        return true;
      };
      const off = hub.subscribe((e) => void (e.type === 'job' && check()));
      check();
    });
  const homeMessages = (id: string) => Object.values(store.data.messages).filter((m) => m.job === id);
  return { root, clock, store, runner, coder, helper, limitNext, job, quiet, until, homeMessages, journal };
}

describe('a turn cut by a usage limit', () => {
  it('does not end done with the limit as its reply: it waits, says why, and runs again once at the reset', async () => {
    const h = await setup();
    h.limitNext();
    h.coder.tui.autoReply = () => 'the real answer';
    await h.job('j-000000000001', 'Write the tests.');
    await h.until('j-000000000001', (j) => j.limited !== null);
    await h.quiet();
    const cut = h.store.data.jobs['j-000000000001']!;
    expect(cut).toMatchObject({
      state: 'queued',
      reply: null,
      reason:
        "its turn was cut by coder's usage limit (✕ Usage limit reached · resets 2:30pm (UTC)): it runs again when the limit resets at 2026-11-26T14:30:00.000Z",
      limited: { cuts: 1, resetAt: '2026-11-26T14:30:00.000Z', said: 'resets 2:30pm (UTC)' },
    });
    expect(h.homeMessages('j-000000000001')).toEqual([]);
    expect(h.runner.waiting(CODER, 'j-000000000001')).toBe(
      "its turn was cut by coder's usage limit (resets 2:30pm (UTC)); it runs again at the limit's reset, 2026-11-26T14:30:00.000Z",
    );
    // Nothing goes in before the reset, however often the runner looks.
    h.clock.increment(59 * 60_000);
    for (let i = 0; i < 3; i++) h.runner.kick(CODER);
    await h.quiet();
    expect(h.coder.tui.prompts).toHaveLength(1);
    h.clock.increment(60_000);
    for (let i = 0; i < 3; i++) h.runner.kick(CODER);
    await h.until('j-000000000001', (j) => j.state === 'done');
    await h.quiet();
    const j = h.store.data.jobs['j-000000000001']!;
    expect(j.state).toBe('done');
    expect(h.coder.tui.prompts).toHaveLength(2);
    expect(j.history.map((x) => x.state)).toEqual(['queued', 'starting', 'running', 'queued', 'starting', 'running', 'done']);
    expect(parseArtifact(await readFile(path.join(h.root, j.reply!), 'utf8')).body).toBe('the real answer\n');
    // One result home, with the real answer, and the record still says it was cut once.
    expect(h.homeMessages('j-000000000001')).toHaveLength(1);
    expect(j.limited?.cuts).toBe(1);
    // Nothing later runs it again.
    h.clock.increment(3600_000);
    h.runner.kick(CODER);
    await h.quiet();
    expect(h.coder.tui.prompts).toHaveLength(2);
  });

  it('with a fallback, the cut job moves there with its handover and runs there once, not again at the reset', async () => {
    const h = await setup({ fallback: 'helper' });
    h.limitNext();
    h.helper.tui.autoReply = () => 'the helper answers';
    await h.job('j-000000000002', 'Review the change.');
    await h.until('j-000000000002', (j) => j.state === 'done');
    await h.quiet();
    const j = h.store.data.jobs['j-000000000002']!;
    expect(j).toMatchObject({ state: 'done', agent: 'helper', terminalId: HELPER, from: LEAD, limited: { cuts: 1 } });
    expect(j.history.map((x) => x.state)).toEqual(['queued', 'starting', 'running', 'queued', 'queued', 'starting', 'running', 'done']);
    expect(j.history[4]!.reason).toMatch(/^moved from coder to helper \(its fallback\): coder hit a usage limit that resets at 2026-11-26T14:30:00.000Z$/);
    // The helper got the same prompt, in a handover file of its own.
    expect(h.helper.tui.prompts).toHaveLength(1);
    const handover = parseArtifact(await readFile(path.join(h.root, j.artifact!), 'utf8'));
    expect(handover.body).toBe('Review the change.\n');
    expect(handover.meta).toMatchObject({ target_agent: 'helper' });
    expect(h.homeMessages('j-000000000002')).toEqual([expect.objectContaining({ to: LEAD, fromAgent: 'helper' })]);
    h.clock.increment(3600_000);
    h.runner.kick(CODER);
    await h.quiet();
    expect(h.coder.tui.prompts).toHaveLength(1);
    expect(h.helper.tui.prompts).toHaveLength(1);
  });

  it(`stops waiting after ${MAX_LIMIT_CUTS} cuts: it fails, E_LIMITED`, async () => {
    const h = await setup();
    await writeDurable(path.join(h.root, '.jaggers', 'jobs', 'j-000000000003.md'), 'x');
    h.store.seed(jobEvent('j-000000000003', { terminalId: CODER }));
    const limit = { resetAt: null, until: RESET, said: null };
    for (let i = 1; i < MAX_LIMIT_CUTS; i++) {
      const j = await cutByLimit(h.journal, h.store.data.jobs['j-000000000003']!, 'coder', ['✕ [API Error: 429]'], limit);
      expect(j).toMatchObject({
        state: 'queued',
        limited: { cuts: i, resetAt: null },
        reason: "its turn was cut by coder's usage limit (✕ [API Error: 429]): it runs again at 2026-11-26T14:30:00.000Z (the limit showed no reset time)",
      });
    }
    // gemini's box: its borders and padding are not the limit's words.
    const box = `│ Usage limit reached for gemini-3.8-flash.${' '.repeat(40)}│`;
    const j = await cutByLimit(h.journal, h.store.data.jobs['j-000000000003']!, 'coder', [box], limit);
    expect(j).toMatchObject({ state: 'failed', code: 'E_LIMITED', limited: { cuts: MAX_LIMIT_CUTS } });
    expect(j!.reason).toBe(
      `its turn was cut by coder's usage limit ${MAX_LIMIT_CUTS} times (the last: Usage limit reached for gemini-3.8-flash.); it no longer waits for a reset`,
    );
  });
});
