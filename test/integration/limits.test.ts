// A usage limit on a real tmux server with the fake agent: a job whose handover says `limit: try again
// in N seconds` ends at the fake agent's limit screen; the agent shows `limited` with its reset time
// (on /v1/events too), the next job waits for the reset (`jobs` and `why` say until when) and goes in
// on its own once it passes, with no other event.
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobView, StreamEvent, TerminalView } from '../../src/api/types.js';
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
    expect(view.rule).toBe('usage-limit');
    expect(view.limit?.said).toBe('in 6 seconds');
    const resetAt = Date.parse(view.limit!.resetAt!);
    expect(resetAt).toBeGreaterThan(limitedAt - 2000);
    expect(resetAt).toBeLessThan(limitedAt + 7000);
    expect(view.waitingFor).toMatch(/^its usage limit to reset at \S+ \(in 6 seconds\); its queue goes on then$/);
    // The next job waits for the reset, and says so.
    const second = await jg(['assign', 'alpha', '-m', 'the next job']);
    expect(second.code, second.stderr).toBe(0);
    const id = second.stdout.trim();
    const queued = await job(id);
    expect(queued.state).toBe('queued');
    expect(queued.waiting).toBe(`alpha hit a usage limit (in 6 seconds); the next item waits for the limit's reset at ${view.limit!.resetAt}`);
    const why = (await jg(['why', 'alpha'])).stdout;
    expect(why).toContain(`waits for the limit's reset at ${view.limit!.resetAt}`);
    // It goes in on its own at the reset, not before.
    const done = await untilEvent(api(rig), 'job', async () => ((j) => (j.state === 'done' ? j : null))(await job(id)), 'the next job done');
    expect(done.reply).toBeTruthy();
    const prompts = await received();
    expect(prompts).toHaveLength(2);
    expect(prompts[1]!.t).toBeGreaterThanOrEqual(resetAt - 50);
    stop.abort();
    await stream;
    const limited = states.find((s) => s.state === 'limited');
    expect(limited?.resetAt).toBe(view.limit!.resetAt);
    // After the reset the agent went back to idle (the machine's own timer), then ran the job.
    expect(states.map((s) => s.state)).toEqual(expect.arrayContaining(['limited', 'idle', 'busy']));
  });
});
