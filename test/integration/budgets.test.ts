// Budgets end to end with the fake agent on a real tmux server: its claude-shaped transcript gives each
// turn's tokens (`--claude-transcript`), the agent's budget in jaggers.json is reached by the first job,
// the second job waits `over_budget` (jobs, the API, `budget`) until `jaggers budget raise`, and then
// goes in at once (docs/usage.md, Budgets). And past `compactAt` with `autoCompact`, the profile's
// `compactCommand` goes in as a `compact` item between two turns (docs/usage.md, Context).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView } from '../../src/api/types.js';
import { builtinProfilesDir } from '../../src/package-root.js';
import type { BudgetsView } from '../../src/work/budgets.js';
import { api } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('budgets with the fake agent', () => {
  let rig: Rig;
  const jg = (args: string[]) => rig.run(args);

  beforeEach(async () => {
    rig = await Rig.create();
    const demo = JSON.parse(await readFile(path.join(builtinProfilesDir, 'demo.json'), 'utf8')) as { session: Record<string, unknown> };
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--claude-transcript'], {
      session: { ...demo.session, usage: 'claude' },
      compactCommand: '/compact',
    });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake', budget: { tokens: 100 } }] });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('holds the next job over_budget until `jaggers budget raise`, then runs it', async () => {
    const first = (await jg(['assign', 'alpha', '-m', 'spend some tokens'])).stdout.trim();
    const w = await jg(['wait', first, '--timeout', '60']);
    expect(w.code, w.stdout + w.stderr).toBe(0);

    const r = await jg(['assign', 'alpha', '-m', 'and some more', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const second = JSON.parse(r.stdout) as JobView;
    expect(second.state).toBe('queued');
    expect(second.overBudget).toMatchObject({ scope: 'agent', name: 'alpha', what: 'tokens', limit: 100 });
    expect(second.waiting).toMatch(
      /^over_budget: agent alpha's budget is reached \([\d,]+ of 100 tokens spent\); `jaggers budget raise agent alpha --tokens <more>`/,
    );
    expect((await jg(['jobs'])).stdout).toMatch(new RegExp(`^${second.id}\\s+over_budget\\s+alpha`, 'm'));
    const listed = JSON.parse((await jg(['budget', '--json'])).stdout) as BudgetsView;
    expect(listed.budgets).toEqual([expect.objectContaining({ key: 'agent:alpha', limit: { tokens: 100 } })]);
    expect(listed.budgets[0]!.spent.tokens).toBeGreaterThan(100);
    expect((await jg(['budget'])).stdout).toMatch(/^agent alpha\s+[\d,]+ \/ 100\s+-\s+reached$/m);
    // Still held a moment later: nothing lets it go but a raise.
    expect((await api(rig).call<JobView>('GET', `/v1/jobs/${second.id}`)).state).toBe('queued');

    const raised = await jg(['budget', 'raise', 'agent', 'alpha', '--tokens', '1000000']);
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toMatch(/^agent alpha: [\d,]+ of 1,000,100 tokens \(ok\)$/m);
    const done = await jg(['wait', second.id, '--timeout', '60']);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    // The raise is in the journal.
    expect(await readFile(path.join(rig.root, '.jaggers', 'events.jsonl'), 'utf8')).toMatch(/"type":"budget-raised","key":"agent:alpha","tokens":1000000/);
    // A raise of a budget that is not there says what to do.
    const none = await jg(['budget', 'raise', 'session', '--tokens', '5']);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/the session has no budget to raise; give one in jaggers.json/);
  });

  it("queues the profile's compactCommand between turns once the context passes compactAt, with autoCompact", async () => {
    // A window of 100 tokens: the first turn's prompt fills it past 85%.
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake', autoCompact: true }], contextWindows: { 'claude-sonnet-4-5': 100 } });
    const ids: string[] = [];
    for (const n of [1, 2]) ids.push((await jg(['assign', 'alpha', '-m', `turn ${n}`])).stdout.trim());
    const w = await jg(['wait', ...ids, '--timeout', '60']);
    expect(w.code, w.stdout + w.stderr).toBe(0);
    const jobs = JSON.parse((await jg(['jobs', '--json'])).stdout) as JobView[];
    const compact = jobs.filter((j) => j.work === 'compact');
    expect(compact).toEqual([expect.objectContaining({ state: 'done', agent: 'alpha', name: 'compact' })]);
    expect(await readFile(path.join(rig.root, compact[0]!.prompt), 'utf8')).toBe('/compact');
    // Typed after the first turn ended and before the second started: between turns.
    const at = (j: JobView, state: string) => j.history.find((h) => h.state === state)!.at;
    const [first, second] = ids.map((id) => jobs.find((j) => j.id === id)!);
    expect(Date.parse(at(compact[0]!, 'starting'))).toBeGreaterThanOrEqual(Date.parse(at(first!, 'done')));
    expect(Date.parse(at(compact[0]!, 'done'))).toBeLessThanOrEqual(Date.parse(at(second!, 'starting')));
    const alpha = (await api(rig).call<{ agent: string; context: { percent: number; compactAt: number } }[]>('GET', '/v1/terminals')).find(
      (t) => t.agent === 'alpha',
    )!;
    expect(alpha.context.percent).toBeGreaterThan(85);
    expect((await jg(['status'])).stdout).toMatch(/^alpha .*\d+%!\s*$/m);
  });
});
