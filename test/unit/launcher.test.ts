// The one launcher (src/agents/launcher.ts) on an in-memory tmux behind a real ControlClient
// (test/helpers/fake-tmux.ts) and an in-memory registry: `up` plans and applies windows and records
// them once; two `up`s at once are one after the other; a worker window is recorded with its job's
// `starting`, and closed again when the job ended meanwhile.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Launcher, type LauncherPorts } from '../../src/agents/launcher.js';
import { ProjectSchema, type ProjectFile } from '../../src/project/project-file.js';
import { FakeTmux } from '../helpers/fake-tmux.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeStore, jobEvent, recordingLog, terminalEvents, testProfile } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-launcher-');

const pinning = (name: string) =>
  testProfile({ name, session: { pin: 'pre-generated', startArgs: ['--session-id', '{sessionId}'], resumeArgs: ['--resume', '{sessionId}'] } });

async function setup(
  project: ProjectFile | null = ProjectSchema.parse({
    agents: [
      { name: 'coder', profile: 'fake' },
      { name: 'reviewer', profile: 'fake' },
    ],
  }),
  hosts?: LauncherPorts['hosts'],
) {
  const root = await temp();
  // The `nice` program agents start under, found on the supervisor's PATH.
  const tools = path.join(root, 'tools');
  await mkdir(tools);
  await writeFile(path.join(tools, 'nice'), '#!/bin/sh\n', { mode: 0o755 });
  const niced: { pid: number; nice: number }[] = [];
  const tmux = new FakeTmux();
  tmux.addWindow({ name: 'supervisor', index: 0 });
  const store = new FakeStore();
  let refreshes = 0;
  const ports: LauncherPorts = {
    tmux: tmux.client,
    store,
    table: { refresh: async () => void refreshes++, find: () => undefined, byPane: () => undefined },
    watcher: { hold: () => {}, release: () => {}, pane: () => undefined },
    place: async (spec) => spec,
    jobFolder: async () => {
      throw new Error('no worktrees in this test');
    },
    log: recordingLog(),
    where: {
      projectRoot: root,
      jaggersDir: path.join(root, '.jaggers'),
      session: tmux.session,
      socket: 'jaggers-test',
      binDir: path.join(root, 'bin'),
      basePath: `${tools}:/usr/bin:/bin`,
      env: {},
    },
    sessionNice: { set: (pid, nice) => void niced.push({ pid, nice }) },
    project: async () => project,
    loadProfile: async (name) => pinning(name),
    ...(hosts ? { hosts } : {}),
  };
  const launcher = new Launcher(ports);
  const agentsOf = () => tmux.windows.filter((w) => w.options['@jaggers_agent']).map((w) => w.options['@jaggers_agent']);
  const nice = ['-n', '5'];
  return { root, tmux, store, launcher, agentsOf, refreshes: () => refreshes, niced, nice: [path.join(tools, 'nice'), ...nice] };
}

describe('the launcher', () => {
  it('up: opens a window per agent, tagged, sized and pinned, and records each once', async () => {
    const h = await setup();
    const opened = await h.launcher.up({});
    expect(opened.missing).toEqual([]);
    expect(opened.windows.map((w) => [w.agent, w.action])).toEqual([
      ['coder', 'create'],
      ['reviewer', 'create'],
    ]);
    expect(h.agentsOf()).toEqual(['coder', 'reviewer']);
    const coder = h.tmux.windows.find((w) => w.options['@jaggers_agent'] === 'coder')!;
    const terminalId = coder.options['@jaggers_terminal_id']!;
    expect(terminalId).toMatch(/^jg-[0-9a-f]{8}$/);
    expect(coder.options).toMatchObject({ '@jaggers_profile': 'fake', 'window-size': 'manual' });
    // Started in a conversation pinned up front, and the registry knows it.
    const session = h.store.data.terminals[terminalId]!.sessionId!;
    // Under nice 5 (the default), and its pane's session group too.
    expect(coder.command).toEqual([...h.nice, 'sh', '--session-id', session]);
    expect(h.niced).toEqual(h.tmux.windows.filter((w) => w.options['@jaggers_agent']).map((w) => ({ pid: w.pid, nice: 5 })));
    expect(h.store.data.terminals[terminalId]).toMatchObject({ agent: 'coder', window: coder.windowId, cwd: h.root, task: null });
    expect(h.tmux.globals).toMatchObject({ 'remain-on-exit': 'on', 'default-size': '200x50' });
    expect(h.tmux.named('resize-window').map((c) => c.slice(-4))).toEqual([
      ['-x', '200', '-y', '50'],
      ['-x', '200', '-y', '50'],
      ['-x', '200', '-y', '50'],
    ]);
    const types = h.store.events.map((e) => e.type);
    expect(types.filter((t) => t === 'terminal-created')).toHaveLength(2);
    expect(types.filter((t) => t === 'terminal-window')).toHaveLength(2);
    expect(types.filter((t) => t === 'session-pinned')).toHaveLength(2);
    expect(h.refreshes()).toBe(1);

    // A second `up` keeps the live windows and records nothing.
    const before = h.store.events.length;
    const again = await h.launcher.up({});
    expect(again.windows.map((w) => w.action)).toEqual(['keep', 'keep']);
    expect(h.store.events.length).toBe(before);
    expect(h.tmux.named('new-window')).toHaveLength(2);
  });

  it('two `up`s at once run one after the other: each agent gets one window', async () => {
    const h = await setup();
    const [a, b] = await Promise.all([h.launcher.up({}), h.launcher.up({})]);
    expect(a.windows.map((w) => w.action)).toEqual(['create', 'create']);
    expect(b.windows.map((w) => w.action)).toEqual(['keep', 'keep']);
    expect(h.agentsOf()).toEqual(['coder', 'reviewer']);
    expect(h.store.of('terminal-created')).toHaveLength(2);
    // A failing `up` does not stop the next one.
    const broken = await setup(ProjectSchema.parse({ agents: [{ name: 'coder', profile: 'fake', cwd: 'x' }] }));
    const bad = broken.launcher.up({ size: 'huge' }).then(
      () => 'no error',
      (e: Error) => e.message,
    );
    const good = broken.launcher.up({});
    expect(await bad).toBe('--size: size must look like 200x50, got "huge"');
    expect((await good).windows.map((w) => w.action)).toEqual(['create']);
  });

  it('up: restarts a dead pane in place, resuming its pinned conversation', async () => {
    const h = await setup(ProjectSchema.parse({ agents: [{ name: 'coder', profile: 'fake' }] }));
    await h.launcher.up({});
    const w = h.tmux.windows.find((x) => x.options['@jaggers_agent'] === 'coder')!;
    const terminalId = w.options['@jaggers_terminal_id']!;
    const session = h.store.data.terminals[terminalId]!.sessionId!;
    w.dead = true;
    const opened = await h.launcher.up({});
    expect(opened.windows.map((x) => [x.action, x.terminalId])).toEqual([['respawn', terminalId]]);
    expect(h.tmux.named('respawn-pane')).toHaveLength(1);
    expect(w.command).toEqual([...h.nice, 'sh', '--resume', session]);
    expect(h.niced.at(-1)).toEqual({ pid: w.pid, nice: 5 });
    expect(h.store.of('terminal-created')).toHaveLength(1);
    expect(h.store.of('session-pinned').map((e) => e.how)).toEqual(['pre-generated', 'resumed']);
  });

  it('up: says which agents were not started because their command is not found', async () => {
    const h = await setup(ProjectSchema.parse({ agents: [{ name: 'coder', profile: 'fake', env: { PATH: '/nowhere' } }] }));
    const opened = await h.launcher.up({});
    expect(opened.windows).toEqual([]);
    expect(opened.missing).toEqual([{ agent: 'coder', command: 'sh', path: `${path.join(h.root, 'bin')}:/nowhere`, install: null }]);
    expect(h.tmux.named('new-window')).toEqual([]);
  });

  const twoHosts = () =>
    ProjectSchema.parse({
      hosts: { box: { ssh: 'me@box', dir: '/srv/p' } },
      agents: [
        { name: 'here', profile: 'fake' },
        { name: 'far', profile: 'fake', host: 'box' },
      ],
    });

  it('up: without hosts to start them, refuses an agent on another host before opening anything', async () => {
    const h = await setup(twoHosts());
    await expect(h.launcher.up({})).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringMatching(/far \(host box\): agents on other hosts are not started this way yet/),
    });
    expect(h.tmux.named('new-window')).toEqual([]);
  });

  it("up: opens the local agents here, then hands the others to their hosts' supervisors and reports their windows", async () => {
    const asked: string[][] = [];
    const far = { host: 'box', agent: 'far', terminalId: 'jg-far', windowId: '@1', paneId: '%1', action: 'create' as const, launch: null };
    const h = await setup(twoHosts(), {
      up: async (specs) => {
        asked.push(specs.map((s) => s.name));
        return { windows: [far], missing: [{ agent: 'far2', command: 'x', path: '/bin', install: null }] };
      },
    });
    const opened = await h.launcher.up({});
    expect(h.agentsOf()).toEqual(['here']);
    expect(asked).toEqual([['far']]);
    expect(opened.windows.map((w) => w.agent)).toEqual(['here']);
    expect(opened.remote).toEqual([far]);
    expect(opened.missing).toEqual([{ agent: 'far2', command: 'x', path: '/bin', install: null }]);
  });

  it("up --task: the task's local agents in windows of its own here, its agents on other hosts in their windows there; resume asks their hosts again", async () => {
    const asked: string[][] = [];
    const h = await setup(twoHosts(), {
      up: async (specs) => {
        asked.push(specs.map((s) => s.name));
        return { windows: [], missing: [] };
      },
    });
    await h.launcher.up({ task: 't-1', names: ['here', 'far'] });
    expect(h.agentsOf()).toEqual(['here']);
    expect(h.store.data.terminals[h.store.data.tasks['t-1']!.agents.here!.terminalId]).toMatchObject({ agent: 'here', task: 't-1' });
    expect(asked).toEqual([['far']]);
    // Resumed (its roles name far): far's host is asked again.
    h.store.seed({
      type: 'task-workflow',
      taskId: 't-1',
      workflow: 'pair',
      source: 'built-in',
      definition: {},
      text: 'x',
      roles: { a: 'here', b: 'far' },
      detached: true,
    });
    await h.launcher.up({ task: 't-1', resume: true });
    expect(asked).toEqual([['far'], ['far']]);
    // A task of its own worktree is only here.
    await expect(h.launcher.up({ task: 't-2', names: ['here', 'far'], worktree: true })).rejects.toThrow(
      /far \(host box\): agents on other hosts are not started in a task of its own worktree \(--worktree\) yet/,
    );
  });

  it('records a window tmux knows and the registry lost (a registry rebuilt after a crash)', async () => {
    const h = await setup();
    h.tmux.addWindow({ name: 'coder', options: { '@jaggers_terminal_id': 'jg-0a0b', '@jaggers_agent': 'coder', '@jaggers_profile': 'fake' } });
    await h.launcher.recordTags();
    expect(h.store.data.terminals['jg-0a0b']).toMatchObject({ agent: 'coder', profile: 'fake' });
  });

  it("openWorker: a worker window, recorded with its job's `starting` in one entry", async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-0a0b0c0d', { kind: 'worker', target: 'fake', terminalId: null }));
    const updates: number[] = [];
    const update = h.store.update.bind(h.store);
    h.store.update = (fn) => {
      updates.push(h.store.events.length);
      return update(fn);
    };
    expect(await h.launcher.openWorker(h.store.data.jobs['j-0a0b0c0d']!, pinning('fake'))).toBe(true);
    const w = h.tmux.windows.at(-1)!;
    expect(w.name).toBe('fake-j-0a0b0c0d');
    expect(w.options).toMatchObject({ '@jaggers_agent': 'fake-j-0a0b0c0d', '@jaggers_task': 'j-0a0b0c0d', '@jaggers_profile': 'fake' });
    const j = h.store.data.jobs['j-0a0b0c0d']!;
    expect(j).toMatchObject({ state: 'starting', window: w.windowId, agent: 'fake-j-0a0b0c0d', terminalId: w.options['@jaggers_terminal_id'] });
    expect(updates).toHaveLength(1);
    expect(h.store.events.map((e) => e.type)).toEqual(['job-created', 'terminal-created', 'terminal-window', 'session-pinned', 'job-state']);
  });

  it('openWorker: the window is closed again when the job ended while it opened', async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-0a0b0c0d', { kind: 'worker', target: 'fake', terminalId: null }));
    h.tmux.onCommand = (args) => {
      if (args[0] === 'new-window') h.store.seed({ type: 'job-state', jobId: 'j-0a0b0c0d', state: 'cancelled', reason: 'by the user' });
    };
    expect(await h.launcher.openWorker(h.store.data.jobs['j-0a0b0c0d']!, pinning('fake'))).toBe(false);
    expect(h.tmux.named('kill-window')).toHaveLength(1);
    expect(h.tmux.windows.map((w) => w.name)).toEqual(['supervisor']);
    expect(h.store.of('terminal-created')).toEqual([]);
  });

  it('openWorker: a CLI not installed is E_COMMAND_NOT_FOUND before any window', async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-0a0b0c0d', { kind: 'worker', target: 'fake', terminalId: null }));
    const missing = testProfile({ name: 'fake', command: 'no-such-cli-here' });
    await expect(h.launcher.openWorker(h.store.data.jobs['j-0a0b0c0d']!, missing)).rejects.toMatchObject({ code: 'E_COMMAND_NOT_FOUND' });
    expect(h.tmux.named('new-window')).toEqual([]);
  });

  it("openTaskWindow: a task's window gone with its tmux server is opened again in its pinned conversation", async () => {
    const h = await setup();
    h.store.seed(...terminalEvents('jg-7a5c', 'coder', { task: 't-1', sessionId: '99999999-2222-3333-4444-555555555555', cwd: h.root }));
    await h.launcher.openTaskWindow('jg-7a5c', 't-1');
    const w = h.tmux.windows.at(-1)!;
    expect(w.name).toBe('coder+t-1');
    expect(w.command).toEqual([...h.nice, 'sh', '--resume', '99999999-2222-3333-4444-555555555555']);
    expect(h.store.data.terminals['jg-7a5c']!.window).toBe(w.windowId);
    // Resumed under the pin it had: no new pin.
    expect(h.store.of('session-pinned')).toHaveLength(1);
  });

  it("jaggers.json's `nice`: 0 starts agents as jaggers runs (no nice, no group change); a headless run gets the agent's nice too", async () => {
    const zero = await setup(ProjectSchema.parse({ nice: 0, agents: [{ name: 'coder', profile: 'fake' }] }));
    await zero.launcher.up({});
    const w = zero.tmux.windows.find((x) => x.options['@jaggers_agent'] === 'coder')!;
    expect(w.command[0]).toBe('sh');
    expect(zero.niced).toEqual([]);

    const h = await setup(ProjectSchema.parse({ nice: 9, agents: [{ name: 'coder', profile: 'fake' }] }));
    await h.launcher.up({});
    const terminalId = h.tmux.windows.find((x) => x.options['@jaggers_agent'] === 'coder')!.options['@jaggers_terminal_id']!;
    const run = await h.launcher.headlessLaunch(terminalId, 't-1');
    expect(run.before).toEqual([h.nice[0], '-n', '9']);
    run.started?.(4321);
    expect(h.niced.at(-1)).toEqual({ pid: 4321, nice: 9 });
  });
});
