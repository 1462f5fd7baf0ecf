// What a newcomer sees of tasks and windows, on real tmux with fake agents: `tasks` and `show` as the work
// items say (a handoff's and the demo's state, turns and reply files; jobs under `jobs`, not `tasks`);
// `status` one row per window, named as `attach` takes it; an unknown name's error offering each name
// once; a workflow task's windows closed when it ends, and opened again by `resume`.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HandoffResult, TaskView } from '../../src/api/types.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('tasks, show, status and task windows on real tmux', () => {
  let rig: Rig;
  const windows = async () => (await rig.tmux(['list-windows', '-t', `=${rig.session}`, '-F', '#{window_name}'])).split('\n').filter(Boolean);
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
  });
  afterEach(async () => rig.cleanup());

  it("tasks and show: a handoff's state, turn and reply file; a job is listed by jobs, not as a task", async () => {
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const h = JSON.parse((await rig.run(['handoff', 'alpha', '-m', 'a handoff', '--json'])).stdout) as HandoffResult;
    const reply = `.jaggers/handover/${h.reply!.artifact.split('/').at(-1)}`;
    const job = (await rig.run(['assign', 'alpha', '-m', 'a job'])).stdout.trim();
    expect((await rig.run(['wait', job])).code).toBe(0);

    const tasks = await rig.run(['tasks']);
    expect(tasks.stdout).toMatch(new RegExp(`^${h.task}\\s+handoff\\s+done\\s+1\\s+alpha\\s+`, 'm'));
    expect(tasks.stdout).not.toContain(job);
    expect((JSON.parse((await rig.run(['tasks', '--json'])).stdout) as TaskView[]).map((t) => t.id)).toEqual([h.task]);
    expect((await rig.run(['jobs'])).stdout).toContain(job);

    const show = (await rig.run(['show', h.task])).stdout;
    expect(show).toMatch(new RegExp(`^task ${h.task}: handoff, done: `));
    expect(show).toContain(`\nfinal: ${reply}\n`);
    expect(show).toMatch(new RegExp(`^1\\s+handoff\\s+alpha\\s+done\\s+[\\d.]+ s\\s+${h.job}\\s+\\S+\\s+\\S+turn_1_\\w+\\.md\\s+${reply}$`, 'm'));
    const v = JSON.parse((await rig.run(['show', h.task, '--json'])).stdout) as TaskView;
    expect(v.turns).toMatchObject([{ seq: 1, step: 'handoff', agent: 'alpha', state: 'done', job: h.job, reply }]);
  });

  it('cancel <task> of a handoff cancels its work item, and the task says so', async () => {
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '30000']);
    await writeProject(rig.root, { agents: [{ name: 'slowpoke', profile: 'slow' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const h = JSON.parse((await rig.run(['handoff', 'slowpoke', '-m', 'take your time', '--no-wait', '--json'])).stdout) as HandoffResult;
    expect((JSON.parse((await rig.run(['show', h.task, '--json'])).stdout) as TaskView).status).toBe('running');
    const c = await rig.run(['cancel', h.task, '--json']);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout) as TaskView).toMatchObject({ status: 'cancelled', turns: [{ job: h.job, state: 'cancelled' }] });
    expect((await rig.run(['tasks'])).stdout).toMatch(new RegExp(`^${h.task}\\s+handoff\\s+cancelled\\s+1\\s+slowpoke\\s+`, 'm'));
  });

  it('the demo is a task that is done, with its three turns and their replies', async () => {
    expect((await rig.run(['demo'])).code).toBe(0);
    const [demo] = JSON.parse((await rig.run(['tasks', '--json'])).stdout) as TaskView[];
    expect(demo).toMatchObject({ workflow: 'demo', status: 'done', seq: 3 });
    const v = JSON.parse((await rig.run(['show', demo!.id, '--json'])).stdout) as TaskView;
    expect(v.turns.map((t) => [t.agent, t.state])).toEqual([
      ['planner', 'done'],
      ['coder', 'done'],
      ['reviewer', 'done'],
    ]);
    expect(v.turns.every((t) => t.reply?.startsWith('.jaggers/handover/'))).toBe(true);
    expect(v.final).toBe(v.turns[2]!.reply);
  });

  it("status names each window once; an unknown name's error lists each name once; a task's windows close when it ends", async () => {
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
    // A workflow task: its windows open for it and close when it is done.
    const run = await rig.run(['run', 'collaborative', '--task', 'a word counter', '--agents', 'alpha,beta']);
    expect(run.code, run.stderr).toBe(0);
    expect(await windows()).toEqual(['jaggers', 'alpha', 'beta']);
    const task = (JSON.parse((await rig.run(['tasks', '--json'])).stdout) as TaskView[])[0]!.id;
    // ... and `resume` opens them again, in their conversations.
    expect((await rig.run(['resume', task])).code).toBe(0);
    expect(await windows()).toEqual(['jaggers', 'alpha', 'beta', `alpha+${task}`, `beta+${task}`]);

    const status = await rig.run(['status']);
    const names = status.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(['alpha', 'beta', `alpha+${task}`, `beta+${task}`]);
    // The name status shows is one `why` and `attach` take.
    expect((await rig.run(['why', `beta+${task}`])).stdout).toMatch(/^beta is idle/);
    const attach = await rig.run(['attach', 'nosuch']);
    expect(attach.code).toBe(1);
    expect(attach.stderr).toBe(
      `jaggers: unknown agent "nosuch" in session ${rig.session}: agents are alpha, beta (and windows of tasks and workers: alpha+${task}, beta+${task})\n`,
    );
    expect((await rig.run(['why', 'nosuch'])).stderr).toMatch(/: agents are alpha, beta \(and windows of tasks and workers: alpha\+t-\w+, beta\+t-\w+\)\n$/);
  });
});
