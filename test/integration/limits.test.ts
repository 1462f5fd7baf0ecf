// A usage limit on a real tmux server with the fake agent: a job whose handover says `limit: try again
// in N seconds` ends at the fake agent's limit screen; the agent shows `limited` with its reset time
// (on /v1/events too); the job it cut goes back to wait (its record, `jobs` and `why` say why) and runs
// again once at the reset, before the next job; with a fallback, the cut job moves there instead.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboxView, JobView, StreamEvent, TerminalView } from '../../src/api/types.js';
import { api, promptsReceived, untilEvent } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('a usage limit', () => {
  let rig: Rig;
  let promptsFile: string;
  const jg = (args: string[]) => rig.run(args);
  const job = (id: string) => api(rig).call<JobView>('GET', `/v1/jobs/${id}`);
  const received = async () => (await promptsReceived(promptsFile)) as { agent: string; prompt: string; t: number }[];

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('shows limited with its reset time, holds the next job until the reset, then runs it on its own', async () => {
    const states: { state: string; resetAt?: unknown; at: number }[] = [];
    const stop = new AbortController();
    const stream = api(rig)
      .events('/v1/events?agent=alpha&types=state', (e: StreamEvent) => states.push({ state: String(e.data.state), resetAt: e.data.resetAt, at: Date.now() }), {
        signal: stop.signal,
      })
      .catch(() => {});
    const first = await jg(['assign', 'alpha', '-m', 'do the work\nlimit: try again in 6 seconds']);
    expect(first.code, first.stderr).toBe(0);
    const view = await untilEvent(
      api(rig),
      'state',
      async () => ((v) => (v.state === 'limited' ? v : null))(await api(rig).call<TerminalView>('GET', '/v1/terminals/alpha')),
      'alpha limited',
    );
    const limitedAt = Date.now();
    // Read from the screen, or from the reply the Stop hook brought, whichever came first (CI: the hook).
    expect(view.rule).toMatch(/^usage-limit(?: \(the reply, by [a-z ]+\))?$/);
    expect(view.limit?.said).toBe('in 6 seconds');
    const resetAt = Date.parse(view.limit!.resetAt!);
    expect(resetAt).toBeGreaterThan(limitedAt - 2000);
    expect(resetAt).toBeLessThan(limitedAt + 7000);
    expect(view.waitingFor).toMatch(/^its usage limit to reset at \S+ \(in 6 seconds\); its queue goes on then$/);
    // The job the limit cut did not end with the limit as its reply: it waits for the reset, and says why.
    const firstId = first.stdout.trim();
    const cut = await untilEvent(api(rig), 'job', async () => ((j) => (j.limited ? j : null))(await job(firstId)), 'the cut job waiting');
    expect(cut).toMatchObject({ state: 'queued', reply: null, limited: { cuts: 1, resetAt: view.limit!.resetAt, said: 'in 6 seconds' } });
    expect(cut.reason).toBe(
      `its turn was cut by alpha's usage limit (✕ Usage limit reached · try again in 6 seconds): it runs again when the limit resets at ${view.limit!.resetAt}`,
    );
    expect(cut.waiting).toBe(`its turn was cut by alpha's usage limit (in 6 seconds); it runs again at the limit's reset, ${view.limit!.resetAt}`);
    // The next job waits behind it.
    const second = await jg(['assign', 'alpha', '-m', 'the next job']);
    expect(second.code, second.stderr).toBe(0);
    const id = second.stdout.trim();
    const queued = await job(id);
    expect(queued.state).toBe('queued');
    expect(queued.waiting).toBe(`behind job ${firstId} (queued) for alpha`);
    const why = (await jg(['why', 'alpha'])).stdout;
    expect(why).toContain(
      `${firstId} job queued: its turn was cut by alpha's usage limit (in 6 seconds); it runs again at the limit's reset, ${view.limit!.resetAt}`,
    );
    expect((await jg(['jobs'])).stdout).toMatch(new RegExp(`${firstId}.*its turn was cut by alpha's usage limit`));
    // Both go in on their own at the reset, not before: the cut job once more, then the next.
    const done = await untilEvent(api(rig), 'job', async () => ((j) => (j.state === 'done' ? j : null))(await job(id)), 'the next job done');
    expect(done.reply).toBeTruthy();
    const again = await job(firstId);
    expect(again).toMatchObject({ state: 'done', limited: { cuts: 1 } });
    const result = await api(rig).call<{ reply: string }>('GET', `/v1/jobs/${firstId}/result`);
    expect(result.reply).not.toContain('Usage limit reached');
    const prompts = await received();
    expect(prompts).toHaveLength(3);
    expect(prompts[1]!.t).toBeGreaterThanOrEqual(resetAt - 50);
    expect(again.history.map((h) => h.state)).toEqual(['queued', 'starting', 'running', 'queued', 'starting', 'running', 'done']);
    stop.abort();
    await stream;
    const limited = states.find((s) => s.state === 'limited');
    expect(limited?.resetAt).toBe(view.limit!.resetAt);
    // After the reset the agent went back to idle (the machine's own timer), then ran the job.
    expect(states.map((s) => s.state)).toEqual(expect.arrayContaining(['limited', 'idle', 'busy']));
  });

  it('a message whose turn the limit cut waits again (its record says why) and is delivered anew after the reset, once', async () => {
    const inbox = () => api(rig).call<InboxView>('GET', '/v1/terminals/alpha/inbox');
    const sent = await jg(['message', 'alpha', '-m', 'a note\nlimit: try again in 4 seconds', '--json']);
    expect(sent.code, sent.stderr).toBe(0);
    const id = (JSON.parse(sent.stdout) as { id: string }).id;
    const cut = await untilEvent(
      api(rig),
      'message',
      async () => (await inbox()).messages.find((m) => m.id === id && m.limited) ?? null,
      'the cut message waiting',
    );
    expect(cut).toMatchObject({ state: 'pending', nonce: null, delivered: null, claims: 1, limited: { cuts: 1, said: 'in 4 seconds' } });
    expect(cut.limited!.reason).toMatch(
      /^its turn was cut by alpha's usage limit \(✕ Usage limit reached · try again in 4 seconds\): it is delivered again when the limit resets at /,
    );
    // After the reset it goes in again, once, and stays delivered.
    const again = await untilEvent(
      api(rig),
      'message',
      async () => ((m) => (m?.state === 'delivered' ? m : null))((await inbox()).messages.find((m) => m.id === id)),
      'delivered again',
      60_000,
    );
    expect(again).toMatchObject({ state: 'delivered', claims: 2, how: 'verified' });
    const pointers = (await received()).filter((p) => p.prompt.includes(`${id}.md`));
    expect(pointers).toHaveLength(2);
    expect(new Set(pointers.map((p) => /\[jg:([0-9a-f]+)\]/.exec(p.prompt)?.[1])).size).toBe(2);
  });
});

describe('a turn cut by a usage limit, with a fallback', () => {
  let rig: Rig;
  let promptsFile: string;
  const jg = (args: string[]) => rig.run(args);
  const job = (id: string) => api(rig).call<JobView>('GET', `/v1/jobs/${id}`);

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake', fallback: 'beta' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('moves the cut job to the fallback, journaled, where it runs once; alpha never runs it again', async () => {
    const r = await jg(['assign', 'alpha', '-m', 'do the work\nlimit(alpha): try again in 60 seconds']);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    const done = await untilEvent(api(rig), 'job', async () => ((j) => (j.state === 'done' ? j : null))(await job(id)), 'the cut job done on beta');
    expect(done).toMatchObject({ agent: 'beta', limited: { cuts: 1 } });
    const states = done.history.map((h) => h.state);
    expect(states).toEqual(['queued', 'starting', 'running', 'queued', 'queued', 'starting', 'running', 'done']);
    expect(done.history[3]!.reason).toMatch(/^its turn was cut by alpha's usage limit/);
    expect(done.history[4]!.reason).toMatch(/^moved from alpha to beta \(its fallback\): alpha hit a usage limit that resets at /);
    const result = await api(rig).call<{ reply: string }>('GET', `/v1/jobs/${id}/result`);
    expect(result.reply).not.toContain('Usage limit reached');
    const prompts = (await promptsReceived(promptsFile)) as { agent: string }[];
    expect(prompts.map((p) => p.agent)).toEqual(['alpha', 'beta']);
  });
});

describe('a fallback that names a profile', () => {
  let rig: Rig;
  let promptsFile: string;
  const jg = (args: string[]) => rig.run(args);
  const job = (id: string) => api(rig).call<JobView>('GET', `/v1/jobs/${id}`);

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeFakeProfile(rig.root, 'spare', ['--think-ms', '300'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake', fallback: 'spare' }] });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('with no agent of the profile, the cut job goes to a new worker window of it, journaled, and runs there once', async () => {
    const r = await jg(['assign', 'alpha', '-m', 'do the work\nlimit(alpha): try again in 60 seconds']);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    const done = await untilEvent(api(rig), 'job', async () => ((j) => (j.state === 'done' ? j : null))(await job(id)), 'the cut job done by a spare worker');
    expect(done).toMatchObject({ kind: 'worker', target: 'spare', agent: `spare-${id}`, limited: { cuts: 1 } });
    expect(done.history.map((h) => h.state)).toEqual(['queued', 'starting', 'running', 'queued', 'queued', 'starting', 'starting', 'running', 'done']);
    expect(done.history[4]!.reason).toMatch(/^moved from alpha to a new spare worker \(its fallback\): alpha hit a usage limit that resets at /);
    const result = await api(rig).call<{ reply: string }>('GET', `/v1/jobs/${id}/result`);
    expect(result.reply).not.toContain('Usage limit reached');
    const prompts = (await promptsReceived(promptsFile)) as { agent: string }[];
    expect(prompts.map((p) => p.agent)).toEqual(['alpha', `spare-${id}`]);
  });
});
