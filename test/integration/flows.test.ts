// Scheduled flows on a real tmux server with fake agents: a flow every two seconds (croner's seconds
// field) runs as a job with its artifacts; `disable` stops it; a supervisor killed with kill -9 and
// started again after several missed ticks runs it once for all of them; a run still going makes the
// next ticks skip; bad files, cron expressions and agents are named.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Cron } from 'croner';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, JobView } from '../../src/api/types.js';
import type { FlowView } from '../../src/flows/scheduler.js';
import { api, untilEvent, waitPidGone } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

const EVERY_2S = '*/2 * * * * *';

describe('scheduled flows', () => {
  let rig: Rig;
  const jg = (args: string[]) => rig.run(args);
  const flowJobs = async (name: string) => (await api(rig).call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.name === `flow ${name}`);
  const flow = async (name: string) => api(rig).call<FlowView>('GET', `/v1/flows/${name}`);
  /** The supervisor's log lines about flows (pino JSON), across its restarts. */
  const logged = async (msg: string) =>
    (await readFile(path.join(rig.root, '.jaggers', 'logs', 'current.log'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; flow?: string; how?: string })
      .filter((l) => l.msg === msg);
  /** Until the clock is past `n` more ticks of the schedule (to show that nothing ran in them). */
  const pastTicks = async (schedule: string, n: number) => {
    const runs = new Cron(schedule, { paused: true }).nextRuns(n);
    const until = runs.at(-1)!.getTime() + 1000;
    await untilEvent(api(rig), 'job', async () => (Date.now() > until ? true : null), `${n} ticks of ${schedule}`, 60_000);
  };

  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--replies', 'receipt']);
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '5000', '--replies', 'receipt']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'slowpoke', profile: 'slow' },
      ],
    });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('runs every two seconds as a job with its artifacts, and stops when disabled', async () => {
    const add = await jg(['flow', 'add', 'tick', '--schedule', EVERY_2S, '--agent', 'alpha', '--prompt', 'the flow prompt ✓']);
    expect(add.code, add.stderr).toBe(0);
    const done = await untilEvent(api(rig), 'job', async () => (await flowJobs('tick')).find((j) => j.state === 'done') ?? null, 'a flow run done', 30_000);
    expect(done.agent).toBe('alpha');
    expect(done.reply).toMatch(/^\.jaggers\/handover\/turn_2_[0-9a-f]+\.md$/);
    expect(await readFile(path.join(rig.root, done.reply!), 'utf8')).toMatch(/You said: |answer: the flow prompt ✓|the flow prompt/);
    const ls = JSON.parse((await jg(['flow', 'ls', '--json'])).stdout) as FlowView[];
    expect(ls.map((f) => [f.name, f.enabled, f.schedule, f.target])).toEqual([['tick', true, EVERY_2S, { kind: 'agent', name: 'alpha' }]]);
    expect(ls[0]!.next).not.toBeNull();
    expect((await jg(['flow', 'show', 'tick'])).stdout).toMatch(/a job for agent alpha/);

    expect((await jg(['flow', 'disable', 'tick'])).stdout).toBe('flow tick: disabled\n');
    await untilEvent(api(rig), 'job', async () => ((await flow('tick')).enabled ? null : true), 'the supervisor saw the change');
    // A run that had already started may still end; after that, nothing new for three more ticks.
    await untilEvent(api(rig), 'job', async () => ((await flowJobs('tick')).every((j) => ['done', 'failed'].includes(j.state)) ? true : null), 'runs ended');
    const before = (await flowJobs('tick')).length;
    await pastTicks(EVERY_2S, 3);
    expect((await flowJobs('tick')).length).toBe(before);
    expect((await flow('tick')).next).toBeNull();
    // On demand it still runs.
    const r = await jg(['flow', 'run', 'tick']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^j-[0-9a-f]{12}$/);
    expect((await flowJobs('tick')).map((j) => j.id)).toContain(r.stdout.trim());
    expect((await jg(['flow', 'rm', 'tick'])).code).toBe(0);
    expect((await jg(['flow', 'ls'])).stdout).toMatch(/no flows/);
  });

  it('after a kill -9 and several missed ticks, the restarted supervisor runs the flow once for all of them', async () => {
    expect((await jg(['flow', 'add', 'tick', '--schedule', EVERY_2S, '--agent', 'alpha', '--prompt', 'tick tock'])).code).toBe(0);
    await untilEvent(api(rig), 'job', async () => ((await flowJobs('tick')).some((j) => j.state === 'done') ? true : null), 'a first run', 30_000);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const ranBefore = (await logged('flow run started')).length;
    // Down for at least three ticks (the clock, not a fixed sleep: until the third tick is past).
    const third = new Cron(EVERY_2S, { paused: true }).nextRuns(3).at(-1)!.getTime() + 500;
    while (Date.now() < third) await new Promise<void>((resolve) => setTimeout(resolve, Math.min(250, third - Date.now())));
    expect((await jg(['jobs'])).code).toBe(0); // starts the supervisor again
    await untilEvent(api(rig), 'job', async () => ((await logged('flow run started')).length > ranBefore ? true : null), 'a run after the restart');
    const after = (await logged('flow run started')).slice(ranBefore);
    expect(after[0]!.how).toBe('missed');
    expect(after.filter((l) => l.how === 'missed')).toHaveLength(1);
    // And then on schedule again.
    await untilEvent(
      api(rig),
      'job',
      async () => ((await logged('flow run started')).slice(ranBefore).some((l) => l.how === 'schedule') ? true : null),
      'a scheduled run after the catch-up',
      30_000,
    );
    expect((await logged('flow run started')).slice(ranBefore).filter((l) => l.how === 'missed')).toHaveLength(1);
  });

  it('never runs twice at once: ticks while a run goes are skipped', async () => {
    expect((await jg(['flow', 'add', 'slow', '--schedule', EVERY_2S, '--agent', 'slowpoke', '--prompt', 'take your time'])).code).toBe(0);
    const first = await untilEvent(api(rig), 'job', async () => (await flowJobs('slow'))[0] ?? null, 'a first run', 30_000);
    await untilEvent(
      api(rig),
      'job',
      async () => ((await api(rig).call<JobView>('GET', `/v1/jobs/${first.id}`)).state === 'done' ? true : null),
      'the slow run done',
      60_000,
    );
    // Its turn took five seconds, two ticks or more: skipped, so it was the only run in that time.
    const all = await flowJobs('slow');
    const during = all.filter((j) => j.id !== first.id && Date.parse(j.created) < Date.parse(first.updated) - 100);
    expect(during).toEqual([]);
    expect((await logged('flow tick skipped: the last run still goes')).filter((l) => l.flow === 'slow').length).toBeGreaterThanOrEqual(1);
  });

  it('bad files, cron expressions and agents are refused, naming the file or the value', async () => {
    const bad = await jg(['flow', 'add', 'x', '--schedule', '61 * * * *', '--agent', 'alpha', '--prompt', 'p']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/"61 \* \* \* \*" is not a cron expression/);
    const who = await jg(['flow', 'add', 'x', '--schedule', '0 3 * * *', '--agent', 'nobody', '--prompt', 'p']);
    expect(who.stderr).toMatch(/x\.md: field `agent`: unknown agent "nobody"; agents are alpha, slowpoke/);
    const dir = path.join(rig.root, '.jaggers', 'flows');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'broken.md'), '---\nschedule: "0 3 * * *"\nagent: alpha\ntimeout: soon\n---\nx\n');
    const ls = await jg(['flow', 'ls']);
    expect(ls.code).toBe(1);
    expect(ls.stdout).toMatch(/broken.*INVALID.*broken\.md:4: field `timeout`/);
    const doctor = await jg(['doctor']);
    expect([doctor.code, doctor.stdout]).toEqual([1, expect.stringMatching(/^FAIL flow broken: .*broken\.md:4: field `timeout`/m)]);
    const show = await jg(['flow', 'show', 'broken']);
    expect(show.stderr).toMatch(/broken\.md:4: field `timeout`/);
    const run = await jg(['flow', 'run', 'broken']);
    expect([run.code !== 0, /broken\.md:4/.test(run.stderr)]).toEqual([true, true]);
    expect((await jg(['flow', 'run', 'nope'])).stderr).toMatch(/no flow "nope"/);
  });
});
