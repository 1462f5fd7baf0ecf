// Pricing, the registry's sums and the report: pure parts of `jaggers usage` (docs/usage.md).
import { describe, expect, it } from 'vitest';
import { parseProjectFile } from '../../../src/project/project-file.js';
import { journalEventSchema, type NewJournalEvent } from '../../../src/sessions/events.js';
import { applyEvent, emptyRegistry, type RegistryData } from '../../../src/sessions/schema.js';
import { costOf, priceOf, priceTable } from '../../../src/usage/prices.js';
import { usageReport } from '../../../src/usage/report.js';
import { subtractByModel } from '../../../src/usage/tokens.js';
import { renderUsage } from '../../../src/commands/usage.js';
import { turnUsageEvents, usageSettled, warmUsage, type UsageSource } from '../../../src/work/usage.js';
import type { Profile } from '../../../src/profiles/schema.js';

const T = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input, output, cacheRead, cacheWrite });

function apply(d: RegistryData, ...events: NewJournalEvent[]): RegistryData {
  for (const e of events) d = applyEvent(d, { ...e, ts: e.ts ?? '2026-11-26T10:00:00.000Z' } as never);
  return d;
}

function registry(): RegistryData {
  return apply(
    emptyRegistry(),
    { type: 'terminal-created', terminalId: 't1', agent: 'alpha', profile: 'claude', cwd: '/w' },
    { type: 'session-pinned', terminalId: 't1', sessionId: 's1', how: 'pre-generated' },
    {
      type: 'job-created',
      jobId: 'j-1',
      name: null,
      target: 'alpha',
      kind: 'agent',
      terminalId: 't1',
      from: null,
      fromAgent: null,
      prompt: 'p',
      bytes: 1,
      timeoutMs: null,
      keep: false,
      task: 'task-1',
    },
  );
}

const profile = { session: { usage: 'claude' } } as unknown as Profile;
const source = (byModel: Record<string, ReturnType<typeof T>>): UsageSource => ({ read: async () => ({ byModel, records: 1, skipped: 0, files: [] }) });

describe('prices', () => {
  it('ship with a date, price a model by name or without its date suffix, and say which have none', () => {
    const t = priceTable();
    expect(t.taken).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(priceOf(t, 'claude-sonnet-4-5')).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(priceOf(t, 'claude-opus-4-5-20991231')).toEqual(priceOf(t, 'claude-opus-4-5'));
    expect(priceOf(t, 'stub-model')).toBeNull();
    const c = costOf(t, { 'claude-sonnet-4-5': T(1_000_000, 100_000, 2_000_000, 10_000), 'stub-model': T(5, 5) });
    expect(c).toEqual({ usd: 5.1375, unpriced: ['stub-model'] });
  });

  it("jaggers.json's prices override and add models; cache prices default to the input price", async () => {
    const p = await parseProjectFile(
      JSON.stringify({
        agents: [{ name: 'a', profile: 'claude' }],
        prices: { 'stub-model': { input: 1, output: 2 }, 'claude-sonnet-4-5': { input: 4, output: 20, cacheRead: 0.4, cacheWrite: 5 } },
      }),
      '/p/jaggers.json',
    );
    const t = priceTable(p.prices);
    expect(priceOf(t, 'stub-model')).toEqual({ input: 1, output: 2, cacheRead: 1, cacheWrite: 1 });
    expect(priceOf(t, 'claude-sonnet-4-5')?.input).toBe(4);
    expect(t.overridden).toEqual(['stub-model', 'claude-sonnet-4-5']);
  });

  it('a wrong price is refused naming the file, the field and the value', async () => {
    const bad = JSON.stringify({ agents: [{ name: 'a', profile: 'claude' }], prices: { 'gpt-5': { input: -1, output: 'ten' } } });
    const err = await parseProjectFile(bad, '/p/jaggers.json').catch((e: Error & { code?: string }) => e);
    expect((err as { code?: string }).code).toBe('E_PROJECT_INVALID');
    expect((err as Error).message).toMatch(/\/p\/jaggers\.json/);
    expect((err as Error).message).toMatch(/prices\.gpt-5\.input/);
    expect((err as Error).message).toMatch(/-1/);
    const extra = JSON.stringify({ agents: [{ name: 'a', profile: 'claude' }], prices: { 'gpt-5': { input: 1, output: 2, cached: 3 } } });
    await expect(parseProjectFile(extra, '/p/jaggers.json')).rejects.toThrow(/cached/);
  });
});

describe('a turn recorded with its end', () => {
  it("is what the session's records show beyond its sum so far, summed per agent, task, session, day and on the job", async () => {
    let d = registry();
    const job = d.jobs['j-1']!;
    const turn = { job, terminalId: 't1', agent: 'alpha', profile, pid: null, sessionId: null };
    const first = await turnUsageEvents(source({ m: T(10, 20, 30, 40) }), d, turn);
    expect(first).toEqual([
      expect.objectContaining({ type: 'usage', sessionId: 's1', jobId: 'j-1', task: 'task-1', reader: 'claude', turn: { m: T(10, 20, 30, 40) } }),
    ]);
    d = apply(d, ...first);
    // The same records again: nothing new, nothing recorded.
    expect(await turnUsageEvents(source({ m: T(10, 20, 30, 40) }), d, turn)).toEqual([]);
    const second = await turnUsageEvents(source({ m: T(15, 20, 30, 40), n: T(1, 1) }), d, turn);
    expect(second[0]).toMatchObject({ turn: { m: T(5, 0, 0, 0), n: T(1, 1) } });
    d = apply(d, { ...second[0]!, ts: '2026-11-27T01:00:00.000Z' } as NewJournalEvent);
    expect(d.usage.sessions.s1).toEqual({ m: T(15, 20, 30, 40), n: T(1, 1) });
    expect(d.usage.agents.alpha).toEqual({ m: T(15, 20, 30, 40), n: T(1, 1) });
    expect(d.usage.tasks['task-1']).toEqual(d.usage.agents.alpha);
    expect(Object.keys(d.usage.days)).toEqual(['2026-11-26', '2026-11-27']);
    expect(d.jobs['j-1']!.usage).toEqual(d.usage.agents.alpha);
    expect(d.usage.turns).toBe(2);
  });

  it('records whole, non-negative counts whatever the file says, so the journal takes the turn', async () => {
    const d = registry();
    const job = d.jobs['j-1']!;
    const ev = await turnUsageEvents(source({ m: { input: Number.POSITIVE_INFINITY, output: -5, cacheRead: 2.6, cacheWrite: Number.NaN } }), d, {
      job,
      terminalId: 't1',
      agent: 'alpha',
      profile,
      pid: null,
      sessionId: null,
    });
    const after = apply(d, ...ev);
    expect(after.usage.agents.alpha).toEqual({ m: T(0, 0, 3, 0) });
    expect(journalEventSchema.safeParse({ ...ev[0], ts: '2026-11-26T10:00:00.000Z' }).success).toBe(true);
  });

  it('records nothing without a reader, a session, or records; and never throws', async () => {
    const d = registry();
    const job = d.jobs['j-1']!;
    const base = { job, terminalId: 't1', agent: 'alpha', profile, pid: null, sessionId: null };
    expect(await turnUsageEvents(undefined, d, base)).toEqual([]);
    expect(await turnUsageEvents(source({ m: T(1, 1) }), d, { ...base, profile: { session: {} } as unknown as Profile })).toEqual([]);
    expect(await turnUsageEvents({ read: async () => null }, d, base)).toEqual([]);
    expect(await turnUsageEvents({ read: async () => Promise.reject(new Error('EIO')) }, d, base)).toEqual([]);
  });
});

describe("a turn's end waits for the CLI's record of its answer", () => {
  const d = registry();
  const base = { job: d.jobs['j-1']!, terminalId: 't1', agent: 'alpha', profile, pid: null, sessionId: null };
  /** A source whose records count `counts[i]` at its i-th read (the last one after that); null: no file yet. */
  const counting = (counts: (number | null)[]) => {
    let reads = 0;
    const src: UsageSource = {
      read: async () => {
        const n = counts[Math.min(reads++, counts.length - 1)]!;
        return n === null ? null : { byModel: {}, records: n, skipped: 0, files: [] };
      },
    };
    return { src, reads: () => reads };
  };

  it('warms with the count before the prompt (0 before any file), and settles once the count grows', async () => {
    expect(await warmUsage(counting([null]).src, d, base)).toBe(0);
    expect(await warmUsage(counting([3]).src, d, base)).toBe(3);
    expect(await warmUsage(undefined, d, base)).toBeNull();
    expect(await warmUsage(source({ m: T(1, 1) }), d, { ...base, profile: { session: {} } as unknown as Profile })).toBeNull();
    const late = counting([3, 3, 4]);
    await usageSettled(late.src, () => d, base, 3, { capMs: 10_000, everyMs: 1 });
    expect(late.reads()).toBe(3);
    const there = counting([4]);
    await usageSettled(there.src, () => d, base, 3, { capMs: 10_000, everyMs: 1 });
    expect(there.reads()).toBe(1);
  });

  it("takes a record written before the turn's warm read for the turn before's, come late, and waits on for its own", async () => {
    const since = 1_000_000;
    // Reads: the turn before's answer comes (written before `since`, 4 s late), then this turn's.
    const reads = [
      { records: 3, at: since - 5000 },
      { records: 4, at: since - 4000 },
      { records: 4, at: since - 4000 },
      { records: 5, at: since + 300 },
    ];
    let n = 0;
    const src: UsageSource = {
      read: async () => {
        const r = reads[Math.min(n++, reads.length - 1)]!;
        return { byModel: {}, records: r.records, skipped: 0, files: [], last: { model: 'm', tokens: T(1, 1), at: r.at } };
      },
    };
    await usageSettled(src, () => d, base, 3, { capMs: 10_000, everyMs: 1, since });
    expect(n).toBe(4);
    // A reader that says no time: the count alone, as before.
    let m = 0;
    const untimed: UsageSource = { read: async () => ({ byModel: {}, records: m++ === 0 ? 3 : 4, skipped: 0, files: [] }) };
    await usageSettled(untimed, () => d, base, 3, { capMs: 10_000, everyMs: 1, since });
    expect(m).toBe(2);
  });

  it('gives up after its cap when no record comes (a turn without an answer), and never throws', async () => {
    const never = counting([3]);
    const t0 = Date.now();
    await usageSettled(never.src, () => d, base, 3, { capMs: 30, everyMs: 5 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(30);
    expect(never.reads()).toBeGreaterThan(1);
    // Looked at less and less often: over 700 ms from 25 ms on (gaps 25, 50, 100, 200, 400), six reads at most.
    const slow = counting([3]);
    await usageSettled(slow.src, () => d, base, 3, { capMs: 700 });
    expect(slow.reads()).toBeGreaterThanOrEqual(3);
    expect(slow.reads()).toBeLessThanOrEqual(6);
    await usageSettled({ read: async () => Promise.reject(new Error('EIO')) }, () => d, base, 0, { capMs: 10, everyMs: 5 });
  });
});

describe('the report', () => {
  it('groups by agent, task, day, session, job and model, with cost and the models that have no price', async () => {
    let d = registry();
    const job = d.jobs['j-1']!;
    const ev = await turnUsageEvents(source({ 'claude-sonnet-4-5': T(1_000_000, 0), 'stub-model': T(7, 0) }), d, {
      job,
      terminalId: 't1',
      agent: 'alpha',
      profile,
      pid: null,
      sessionId: null,
    });
    d = apply(d, ...ev);
    const prices = priceTable();
    const byAgent = usageReport(d, prices, 'agent');
    expect(byAgent.rows).toEqual([expect.objectContaining({ key: 'alpha', input: 1_000_007, total: 1_000_007, usd: 3, unpriced: ['stub-model'] })]);
    expect(byAgent.total).toMatchObject({ usd: 3, unpriced: ['stub-model'] });
    expect(usageReport(d, prices, 'job').rows.map((r) => r.key)).toEqual(['j-1']);
    expect(usageReport(d, prices, 'task').rows.map((r) => r.key)).toEqual(['task-1']);
    expect(usageReport(d, prices, 'session').rows.map((r) => r.key)).toEqual(['s1']);
    expect(usageReport(d, prices, 'day').rows.map((r) => r.key)).toEqual(['2026-11-26']);
    expect(usageReport(d, prices, 'model').rows.map((r) => r.key)).toEqual(['claude-sonnet-4-5', 'stub-model']);
    const text = renderUsage(byAgent);
    expect(text).toMatch(/^AGENT\s+INPUT\s+OUTPUT\s+CACHE READ\s+CACHE WRITE\s+TOTAL\s+COST/m);
    expect(text).toMatch(/^alpha\s+1,000,007\s+0\s+0\s+0\s+1,000,007\s+\$3\.0000 \+ \?/m);
    expect(text).toMatch(/no price for stub-model/);
    expect(subtractByModel({ a: T(1, 1) }, { a: T(2, 0) })).toEqual({ a: T(0, 1) });
  });
});
