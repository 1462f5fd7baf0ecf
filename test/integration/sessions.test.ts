import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listPanes } from '../../src/tmux/commands.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { whenDirSays } from '../helpers/dir-watch.js';
import { Rig } from '../helpers/rig.js';

type Pin = { task: string | null; agent: string; terminalId: string; sessionId: string | null; previous: string[] };

/** Wait (on file-system events, not a timer loop) until the registry satisfies `ok`. */
function registryWhere(rig: Rig, ok: (pins: Pin[]) => boolean, timeoutMs = 15_000): Promise<Pin[]> {
  const read = async () => JSON.parse((await rig.run(['sessions', '--json'])).stdout) as Pin[];
  return whenDirSays(path.join(rig.root, '.jaggers'), read, ok, { timeoutMs, what: 'the wanted registry' });
}

const ask = async (rig: Rig, agent: string, message: string, task?: string) => {
  const r = await rig.run(['handoff', agent, '--message', message, ...(task ? ['--task', task] : [])]);
  expect(r.code, r.stderr).toBe(0);
  // stderr holds only the progress lines (`claude: busy (0.2 s)`), one per state change.
  expect(
    r.stderr
      .split('\n')
      .filter(Boolean)
      .every((l) => l.startsWith(`${agent}: `)),
    r.stderr,
  ).toBe(true);
  return r.stdout;
};

describe('pinned sessions on real tmux with the fake agent', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '150']);
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake' }] });
  });
  afterEach(async () => rig.cleanup());

  it("two tasks with the same CLI never pick up each other's conversation, across a server restart", async () => {
    expect((await rig.run(['up', '--task', 'A'])).code).toBe(0);
    expect((await rig.run(['up', '--task', 'B'])).code).toBe(0);
    expect(await ask(rig, 'claude', 'alpha one', 'A')).toMatch(/turn 1 of session/);
    expect(await ask(rig, 'claude', 'bravo one', 'B')).toMatch(/turn 1 of session/);
    // A third conversation, started last: `-r latest` would resume this one in both tasks.
    await rig.run(['up']);
    await ask(rig, 'claude', 'third, the newest');

    const pins = await registryWhere(rig, (p) => p.length === 3);
    const pinOf = (task: string | null) => pins.find((p) => p.task === task)!;
    expect(new Set(pins.map((p) => p.sessionId)).size).toBe(3);

    // Every agent's pane carries its task id.
    const c = await rig.control();
    const panes = (await listPanes(c, rig.session)).filter((p) => p.agent);
    for (const p of panes) {
      const env = (await readFile(`/proc/${p.panePid}/environ`, 'utf8')).split('\0');
      if (p.task) expect(env).toContain(`JAGGERS_TASK_ID=${p.task}`);
      else expect(env.some((kv) => kv.startsWith('JAGGERS_TASK_ID='))).toBe(false);
    }
    expect(panes.map((p) => p.windowName).sort()).toEqual(['claude', 'claude+A', 'claude+B']);

    await rig.tmux(['kill-server']);
    const resumed = await rig.run(['resume', 'A']);
    expect(resumed.stdout, `exit ${resumed.code}: ${resumed.stderr}`).toMatch(/claude\s+jg-\w+\s+@\d+\s+started\s+idle\s+session/);
    expect((await rig.run(['resume', 'B'])).code).toBe(0);
    const a2 = await ask(rig, 'claude', 'alpha two', 'A');
    const b2 = await ask(rig, 'claude', 'bravo two', 'B');
    expect(a2).toContain(`turn 2 of session ${pinOf('A').sessionId!.slice(0, 8)}`);
    expect(b2).toContain(`turn 2 of session ${pinOf('B').sessionId!.slice(0, 8)}`);
    // The fake agent's own record of each conversation holds exactly its task's prompts.
    const prompts = async (id: string) =>
      (JSON.parse(await readFile(path.join(rig.home, '.fake-agent', 'sessions', `${id}.json`), 'utf8')).turns as { prompt: string }[]).map((t) => t.prompt);
    expect((await prompts(pinOf('A').sessionId!)).join('\n')).toMatch(/^Read .*\nRead .*$/);
    const after = await registryWhere(rig, () => true);
    expect(after.map((p) => [p.task, p.terminalId, p.sessionId])).toEqual(pins.map((p) => [p.task, p.terminalId, p.sessionId]));
    expect((await rig.run(['resume', 'nope'])).stderr).toMatch(/resume: no task "nope" .*tasks are /);
  }, 180_000);

  it('follows a fork (/clear) and resumes the new conversation after a restart', async () => {
    await rig.run(['up']);
    expect(await ask(rig, 'claude', 'before the fork')).toMatch(/turn 1 of session/);
    const [before] = await registryWhere(rig, (p) => p[0]?.sessionId !== null);
    await rig.run(['send', 'claude', '/clear']);
    // The supervisor sees the new session in the CLI's state file and moves the pin.
    const [forked] = await registryWhere(rig, (p) => p[0]?.sessionId !== before!.sessionId);
    expect(forked!.previous).toEqual([before!.sessionId]);
    expect(await ask(rig, 'claude', 'after the fork')).toContain(`turn 1 of session ${forked!.sessionId!.slice(0, 8)}`);

    await rig.tmux(['kill-server']);
    await rig.run(['up']);
    expect(await ask(rig, 'claude', 'after the restart')).toContain(`turn 2 of session ${forked!.sessionId!.slice(0, 8)}`);
    const journal = await readFile(path.join(rig.root, '.jaggers', 'events.jsonl'), 'utf8');
    expect(journal).toContain('"type":"session-forked"');
  });

  it('jaggers exec rewrites -c and -r latest into the pinned session, and refuses without a pin', async () => {
    await rig.run(['up', '--task', 'A']);
    const [pin] = await registryWhere(rig, (p) => p[0]?.sessionId !== null);
    const bin = path.join(rig.root, 'fakebin');
    await mkdir(bin);
    const out = path.join(rig.root, 'args.txt');
    await writeFile(path.join(bin, 'claude'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${out}'\n`);
    await chmod(path.join(bin, 'claude'), 0o755);
    const env = { ...rig.env, PATH: `${bin}:${rig.env.PATH}`, JAGGERS_TASK_ID: 'A', JAGGERS_AGENT: 'claude' };
    for (const [args, expected] of [
      [
        ['-c', '-p', 'hi'],
        ['--resume', pin!.sessionId, '-p', 'hi'],
      ],
      [
        ['-r', 'latest'],
        ['--resume', pin!.sessionId],
      ],
      [
        ['--resume', 'latest', '--model', 'x'],
        ['--resume', pin!.sessionId, '--model', 'x'],
      ],
      [
        ['-r', 'abc-explicit'],
        ['-r', 'abc-explicit'],
      ],
    ] as const) {
      const r = await rig.run(['exec', 'claude', ...args], { env });
      expect(r.code).toBe(0);
      expect((await readFile(out, 'utf8')).trim().split('\n')).toEqual(expected);
    }
    const refused = await rig.run(['exec', 'claude', '-c'], { env: { ...env, JAGGERS_TASK_ID: 'Z' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/claude.*-c.*no session is pinned/i);
  });
});

describe('headless turns in the pinned session', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '150'], {
      session: {
        pin: 'pre-generated',
        startArgs: ['--session-id', '{sessionId}'],
        resumeArgs: ['--resume', '{sessionId}'],
        headlessArgs: ['--resume', '{sessionId}', '-p', '{prompt}'],
        transcript: 'fake-agent',
      },
    });
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake' }] });
  });
  afterEach(async () => rig.cleanup());

  it('runs a turn headless in the same conversation the pane resumes', async () => {
    await rig.run(['up']);
    expect(await ask(rig, 'claude', 'in the pane')).toMatch(/turn 1 of session/);
    const [pin] = await registryWhere(rig, (p) => p[0]?.sessionId !== null);
    await rig.run(['down']);
    const h = await rig.run(['handoff', 'claude', '--headless', '--message', 'headless work', '--json']);
    expect(h.code, h.stderr).toBe(0);
    const r = JSON.parse(h.stdout);
    expect(r.reply.text).toContain(`turn 2 of session ${pin!.sessionId!.slice(0, 8)}`);
    expect(r.reply.text).toContain('answer: headless work');
    await rig.run(['up']);
    expect(await ask(rig, 'claude', 'back in the pane')).toContain(`turn 3 of session ${pin!.sessionId!.slice(0, 8)}`);
  });

  it('a headless first turn while the pane is up: the TUI is stopped, then resumed in the conversation the turn made', async () => {
    await writeFakeProfile(rig.root, 'fresh', ['--think-ms', '150'], {
      session: {
        pin: 'pre-generated',
        startArgs: ['--session-id', '{sessionId}'],
        resumeArgs: ['--resume', '{sessionId}'],
        headlessArgs: ['--resume', '{sessionId}', '-p', '{prompt}'],
        headlessFirstArgs: ['--session-id', '{sessionId}', '-p', '{prompt}'],
        transcript: 'fake-agent',
      },
    });
    await writeProject(rig.root, {
      agents: [
        { name: 'claude', profile: 'fake' },
        { name: 'solo', profile: 'fresh' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
    const [pin] = (await registryWhere(rig, (p) => p.some((x) => x.agent === 'solo' && x.sessionId !== null))).filter((p) => p.agent === 'solo');
    const pidBefore = (await listPanes(await rig.control(), rig.session)).find((p) => p.agent === 'solo')!.panePid;
    const h = await rig.run(['handoff', 'solo', '--headless', '--message', 'first, headless', '--json']);
    expect(h.code, h.stderr).toBe(0);
    const r = JSON.parse(h.stdout);
    expect(r.delivery.kind).toBe('headless');
    expect(r.reply.text).toContain(`turn 1 of session ${pin!.sessionId!.slice(0, 8)}`);
    // The pane runs a new process: the resumed TUI, with the resume arguments for the same session.
    const pane = (await listPanes(await rig.control(), rig.session)).find((p) => p.agent === 'solo')!;
    expect(pane.panePid).not.toBe(pidBefore);
    const argv = (await readFile(`/proc/${pane.panePid}/cmdline`, 'utf8')).split('\0');
    expect(argv).toEqual(expect.arrayContaining(['--resume', pin!.sessionId!]));
    await rig.waitForScreen('solo', /Type your message/);
    // The next turn in the pane is the conversation's second: the TUI loaded the headless one.
    expect(await ask(rig, 'solo', 'then in the pane')).toContain(`turn 2 of session ${pin!.sessionId!.slice(0, 8)}`);
    const again = await rig.run(['handoff', 'solo', '--headless', '--message', 'headless again', '--json']);
    expect(JSON.parse(again.stdout).reply.text).toContain(`turn 3 of session ${pin!.sessionId!.slice(0, 8)}`);
    const pins = await registryWhere(rig, () => true);
    expect(pins.find((p) => p.agent === 'solo')).toMatchObject({ sessionId: pin!.sessionId, previous: [] });
  });
});
