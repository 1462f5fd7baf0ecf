// Workflows on a real tmux server with fake agents: every built-in end to end (artifacts, registry,
// journal), a detached task whose supervisor is killed in the middle of turn 2 and resumed, two tasks at
// once over agents of the same profiles, an agent that exits during its turn, a turn past its timeout,
// waiting for permission, cancel, and bad input. The fake agents write every prompt they receive to
// FAKE_AGENT_PROMPTS, and keep their conversations on disk: the ground truth of what ran where.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, TaskView } from '../../src/api/types.js';
import { api, promptsReceived, readRegistry, untilEvent, waitPidGone, type FakeTurn } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

interface Registry {
  terminals: Record<string, { agent: string; sessionId: string; task: string | null; terminalId: string }>;
  tasks: Record<string, { status: string; workflow: string; agents: Record<string, { terminalId: string; sessionId: string | null; turns: number }> }>;
}

describe('workflows', () => {
  let rig: Rig;
  let promptsFile: string;

  const received = () => promptsReceived(promptsFile);
  const jg = (args: string[]) => rig.run(args);
  const registry = async () => readRegistry(rig.root) as unknown as Registry;
  const journal = async () =>
    (await readFile(path.join(rig.root, '.jaggers', 'events.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; taskId?: string; status?: string });
  /** The fake agent's own record of a conversation: every prompt it received there. */
  const conversation = async (sessionId: string) =>
    (JSON.parse(await readFile(path.join(rig.home, '.fake-agent', 'sessions', `${sessionId}.json`), 'utf8')) as { turns: FakeTurn[] }).turns;
  const task = async (id: string) => JSON.parse((await jg(['show', id, '--json'])).stdout) as TaskView;
  const untilTask = (id: string, check: (t: TaskView) => boolean, what: string, timeoutMs = 60_000) =>
    untilEvent(
      api(rig),
      'task,job',
      async () => {
        const t = await api(rig)
          .call<TaskView>('GET', `/v1/tasks/${id}`)
          .catch(() => null);
        return t && check(t) ? t : null;
      },
      what,
      timeoutMs,
    );

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    // Scripted markers, by the handover file's turn number: a prompt is turn 2k-1 of its task.
    const rules = path.join(rig.root, '..', 'rules.json');
    await writeFile(
      rules,
      JSON.stringify([
        { match: 'turn_5_', reply: 'AGREED' },
        { match: 'turn_7_', reply: 'ACCEPTED\nAGREED' },
        { match: 'turn_9_', reply: 'VERIFIED' },
      ]),
    );
    const env = { env: { FAKE_AGENT_PROMPTS: promptsFile } };
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--replies', 'receipt'], env);
    await writeFakeProfile(rig.root, 'marker', ['--think-ms', '200', '--rules', rules], env);
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '2500'], env);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
        { name: 'gamma', profile: 'marker' },
        { name: 'delta', profile: 'marker' },
        { name: 'slowpoke', profile: 'slow' },
      ],
    });
  });
  afterEach(async () => rig.cleanup());

  it('collaborative runs end to end: three turns, a-b-a, each in the task own pinned conversation; artifacts, registry and journal', async () => {
    const r = await jg(['run', 'collaborative', '--task', 'design a word counter', '--agents', 'alpha,beta']);
    expect(r.code, r.stderr).toBe(0);
    const final = r.stdout.trim();
    expect(final).toMatch(/^\.jaggers\/handover\/turn_6_[0-9a-f]+\.md$/);
    const id = /task (t-[0-9a-f]{8}): collaborative/.exec(r.stderr)![1]!;
    // Progress on stderr: each turn as it happened.
    expect(r.stderr).toMatch(/turn 1: propose by alpha/);
    expect(r.stderr).toMatch(/turn 2: critique by beta/);
    expect(r.stderr).toMatch(/turn 3: synthesize by alpha/);
    const t = await task(id);
    expect(t.status).toBe('done');
    expect(t.final).toBe(final);
    expect(t.turns.map((x) => [x.seq, x.step, x.agent, x.state])).toEqual([
      [1, 'propose', 'alpha', 'done'],
      [2, 'critique', 'beta', 'done'],
      [3, 'synthesize', 'alpha', 'done'],
    ]);
    // Turn 2's prompt names turn 1's reply; turn 3's names turns 1 and 2.
    const body = async (f: string) => readFile(path.join(rig.root, f), 'utf8');
    expect(await body(t.turns[1]!.prompt!)).toContain(t.turns[0]!.reply!);
    expect(await body(t.turns[2]!.prompt!)).toContain(t.turns[0]!.reply!);
    expect(await body(t.turns[2]!.prompt!)).toContain(t.turns[1]!.reply!);
    expect(await body(t.turns[0]!.prompt!)).toMatch(/^task: t-[0-9a-f]{8}$/m);
    expect(await body(t.turns[0]!.prompt!)).toMatch(/^workflow: collaborative$/m);
    // Turns 1 and 3 went to the same conversation, the task's own (not the team's alpha).
    expect(t.turns[0]!.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.turns[2]!.sessionId).toBe(t.turns[0]!.sessionId);
    expect(t.turns[1]!.sessionId).not.toBe(t.turns[0]!.sessionId);
    const conv = await conversation(t.turns[0]!.sessionId!);
    expect(conv).toHaveLength(2);
    const reg = await registry();
    expect(reg.tasks[id]!.status).toBe('done');
    expect(reg.tasks[id]!.agents.alpha!.turns).toBe(2);
    expect(reg.tasks[id]!.agents.beta!.turns).toBe(1);
    const alphaTerm = reg.terminals[reg.tasks[id]!.agents.alpha!.terminalId]!;
    expect(alphaTerm.task).toBe(id);
    expect(alphaTerm.sessionId).toBe(t.turns[0]!.sessionId);
    const j = (await journal()).filter((e) => e.taskId === id);
    expect(j.some((e) => e.type === 'task-workflow')).toBe(true);
    expect(j.filter((e) => e.type === 'task-snapshot').length).toBeGreaterThanOrEqual(4);
    expect(j.filter((e) => e.type === 'task-status').map((e) => e.status)).toEqual(['running', 'running', 'running', 'done']);
    // One prompt per turn reached the agents.
    expect((await received()).map((p) => p.agent)).toEqual([`alpha`, `beta`, `alpha`].map((a) => a));
    const list = JSON.parse((await jg(['tasks', '--json'])).stdout) as TaskView[];
    expect(list.find((x) => x.id === id)?.status).toBe('done');
    const shown = (await jg(['show', id])).stdout;
    expect(shown).toContain('synthesize');
    expect(shown).toContain(t.turns[0]!.sessionId!);
  });

  it('handoff, adversarial, troubleshoot and handshake run end to end: loops, exit markers and the turn sequence', async () => {
    const cases = [
      { wf: 'handoff', agents: 'gamma', steps: ['work'], outcome: null },
      {
        wf: 'adversarial',
        agents: 'gamma,delta',
        steps: ['produce', 'attack', 'defend', 'attack'],
        outcome: /^attack: its reply matches .*ACCEPTED.* \(round 2\)$/,
      },
      { wf: 'troubleshoot', agents: 'gamma,delta', steps: ['diagnose', 'fix', 'verify', 'fix', 'verify'], outcome: /^verify: .*VERIFIED.* \(round 2\)$/ },
      {
        wf: 'handshake',
        agents: 'gamma,delta',
        steps: ['draft_a', 'draft_b', 'draft_a', 'draft_b'],
        outcome: /^draft_b: the replies of draft_a and draft_b each match .*AGREED/,
      },
    ];
    for (const c of cases) {
      const r = await jg(['run', c.wf, '--task', `the ${c.wf} task`, '--agents', c.agents, '--json']);
      expect(r.code, `${c.wf}: ${r.stderr}`).toBe(0);
      const v = JSON.parse(r.stdout) as TaskView;
      expect(v.status).toBe('done');
      expect(v.workflow).toBe(c.wf);
      expect(
        v.turns.map((x) => x.step),
        c.wf,
      ).toEqual(c.steps);
      const roles = c.agents.split(',');
      // Roles a and b alternate as the workflow says: a-steps to the first agent.
      expect(v.turns[0]!.agent).toBe(roles[0]);
      if (roles[1]) expect(v.turns[1]!.agent).toBe(roles[1]);
      if (c.outcome) expect(v.outcome).toMatch(c.outcome);
      expect(v.final).toBe(v.turns.at(-1)!.reply);
      // Every turn's reply file holds the agent's answer, and each prompt went in once.
      for (const t of v.turns) expect(await readFile(path.join(rig.root, t.reply!), 'utf8')).toMatch(/turn \d+ of session [0-9a-f]{8}/);
      // The registry counts each agent's replies in the task; the journal holds the workflow, its snapshots and statuses.
      const rec = (await registry()).tasks[v.id]!;
      expect(rec.status).toBe('done');
      expect(Object.values(rec.agents).reduce((n, a) => n + a.turns, 0)).toBe(c.steps.length);
      const lines = (await journal()).filter((e) => e.taskId === v.id);
      expect(lines.filter((e) => e.type === 'task-workflow')).toHaveLength(1);
      expect(lines.filter((e) => e.type === 'task-snapshot').length).toBeGreaterThanOrEqual(c.steps.length + 1);
      expect(lines.filter((e) => e.type === 'task-status').map((e) => e.status)).toEqual([...c.steps.map(() => 'running'), 'done']);
    }
    const prompts = (await received()).map((p) => p.agent);
    expect(prompts).toHaveLength(cases.reduce((n, c) => n + c.steps.length, 0));
  });

  it("two collaborative tasks at once over the same agents never touch each other's sessions or artifacts", async () => {
    const [r1, r2] = await Promise.all([
      jg(['run', 'collaborative', '--task', 'first task', '--agents', 'alpha,beta', '--json']),
      jg(['run', 'collaborative', '--task', 'second task', '--agents', 'alpha,beta', '--json']),
    ]);
    expect(r1.code, r1.stderr).toBe(0);
    expect(r2.code, r2.stderr).toBe(0);
    const [t1, t2] = [JSON.parse(r1.stdout) as TaskView, JSON.parse(r2.stdout) as TaskView];
    expect(t1.id).not.toBe(t2.id);
    const reg = await registry();
    const sessionsOf = (t: TaskView) => t.turns.map((x) => x.sessionId);
    for (const [mine, other] of [
      [t1, t2],
      [t2, t1],
    ] as const) {
      // Own windows (terminals) per task, own conversations, own files.
      expect(mine.agents.alpha!.terminalId).not.toBe(other.agents.alpha!.terminalId);
      expect(reg.terminals[mine.agents.alpha!.terminalId]!.task).toBe(mine.id);
      for (const s of sessionsOf(mine)) expect(sessionsOf(other)).not.toContain(s);
      for (const x of mine.turns) {
        for (const f of [x.prompt!, x.reply!]) expect(await readFile(path.join(rig.root, f), 'utf8')).toMatch(new RegExp(`^task: ${mine.id}$`, 'm'));
      }
      // Every prompt in the task's conversations points at this task's handover files only.
      for (const sid of new Set(sessionsOf(mine))) {
        for (const turn of await conversation(sid!)) {
          const file = /Read (\S+) and do/.exec(turn.prompt)![1]!;
          expect(await readFile(path.resolve(rig.root, file), 'utf8')).toMatch(new RegExp(`^task: ${mine.id}$`, 'm'));
        }
      }
      expect(mine.turns[2]!.sessionId).toBe(mine.turns[0]!.sessionId);
    }
    // The team's own alpha and beta (no task) received nothing.
    const team = Object.values(reg.terminals).filter((t) => t.task === null && (t.agent === 'alpha' || t.agent === 'beta'));
    for (const t of team) if (t.sessionId) await expect(conversation(t.sessionId)).rejects.toThrow();
    expect(await received()).toHaveLength(6);
  });

  for (const how of ['resume', 'its own restart'] as const) {
    it(`a detached collaborative task killed (kill -9 of the supervisor) in the middle of turn 2 goes on after ${how}: no turn runs twice, turn 3 in turn 1's conversation`, async () => {
      const r = await jg(['run', 'collaborative', '--task', 'survive a crash', '--agents', 'alpha,slowpoke', '--detach']);
      expect(r.code, r.stderr).toBe(0);
      const id = r.stdout.trim();
      expect(id).toMatch(/^t-[0-9a-f]{8}$/);
      // The middle of turn 2: its job is starting or running (slowpoke thinks 2.5 s), at a random moment.
      await untilTask(id, (t) => t.seq === 2 && ['starting', 'running'].includes(t.turns[1]?.state ?? ''), 'turn 2 under way');
      await new Promise((res) => setTimeout(res, Math.floor(Math.random() * 1500))); // a random moment, not a wait for a state
      const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
      process.kill(pid, 'SIGKILL');
      await waitPidGone(pid);
      if (how === 'resume') {
        const res = await jg(['resume', id]);
        expect(res.code, res.stderr).toBe(0);
        expect(res.stdout.trim()).toMatch(/^\.jaggers\/handover\/turn_6_[0-9a-f]+\.md$/);
      } else {
        // The next command starts the supervisor again; it resumes detached tasks by itself.
        expect((await jg(['tasks'])).code).toBe(0);
        await untilTask(id, (t) => t.status === 'done', 'the task done after the restart');
      }
      const t = await task(id);
      expect(t.status).toBe('done');
      expect(t.turns.map((x) => [x.step, x.agent, x.state, x.attempts])).toEqual([
        ['propose', 'alpha', 'done', 1],
        ['critique', 'slowpoke', 'done', 1],
        ['synthesize', 'alpha', 'done', 1],
      ]);
      // The fake agents' record: one prompt per turn, though the supervisor died during turn 2.
      expect((await received()).map((p) => p.agent)).toEqual(['alpha', 'slowpoke', 'alpha']);
      expect(t.turns[2]!.sessionId).toBe(t.turns[0]!.sessionId);
      const conv = await conversation(t.turns[0]!.sessionId!);
      expect(conv.map((x) => /Read (\S+)/.exec(x.prompt)![1]).map((f) => path.basename(f!))).toEqual([
        path.basename(t.turns[0]!.prompt!),
        path.basename(t.turns[2]!.prompt!),
      ]);
    });
  }

  it('down in the middle of turn 2 (the tmux server and every window gone, as after a reboot): after up the supervisor reopens the task windows in their conversations and finishes the task', async () => {
    const id = (await jg(['run', 'collaborative', '--task', 'survive a reboot', '--agents', 'alpha,slowpoke', '--detach'])).stdout.trim();
    const before = await untilTask(id, (t) => t.seq === 2 && t.turns[1]?.state === 'running', 'turn 2 running');
    expect((await jg(['down'])).code).toBe(0);
    // `up` opens the team only; the supervisor it starts resumes the detached task and reopens its windows.
    expect((await jg(['up', '--no-wait'])).code).toBe(0);
    const t = await untilTask(id, (x) => ['done', 'failed'].includes(x.status), 'the task ended');
    expect(t.status, t.reason ?? '').toBe('done');
    const shown = await task(id);
    // Turn 2 was lost with its agent's process: tried once more, in the same conversation.
    expect(shown.turns.map((x) => [x.step, x.attempts])).toEqual([
      ['propose', 1],
      ['critique', 2],
      ['synthesize', 1],
    ]);
    expect(shown.agents.alpha!.terminalId).toBe(before.agents.alpha!.terminalId);
    expect(shown.turns[2]!.sessionId).toBe(shown.turns[0]!.sessionId);
    expect(shown.turns[1]!.sessionId).toBe(before.agents.slowpoke!.sessionId);
    expect((await received()).map((p) => p.agent)).toEqual(['alpha', 'slowpoke', 'slowpoke', 'alpha']);
    // Its windows were opened again for the rest of the task, and closed when it ended.
    expect((await jg(['logs'])).stdout).toMatch(new RegExp(`the task's window of the agent was gone: opened again .*task=${id}`));
    const windows = await rig.tmux(['list-windows', '-t', rig.session, '-F', '#{window_name}']);
    expect(windows.split('\n').filter((w) => w.endsWith(`+${id}`))).toEqual([]);
  });

  it('an agent that exits during its turn is restarted in its pinned conversation and the turn tried once more', async () => {
    const r = await jg(['run', 'collaborative', '--task', 'lose an agent', '--agents', 'alpha,slowpoke', '--detach']);
    const id = r.stdout.trim();
    const during = await untilTask(id, (t) => t.seq === 2 && t.turns[1]?.state === 'running', 'turn 2 running');
    const term = during.agents.slowpoke!;
    const views = await api(rig).call<{ terminalId: string; pid: number; pane: string }[]>('GET', `/v1/terminals?task=${id}`);
    const v = views.find((x) => x.terminalId === term.terminalId)!;
    process.kill(v.pid, 'SIGKILL');
    const t = await untilTask(id, (x) => ['done', 'failed'].includes(x.status), 'the task ended', 20_000).catch(async (e) => {
      console.log((await jg(['logs'])).stdout.slice(-6000));
      console.log(JSON.stringify(await task(id), null, 1).slice(0, 3000));
      throw e;
    });
    expect(t.status, t.reason ?? '').toBe('done');
    expect(t.turns[1]!.attempts).toBe(2);
    const shown = await task(id);
    // The retry went to the same conversation: the agent was resumed in its pinned session.
    expect(shown.turns[1]!.sessionId).toBe(term.sessionId);
    expect(shown.agents.slowpoke!.sessionId).toBe(term.sessionId);
    const lines = (await journal()).filter((e) => e.type === 'job-state' && (e as { cause?: string }).cause === 'agent-lost');
    expect(lines).toHaveLength(1);
  });

  it('an agent asking for permission makes the task waiting with the window to attach to; cancel stops the task and its turn', async () => {
    const r = await jg(['run', 'handoff', '--task', 'run the tool that needs-approval', '--agents', 'alpha', '--detach']);
    const id = r.stdout.trim();
    const w = await untilTask(id, (t) => t.status === 'waiting', 'the task waiting');
    expect(w.attach).toBe(`jaggers attach alpha+${id}`);
    expect(w.reason).toMatch(new RegExp(`alpha asks: .*; answer it with \`jaggers attach alpha\\+${id}\``));
    const c = await jg(['cancel', id, '--json']);
    expect(c.code, c.stderr).toBe(0);
    const t = JSON.parse(c.stdout) as TaskView;
    expect(t.status).toBe('cancelled');
    expect(t.reason).toBe('cancelled by the user');
    const job = await untilEvent(
      api(rig),
      'job',
      async () => {
        const j = await api(rig).call<{ state: string }>('GET', `/v1/jobs/${t.turns[0]!.job}`);
        return j.state === 'cancelled' ? j : null;
      },
      'the turn cancelled',
    );
    expect(job.state).toBe('cancelled');
    expect((await jg(['tasks', '--json'])).stdout).toContain('"cancelled"');
  });

  it('the API alone runs a workflow: POST /v1/tasks with a workflow name and agents opens the task windows itself', async () => {
    expect((await jg(['up'])).code).toBe(0);
    const created = await api(rig).call<TaskView>('POST', '/v1/tasks', { workflow: 'collaborative', text: 'through the API', agents: ['gamma', 'delta'] });
    expect(created.id).toMatch(/^t-[0-9a-f]{8}$/);
    expect(created.detached).toBe(true);
    expect(created.roles).toEqual({ a: 'gamma', b: 'delta' });
    const done = await api(rig).call<TaskView>('GET', `/v1/tasks/${created.id}/wait?timeout=60`);
    expect(done.status, done.reason ?? '').toBe('done');
    expect(done.turns.map((x) => x.agent)).toEqual(['gamma', 'delta', 'gamma']);
    expect(done.turns[2]!.sessionId).toBe(done.turns[0]!.sessionId);
    // The task's gamma and delta had windows of their own, closed when it ended; the team's stay.
    const reg = await registry();
    expect(
      Object.values(reg.terminals)
        .filter((t) => t.task === created.id)
        .map((t) => t.agent),
    ).toEqual(['gamma', 'delta']);
    const windows = (await rig.tmux(['list-windows', '-t', rig.session, '-F', '#{window_name}'])).split('\n');
    expect(windows).toEqual(expect.arrayContaining(['gamma', 'delta']));
    expect(windows.filter((w) => w.endsWith(`+${created.id}`))).toEqual([]);
    // The team's own gamma got nothing: the task's gamma is a window and a conversation of its own.
    const teamGamma = Object.values(reg.terminals).find((t) => t.agent === 'gamma' && t.task === null)!;
    expect(teamGamma.terminalId).not.toBe(done.agents.gamma!.terminalId);
    expect(teamGamma.sessionId).not.toBe(done.turns[0]!.sessionId);
    const err = await api(rig)
      .call('POST', '/v1/tasks', { workflow: 'collaborative', text: 'x', agents: ['gamma', 'nobody'] })
      .catch((e: Error & { code?: string }) => e);
    expect((err as { code?: string }).code).toBe('E_AGENT_UNKNOWN');
    expect((err as Error).message).toMatch(/unknown agent "nobody": agents are alpha, beta, gamma, delta, slowpoke/);
  });

  it('a project workflow from YAML: a step past its timeout fails the task, names the turn, and interrupts the agent', async () => {
    await mkdir(path.join(rig.root, '.jaggers', 'workflows'), { recursive: true });
    await writeFile(
      path.join(rig.root, '.jaggers', 'workflows', 'hurry.yaml'),
      'description: one step that must be quick\nagents: [worker]\nsteps:\n  - id: quick\n    agent: worker\n    timeout: 1\n    prompt: "{{task}}"\n',
    );
    const listed = JSON.parse((await jg(['workflows', '--json'])).stdout) as { name: string; source: string }[];
    expect(listed.find((w) => w.name === 'hurry')?.source).toBe(path.join(rig.root, '.jaggers', 'workflows', 'hurry.yaml'));
    const r = await jg(['run', 'hurry', '--task', 'take your time', '--agents', 'slowpoke']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^task t-[0-9a-f]{8} failed: turn 1 \(quick, slowpoke\) did not finish within 1 s \(the step's timeout\)\n$/);
    const id = /task (t-[0-9a-f]{8})/.exec(r.stdout)![1]!;
    const t = await task(id);
    expect(t.status).toBe('failed');
    expect(t.source).toBe('.jaggers/workflows/hurry.yaml');
    // Its turn's job was cancelled, which interrupted the agent.
    const job = await untilEvent(
      api(rig),
      'job',
      async () => {
        const j = await api(rig).call<{ state: string; reason: string }>('GET', `/v1/jobs/${t.turns[0]!.job}`);
        return j.state === 'cancelled' ? j : null;
      },
      'the turn cancelled',
    );
    expect(job.reason).toMatch(new RegExp(`cancelled by workflow task ${id} while running; the agent was interrupted`));
    expect((await jg(['logs'])).stdout).toMatch(/did not finish within 1 s/);
    // A failed task resumes at the turn it stopped in: that turn is tried once more (a new job).
    const again = await jg(['resume', id, '--json']);
    expect(again.code, again.stdout.slice(0, 4000) + again.stderr).toBe(1);
    const t2 = JSON.parse(again.stdout) as TaskView;
    expect(t2.status).toBe('failed');
    expect(t2.turns).toHaveLength(1);
    expect(t2.turns[0]!.attempts).toBe(2);
    expect(t2.turns[0]!.job).not.toBe(t.turns[0]!.job);
  });

  it('a headless step runs in the same pinned conversation as the pane turns around it; --dry-run sends nothing', async () => {
    await mkdir(path.join(rig.root, '.jaggers', 'workflows'), { recursive: true });
    await writeFile(
      path.join(rig.root, '.jaggers', 'workflows', 'mixed.yaml'),
      [
        'agents: [a]',
        'steps:',
        '  - { id: first, agent: a, prompt: "{{task}} in the pane" }',
        '  - { id: second, agent: a, mode: headless, reads: [first], prompt: "headless now, after {{reads}}" }',
        '  - { id: third, agent: a, prompt: "back in the pane after {{reply.second}}" }',
        '',
      ].join('\n'),
    );
    const dry = await jg(['run', 'mixed', '--task', 'mix it', '--agents', 'alpha', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('--- turn 2: second -> alpha\nheadless now, after - first (by alpha): <reply of first>');
    expect(dry.stdout).toContain('back in the pane after <reply of second>');
    expect(await received()).toEqual([]);
    const r = await jg(['run', 'mixed', '--task', 'mix it', '--agents', 'alpha', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as TaskView;
    // Every step is a work item, the headless one too (so a restart follows it instead of running it again).
    expect(v.turns.map((x) => [x.step, x.state, x.job !== null])).toEqual([
      ['first', 'done', true],
      ['second', 'done', true],
      ['third', 'done', true],
    ]);
    const t = await task(v.id);
    const sid = t.turns[0]!.sessionId!;
    expect(t.turns.map((x) => x.sessionId)).toEqual([sid, sid, sid]);
    const conv = await conversation(sid);
    expect(conv).toHaveLength(3);
    expect(await readFile(path.resolve(rig.root, /Read (\S+) and do/.exec(conv[1]!.prompt)![1]!), 'utf8')).toContain('headless now');
  });

  it('a malformed workflow file stops run with the file, line and field', async () => {
    await mkdir(path.join(rig.root, '.jaggers', 'workflows'), { recursive: true });
    const file = path.join(rig.root, '.jaggers', 'workflows', 'broken.yaml');
    await writeFile(file, 'agents: [a]\nsteps:\n  - id: one\n    agent: b\n    prompt: hi\n');
    const r = await jg(['run', 'broken', '--task', 'x']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: line 4, column 12: field \`steps[0].agent\`: "b" is not one of the workflow's agents (a), got "b" (string)`);
    const listed = await jg(['workflows']);
    expect(listed.code).toBe(1);
    expect(listed.stdout).toMatch(/broken .*INVALID: .*steps\[0\]\.agent/);
    expect(listed.stdout).toMatch(/^collaborative /m);
    const doc = await jg(['doctor']);
    expect(doc.code).toBe(1);
    expect(doc.stdout).toMatch(/^FAIL workflow broken: .*line 4, column 12: field `steps\[0\]\.agent`/m);
    expect(await received()).toEqual([]);
  });

  it('bad input: unknown workflow and agents name what exists; an empty task; show of an unknown task', async () => {
    const unknown = await jg(['run', 'nope', '--task', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/nope/);
    expect(unknown.stderr).toMatch(/collaborative/);
    const agent = await jg(['run', 'collaborative', '--task', 'x', '--agents', 'alpha,nobody']);
    expect(agent.code).toBe(1);
    expect(agent.stderr).toMatch(/nobody/);
    expect(agent.stderr).toMatch(/alpha, beta/);
    const empty = await jg(['run', 'handoff', '--task', '  ']);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/--task is empty/);
    const show = await jg(['show', 't-00000000']);
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(/no task "t-00000000"/);
  });
});
