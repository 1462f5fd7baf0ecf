// One queue per agent, on a real tmux server with the fake agent: a handoff, a message and a job to one
// agent run one after the other, each going in as soon as the one before it ended (no later arrival
// needed to wake it); `jobs` and `inbox` say what a waiting item waits for; Ctrl-C on `handoff` leaves
// the handoff running and says how to follow it. The fake agent logs every prompt it receives with
// its time (FAKE_AGENT_PROMPTS): the ground truth of when each item went in.
import { execa } from 'execa';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboxView, JobView, StreamEvent } from '../../src/api/types.js';
import { packageRoot } from '../../src/package-root.js';
import { api, promptsReceived, untilEvent } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const jaggersBin = path.join(packageRoot, 'bin', 'jaggers.js');

describe('one queue per agent', () => {
  let rig: Rig;
  let promptsFile: string;
  const jg = (args: string[]) => rig.run(args);
  const received = async () => (await promptsReceived(promptsFile)) as { agent: string; prompt: string; t: number }[];
  const job = (id: string) => api(rig).call<JobView>('GET', `/v1/jobs/${id}`);
  const untilJob = (id: string, ok: (j: JobView) => boolean, what: string) =>
    untilEvent(api(rig), 'job', async () => ((j) => (ok(j) ? j : null))(await job(id)), what);

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '1500', '--replies', 'work'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('a message and a job that arrive while a handoff holds the agent each go in within 1 s of the end of the item before them, with no other arrival', async () => {
    // Every state of alpha, with its time: where each turn ended.
    const states: { state: string; at: number }[] = [];
    const stop = new AbortController();
    const stream = api(rig)
      .events('/v1/events?agent=alpha&types=state', (e: StreamEvent) => states.push({ state: String(e.data.state), at: Date.parse(String(e.data.since)) }), {
        signal: stop.signal,
      })
      .catch(() => {});
    const handoff = jg(['handoff', 'alpha', '-m', 'the handoff', '--json']);
    // The handoff holds alpha: its prompt went in and its turn runs.
    await untilEvent(api(rig), 'job', async () => ((await received()).length === 1 ? true : null), 'the handoff going in');
    const m = await jg(['message', 'alpha', '-m', 'the message', '--json']);
    expect(m.code, m.stderr).toBe(0);
    const a = await jg(['assign', 'alpha', '-m', 'the job']);
    expect(a.code, a.stderr).toBe(0);
    const jobId = a.stdout.trim();
    // Both wait behind the handoff, and say so.
    const queued = await job(jobId);
    expect(queued.state).toBe('queued');
    expect(queued.waiting).toMatch(/^behind handoff j-[0-9a-f]+ \((starting|running)\) and 1 more for alpha$/);
    const inbox = JSON.parse((await jg(['inbox', 'alpha', '--json'])).stdout) as InboxView;
    expect(inbox.pending).toBe(1);
    expect(inbox.waiting).toMatch(/^behind handoff j-[0-9a-f]+ \((starting|running)\) for alpha$/);
    // `why` lists the queue: the handoff runs, the message and the job wait behind it.
    const why = (await jg(['why', 'alpha'])).stdout;
    expect(why).toMatch(
      /its queue \(3\):\n {2}j-[0-9a-f]+ handoff (starting|running): runs now\n {2}m-[0-9a-f]+ message pending: behind handoff j-[0-9a-f]+ \((starting|running)\) for alpha\n {2}j-[0-9a-f]+ job queued: behind handoff j-[0-9a-f]+ \((starting|running)\) and 1 more for alpha\n/,
    );
    const h = await handoff;
    expect(h.code, h.stderr).toBe(0);
    // Nothing else arrives: the job ends on its own.
    const done = await untilJob(jobId, (j) => j.state === 'done', 'the job done');
    expect(done.reply).toBeTruthy();
    stop.abort();
    await stream;
    const prompts = await received();
    expect(prompts.map((p) => (/Read (\S+)/.exec(p.prompt) ? 'pointer' : p.prompt))).toEqual(['pointer', 'pointer', 'pointer']);
    expect(prompts[1]!.prompt).toMatch(/inbox\/m-/);
    expect(prompts[2]!.prompt).toMatch(/handover\/turn_/);
    // Each went in right after the turn before it ended (the state that ended it: done or idle).
    for (const [i, p] of prompts.entries()) {
      if (i === 0) continue;
      const ended = states.filter((s) => (s.state === 'done' || s.state === 'idle') && s.at <= p.t).at(-1);
      expect(ended, `a turn end before prompt ${i}`).toBeDefined();
      expect(ended!.at).toBeGreaterThan(prompts[i - 1]!.t);
      expect(p.t - ended!.at).toBeLessThan(1000);
    }
  });

  it('Ctrl-C on handoff leaves the handoff running and says how to follow it', async () => {
    const run = execa(process.execPath, [jaggersBin, 'handoff', 'alpha', '-m', 'keep going without me'], { cwd: rig.root, env: rig.env, reject: false });
    await untilEvent(api(rig), 'job', async () => ((await received()).length === 1 ? true : null), 'the handoff going in');
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    const id = /handoff (j-[0-9a-f]+) goes on in the supervisor; follow it with `jaggers wait \1`, then `jaggers result \1`/.exec(r.stderr)?.[1];
    expect(id, r.stderr).toBeDefined();
    const w = await jg(['wait', id!, '--timeout', '30']);
    expect(w.code, w.stdout).toBe(0);
    const result = await jg(['result', id!]);
    expect(result.stdout).toContain('keep going without me');
    expect((await received()).length).toBe(1);
  });

  it('a handoff and an assign to one agent run one after the other, in the order they came', async () => {
    const a = await jg(['assign', 'alpha', '-m', 'first, by assign']);
    const h = await jg(['handoff', 'alpha', '-m', 'second, by handoff', '--json']);
    expect(h.code, h.stderr).toBe(0);
    expect((await job(a.stdout.trim())).state).toBe('done');
    const got = (await received()).map((p) => p.t);
    expect(got).toHaveLength(2);
    const jobs = JSON.parse((await jg(['jobs', '--json'])).stdout) as JobView[];
    expect(jobs.map((j) => [j.work, j.state])).toEqual([
      ['job', 'done'],
      ['handoff', 'done'],
    ]);
    expect(Date.parse(jobs[1]!.history.find((x) => x.state === 'starting')!.at)).toBeGreaterThanOrEqual(Date.parse(jobs[0]!.history.at(-1)!.at));
  });

  it('Ctrl-C on run leaves the workflow task running and says how to follow it', async () => {
    const run = execa(process.execPath, [jaggersBin, 'run', 'handoff', '--task', 'a task that outlives its command', '--agents', 'alpha'], {
      cwd: rig.root,
      env: rig.env,
      reject: false,
    });
    // Its turn went in: the task runs in the supervisor now.
    await untilEvent(api(rig), 'job', async () => ((await received()).length === 1 ? true : null), "the task's turn going in");
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    const id = /task (\S+) goes on in the supervisor; follow it with `jaggers show \1`, or here again with `jaggers resume \1`/.exec(r.stderr)?.[1];
    expect(id, r.stderr).toBeDefined();
    const done = await untilEvent(
      api(rig),
      'task',
      async () => ((t) => (t.status === 'done' ? t : null))(await api(rig).call<{ status: string }>('GET', `/v1/tasks/${id}`)),
      'the task done',
    );
    expect(done.status).toBe('done');
    expect((await received()).length).toBe(1);
  });
});
