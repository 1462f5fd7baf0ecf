// Usage per turn, end to end with the fake agent on a real tmux server: the agent keeps a claude-shaped
// transcript with token usage (`--claude-transcript`, src/fake-agent/claude-transcript.ts), its profile
// reads it with the `claude` usage reader, and each job's tokens are recorded with its end and summed on
// the job, the agent, the task and the day (docs/usage.md).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView, TerminalView } from '../../src/api/types.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import type { UsageView } from '../../src/usage/report.js';
import { tokenTotal } from '../../src/usage/tokens.js';
import { api } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('usage per turn with the fake agent', () => {
  let rig: Rig;
  const jg = (args: string[]) => rig.run(args);

  beforeEach(async () => {
    rig = await Rig.create();
    const demo = JSON.parse(await readFile(path.join(builtinProfilesDir, 'demo.json'), 'utf8')) as { session: Record<string, unknown> };
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--claude-transcript'], { session: { ...demo.session, usage: 'claude' } });
    // A price for the fake agent's model other than the shipped one: the cost follows jaggers.json.
    await writeProject(rig.root, {
      agents: [{ name: 'alpha', profile: 'fake' }],
      prices: { 'claude-sonnet-4-5': { input: 1000000, output: 0, cacheRead: 0, cacheWrite: 0 } },
    });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it("records each job's tokens with its end and sums them per job, agent, task and day", async () => {
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const r = await jg(['assign', 'alpha', '-m', `count tokens ${n}`]);
      expect(r.code, r.stderr).toBe(0);
      ids.push(r.stdout.trim());
    }
    const w = await jg(['wait', ...ids, '--timeout', '60']);
    expect(w.code, w.stdout + w.stderr).toBe(0);

    const jobs = JSON.parse((await jg(['jobs', '--json'])).stdout) as JobView[];
    const [first, second] = ids.map((id) => jobs.find((j) => j.id === id)!);
    // The fake agent's turn k spends cache read 1000(k-1) and cache write 50 (one answer written as two
    // entries with the same ids: counted once).
    expect(Object.keys(first!.usage ?? {})).toEqual(['claude-sonnet-4-5']);
    expect(first!.usage!['claude-sonnet-4-5']).toMatchObject({ cacheRead: 0, cacheWrite: 50 });
    expect(second!.usage!['claude-sonnet-4-5']).toMatchObject({ cacheRead: 1000, cacheWrite: 50 });
    expect(first!.usage!['claude-sonnet-4-5']!.input).toBeGreaterThan(100);
    expect(second!.usage!['claude-sonnet-4-5']!.input).toBeGreaterThan(200);

    const byAgent = JSON.parse((await jg(['usage', '--json'])).stdout) as UsageView;
    const jobsTotal = tokenTotal(first!.usage)!.total + tokenTotal(second!.usage)!.total;
    expect(byAgent.turns).toBe(2);
    expect(byAgent.rows.map((r) => [r.key, r.total])).toEqual([['alpha', jobsTotal]]);
    // jaggers.json's price: a dollar a token of input.
    expect(byAgent.total.usd).toBe(byAgent.total.input);
    expect(byAgent.prices.overridden).toEqual(['claude-sonnet-4-5']);
    const byJob = JSON.parse((await jg(['usage', '--by', 'job', '--json'])).stdout) as UsageView;
    expect(byJob.rows.map((r) => r.key).sort()).toEqual([...ids].sort());
    const byTask = JSON.parse((await jg(['usage', '--by', 'task', '--json'])).stdout) as UsageView;
    expect(byTask.rows.map((r) => r.key).sort()).toEqual([...ids].sort());
    const byDay = await api(rig).call<UsageView>('GET', '/v1/usage?by=day');
    expect(byDay.rows).toHaveLength(1);
    expect(byDay.rows[0]!.total).toBe(jobsTotal);

    // status and jobs show the tokens; the text report names the columns and the price's source.
    const alpha = (await api(rig).call<TerminalView[]>('GET', '/v1/terminals')).find((t) => t.agent === 'alpha')!;
    expect(alpha.usage?.total).toBe(jobsTotal);
    // Its context: the last answer's prompt as a share of claude-sonnet-4-5's 200,000-token window (docs/usage.md, Context).
    expect(alpha.context).toMatchObject({ model: 'claude-sonnet-4-5', window: 200_000, compactAt: 85 });
    expect(alpha.context!.tokens).toBeGreaterThan(1000);
    expect((await jg(['status'])).stdout).toMatch(new RegExp(`^alpha .* ${jobsTotal.toLocaleString('en-US')}\\s+\\d+%\\s*$`, 'm'));
    expect((await jg(['jobs'])).stdout).toMatch(/TOKENS/);
    const text = (await jg(['usage'])).stdout;
    expect(text).toMatch(/^AGENT\s+INPUT\s+OUTPUT\s+CACHE READ\s+CACHE WRITE\s+TOTAL\s+COST/m);
    expect(text).toMatch(/from jaggers\.json: claude-sonnet-4-5/);
    expect((await jg(['usage', '--by', 'nope'])).code).not.toBe(0);
    // A job's own task: `show` gives its tokens.
    const total = tokenTotal(first!.usage)!.total.toLocaleString('en-US');
    expect((await jg(['show', ids[0]!])).stdout).toMatch(
      new RegExp(`^tokens: ${total} \\(input [\\d,]+, output [\\d,]+, cache read 0, cache write 50\\)`, 'm'),
    );
  });
});
