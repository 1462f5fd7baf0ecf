// Workflows on a real tmux server with fake agents: every built-in end to end (artifacts, registry,
// journal), a detached task whose supervisor is killed in the middle of turn 2 and resumed, two tasks at
// once over agents of the same profiles, an agent that exits during its turn, a turn past its timeout,
// waiting for permission, cancel, and bad input. The fake agents write every prompt they receive to
// FAKE_AGENT_PROMPTS, and keep their conversations on disk: the ground truth of what ran where.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, TaskView } from '../../src/api/types.js';
import { api, untilEvent, waitPidGone, type FakeTurn } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

interface Received {
  agent: string;
  prompt: string;
}

interface Registry {
  terminals: Record<string, { agent: string; sessionId: string; task: string | null; terminalId: string }>;
  tasks: Record<string, { status: string; workflow: string; agents: Record<string, { terminalId: string; sessionId: string | null; turns: number }> }>;
}

describe('workflows', () => {
  let rig: Rig;
  let promptsFile: string;

  const received = async (): Promise<Received[]> => {
    const text = await readFile(promptsFile, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Received);
  };
  const jg = (args: string[]) => rig.run(args);
  const registry = async () => JSON.parse(await readFile(path.join(rig.root, '.jaggers', 'sessions.json'), 'utf8')) as Registry;
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
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200', '--replies', 'receipt'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
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
});

void writeFile;
void mkdir;
void waitPidGone;
export type { HealthView };
