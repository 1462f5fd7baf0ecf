// Context use (src/usage/context.ts, src/work/context.ts): the last answer's prompt as a share of the
// model's window, the event past the threshold (once per crossing), and the CLI's compaction command
// queued with `autoCompact` as an item of its own that the runner types between turns, before the items
// that wait and never in the middle of a turn.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeUsageFold } from '../../../src/clis/claude/usage.js';
import { usageOfFiles } from '../../../src/clis/shared/usage-files.js';
import type { NewJournalEvent } from '../../../src/sessions/events.js';
import { contextUse, contextWindows, windowOf } from '../../../src/usage/context.js';
import { ContextWatch, type ContextSettings } from '../../../src/work/context.js';
import { queueOf, type WorkItem } from '../../../src/work/queue.js';
import { Runner } from '../../../src/work/runner.js';
import { deferred, FakeAgents, FakeStore, jobEvent, recordingLog, settle, terminalEvents } from '../../helpers/work-fakes.js';

const T = 'jg-c0de';

const usageWith = (tokens: number, model = 'claude-sonnet-4-5'): NewJournalEvent => ({
  type: 'usage',
  terminalId: T,
  agent: 'coder',
  sessionId: 's-1',
  jobId: null,
  task: null,
  reader: 'claude',
  turn: { [model]: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } },
  session: { [model]: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } },
  context: { model, tokens },
});

describe('context use', () => {
  it("is the prompt's share of the model's window; a date suffix finds the bare name; jaggers.json overrides", () => {
    const w = contextWindows({ 'qwen3-coder-plus': 1_000_000 });
    expect(windowOf(w, 'claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(contextUse(w, { model: 'claude-sonnet-4-5', tokens: 170_000 })).toEqual({
      model: 'claude-sonnet-4-5',
      tokens: 170_000,
      window: 200_000,
      percent: 85,
    });
    expect(contextUse(w, { model: 'qwen3-coder-plus', tokens: 1234 }).percent).toBe(0.1);
    // A model with no known window: no share, never a guess.
    expect(contextUse(w, { model: 'stub-model', tokens: 5 })).toMatchObject({ window: null, percent: null });
  });

  it("comes from the session's last answer, as the usage reader folds it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'jaggers-ctx-'));
    try {
      const file = path.join(dir, 's.jsonl');
      const entry = (id: string, input: number, read: number) =>
        JSON.stringify({
          timestamp: '2026-11-26T12:00:00.000Z',
          requestId: `r-${id}`,
          message: {
            id: `m-${id}`,
            model: 'claude-sonnet-4-5',
            usage: { input_tokens: input, output_tokens: 9, cache_read_input_tokens: read, cache_creation_input_tokens: 7 },
          },
        });
      await writeFile(file, `${entry('1', 10, 1000)}\n${entry('2', 20, 5000)}\n`);
      const u = await usageOfFiles([file], 'test-context', claudeUsageFold);
      expect(u?.last).toEqual({
        model: 'claude-sonnet-4-5',
        tokens: { input: 20, output: 9, cacheRead: 5000, cacheWrite: 7 },
        at: Date.parse('2026-11-26T12:00:00.000Z'),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function setup(s: Partial<ContextSettings> = {}, command: string | null = '/compact') {
  const store = new FakeStore(() => Date.parse('2026-11-26T12:00:00Z'));
  store.seed(...terminalEvents(T, 'coder'));
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const compacts: string[] = [];
  const watch = new ContextWatch({
    data: () => store.data,
    hub: { publish: (type, data) => events.push({ type, data }) },
    log: recordingLog(),
    settings: async () => ({ windows: contextWindows(), compactAt: () => undefined, autoCompact: () => true, ...s }),
    compactCommand: () => command ?? undefined,
    compact: async (terminalId, _agent, text) => {
      const id = `j-${String(compacts.length + 1).padStart(12, 'c')}`;
      compacts.push(text);
      store.seed(jobEvent(id, { terminalId, work: 'compact', name: 'compact' }));
      return { id };
    },
  });
  return { store, watch, events, compacts };
}

describe('the context threshold', () => {
  it('emits one event per crossing of compactAt (default 85%) and queues the compaction once', async () => {
    const h = setup();
    h.store.seed(usageWith(100_000));
    await h.watch.turnEnded(T);
    expect(h.watch.of(T)).toMatchObject({ percent: 50, compactAt: 85, window: 200_000 });
    expect(h.events).toEqual([]);
    h.store.seed(usageWith(172_000));
    await h.watch.turnEnded(T);
    expect(h.events).toEqual([
      { type: 'context', data: expect.objectContaining({ agent: 'coder', terminalId: T, percent: 86, compactAt: 85, compact: 'j-ccccccccccc1' }) },
    ]);
    expect(h.compacts).toEqual(['/compact']);
    // Still past it: no second event, no second compaction.
    h.store.seed(usageWith(180_000));
    await h.watch.turnEnded(T);
    expect(h.events).toHaveLength(1);
    // Below, then past again: a new crossing; the first compaction still waits, so none is added.
    h.store.seed(usageWith(20_000));
    await h.watch.turnEnded(T);
    h.store.seed(usageWith(190_000));
    await h.watch.turnEnded(T);
    expect(h.events).toHaveLength(2);
    expect(h.events[1]!.data).toMatchObject({ compact: null, text: expect.stringMatching(/a compaction is already queued$/) });
    expect(h.compacts).toEqual(['/compact']);
  });

  it("follows the agent's compactAt; without autoCompact, or a profile's compactCommand, only the event", async () => {
    const h = setup({ compactAt: () => 50, autoCompact: () => false });
    h.store.seed(usageWith(100_000));
    await h.watch.turnEnded(T);
    expect(h.events[0]!.data).toMatchObject({ percent: 50, compactAt: 50, compact: null, text: expect.stringMatching(/autoCompact is off$/) });
    const g = setup({}, null);
    g.store.seed(usageWith(190_000));
    await g.watch.turnEnded(T);
    expect(g.events[0]!.data.text).toMatch(/its profile names no compactCommand$/);
    expect(g.compacts).toEqual([]);
  });
});

describe('the compaction item', () => {
  it('goes in between turns: after the turn in flight, before the items that wait', async () => {
    const store = new FakeStore();
    store.seed(...terminalEvents(T, 'coder'));
    const agents = new FakeAgents();
    agents.add({ agent: 'coder', terminalId: T }, 'idle');
    const runs: { id: string; signal: AbortSignal; end(): void }[] = [];
    const runner = new Runner({
      data: () => store.data,
      pane: (t) => agents.find(t),
      status: (p) => agents.status(p),
      run: (item: WorkItem, _e, signal) => {
        const d = deferred();
        store.seed({ type: 'job-state', jobId: item.id, state: 'running', reason: 'took it' });
        runs.push({ id: item.id, signal, end: () => (store.seed({ type: 'job-state', jobId: item.id, state: 'done', reason: 'ok' }), d.resolve()) });
        return d.promise;
      },
      lost: async () => {},
      broken: async () => {},
      log: recordingLog(),
    });
    store.seed(jobEvent('j-000000000001'), jobEvent('j-000000000002'));
    runner.kick(T);
    await settle();
    store.seed(jobEvent('j-00000000000c', { work: 'compact' }));
    runner.kick(T);
    await settle();
    expect(queueOf(store.data, T).map((i) => i.id)).toEqual(['j-000000000001', 'j-00000000000c', 'j-000000000002']);
    expect(runs.map((r) => r.id)).toEqual(['j-000000000001']);
    expect(runs[0]!.signal.aborted).toBe(false);
    runs[0]!.end();
    await settle();
    expect(runs.map((r) => r.id)).toEqual(['j-000000000001', 'j-00000000000c']);
    runs[1]!.end();
    await settle();
    expect(runs.map((r) => r.id)).toEqual(['j-000000000001', 'j-00000000000c', 'j-000000000002']);
  });
});
