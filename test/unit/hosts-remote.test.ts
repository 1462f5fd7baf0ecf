// A host's supervisor as the local one starts it (src/hosts/remote-host.ts, src/hosts/remote-project.ts)
// on a fake connection: the remote project's jaggers.json, the order of what runs there (check, write,
// `jaggers up`, forward, record, the API asked once), and each failure said before anything starts.
import { execa } from 'execa';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiSocketPath, apiSocketPathOn } from '../../src/api/paths.js';
import { JaggersError } from '../../src/errors.js';
import { parseCheckOutput, checkScript } from '../../src/hosts/check.js';
import type { ConnectionState, RunResult } from '../../src/hosts/connection.js';
import type { HostRecord } from '../../src/hosts/record.js';
import { describeState, RemoteHost, type HostLink, type RemoteHostPorts } from '../../src/hosts/remote-host.js';
import { Hosts } from '../../src/supervisor/hosts.js';
import { recordingLog } from '../helpers/work-fakes.js';
import { FakeClock } from '../helpers/fake-clock.js';
import type { KeeperEvent } from '../../src/hosts/keeper.js';
import { remoteProjectFile, remoteRoot, writeProjectScript } from '../../src/hosts/remote-project.js';
import type { ProjectFile } from '../../src/project/project-file.js';

const project = (agents: ProjectFile['agents'], more: Partial<ProjectFile> = {}): ProjectFile => ({
  hosts: { box: { ssh: 'me@box', dir: '~/proj' } },
  agents,
  ...more,
});
const agent = (name: string, more: Partial<ProjectFile['agents'][number]> = {}) => ({ name, profile: 'demo', args: [], env: {}, ...more });

describe('the remote project', () => {
  it('lives under the host folder in .jaggers/hosted/<session>', () => {
    expect(remoteRoot('/srv/proj', 'web')).toBe('/srv/proj/.jaggers/hosted/web');
  });

  it("is written from the host's agents: no host, cwd made absolute there, a fallback kept only on the same host, local-only settings left here", () => {
    const p = project(
      [
        agent('near'),
        agent('far', { host: 'box', cwd: 'src', fallback: 'near', args: ['--x'] }),
        agent('farther', { host: 'box', fallback: 'far', budget: { tokens: 1000 } }),
      ],
      { size: '160x48', notify: 'notify-send hi', budget: { tokens: 5 }, stuckAfter: 60 },
    );
    expect(remoteProjectFile(p, 'box', 'web', '/srv/proj')).toEqual({
      session: 'web',
      size: '160x48',
      stuckAfter: 60,
      agents: [
        { name: 'far', profile: 'demo', args: ['--x'], env: {}, cwd: '/srv/proj/src' },
        { name: 'farther', profile: 'demo', args: [], env: {}, cwd: '/srv/proj', fallback: 'far', budget: { tokens: 1000 } },
      ],
      // The rest of the team, whom they may message (through the outbox there).
      home: { agents: ['near'] },
    });
  });

  it('carries an agent in a worktree of its own there (its cwd a folder inside the worktree) and how worktrees are set up', () => {
    const p = project([agent('far', { host: 'box', isolation: 'worktree', cwd: 'src' }), agent('iso', { host: 'box', isolation: 'worktree' })], {
      worktree: { copy: ['.env'], setup: 'npm ci', branchPrefix: 'agents/' },
    });
    expect(remoteProjectFile(p, 'box', 'web', '/srv/proj')).toEqual({
      session: 'web',
      worktree: { copy: ['.env'], setup: 'npm ci', branchPrefix: 'agents/' },
      agents: [
        { name: 'far', profile: 'demo', args: [], env: {}, isolation: 'worktree', cwd: 'src' },
        { name: 'iso', profile: 'demo', args: [], env: {}, isolation: 'worktree' },
      ],
    });
  });

  it('refuses a host with no agent', () => {
    expect(() => remoteProjectFile(project([agent('near')]), 'box', 'web', '/p')).toThrow(/host box: jaggers.json puts no agent on it/);
  });

  it('is written by a sh script byte for byte, quotes and all, in private folders', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'jg-remote-'));
    try {
      const root = path.join(dir, "it's here", '.jaggers', 'hosted', 's');
      const text = JSON.stringify({ agents: [{ name: 'a', env: { X: "it's $HOME `x` \\n" } }] }, null, 2);
      await execa('sh', ['-c', writeProjectScript(root, text)]);
      expect(await readFile(path.join(root, 'jaggers.json'), 'utf8')).toBe(`${text}\n`);
      const { stdout } = await execa('stat', ['-c', '%a', root]);
      expect(stdout).toBe('700');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("finds the host supervisor's socket as that host's jaggers does: in the project, or in its temp folder when too long", () => {
    const short = '/srv/p/.jaggers/hosted/web/.jaggers';
    expect(apiSocketPathOn(short, '/tmp', 1001, path.posix)).toBe(`${short}/jaggers.sock`);
    const deep = `/srv/${'d'.repeat(90)}/.jaggers`;
    expect(apiSocketPathOn(deep, '/var/tmp', 1001, path.posix)).toMatch(/^\/var\/tmp\/jaggers-1001\/[0-9a-f]{16}\.sock$/);
    // The same function as this machine's own.
    expect(apiSocketPathOn(deep, os.tmpdir(), process.getuid!())).toBe(apiSocketPath(deep));
  });
});

/** A connection that connects (or fails) when opened, and answers each run from a script of answers. */
class FakeLink implements HostLink {
  state: ConnectionState = { state: 'closed' };
  readonly runs: string[][] = [];
  readonly forwards: [string, string][] = [];
  closed = false;
  private listeners = new Set<(s: ConnectionState) => void>();
  constructor(
    private readonly answer: (argv: readonly string[]) => RunResult,
    private readonly failWith: string | null = null,
  ) {}
  private set(s: ConnectionState) {
    this.state = s;
    for (const l of [...this.listeners]) l(s);
  }
  open() {
    queueMicrotask(() => {
      this.set({ state: 'connecting', attempt: 1 });
      if (this.failWith) this.set({ state: 'retrying', inMs: 1000, attempt: 1, reason: this.failWith });
      else this.set({ state: 'connected', attempt: 1 });
    });
  }
  async close() {
    this.closed = true;
    this.set({ state: 'closed' });
  }
  on(l: (s: ConnectionState) => void) {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }
  async run(argv: readonly string[]): Promise<RunResult> {
    this.runs.push([...argv]);
    return this.answer(argv);
  }
  async forward(local: string, remote: string) {
    this.forwards.push([local, remote]);
  }
}

/** What the check script prints on a host with everything (as parseCheckOutput reads it). */
function checkAnswer(o: { version?: string } = {}): RunResult {
  const lines = [
    'jaggers-host-check\t1',
    'user\tme',
    'home\t/home/me',
    'uid\t1001',
    'tmp\t/tmp',
    'path\t/usr/bin:/bin',
    'tmux\t/usr/bin/tmux\ttmux 3.3a',
    'cli\tjaggers-fake-agent\t/usr/bin/jaggers-fake-agent',
    `jaggers\t/usr/bin/jaggers\t${o.version ?? '1.0.0'}`,
    'dir\t/home/me/proj\tyes\tyes',
    'jaggers-host-check-end',
  ];
  return { exitCode: 0, stdout: lines.join('\n') + '\n', stderr: '' };
}

const upAnswer: RunResult = {
  exitCode: 0,
  stdout: JSON.stringify({
    session: 'web',
    windows: [{ agent: 'far', terminalId: 'jg-1', windowId: '@1', paneId: '%1', action: 'create', launch: { sessionId: 'u-1', pin: 'pre-generated' } }],
    missing: [],
  }),
  stderr: '',
};

function host(link: FakeLink, record: HostRecord | null = null, more: Partial<RemoteHostPorts> = {}) {
  const log: string[] = [];
  const written: HostRecord[] = [];
  const h = new RemoteHost({
    name: 'box',
    spec: { ssh: 'me@box', dir: '~/proj' },
    link,
    localSocket: '/p/.jaggers/hosts/box.sock',
    api: {
      call: async <T>(method: string, p: string) => {
        log.push(`${method} ${p}`);
        return {} as T;
      },
    },
    version: '1.0.0',
    record: { read: async () => record, write: async (r) => void written.push(r) },
    prepare: async () => void log.push('prepare'),
    remoteSocket: (root) => `${root}/.jaggers/jaggers.sock`,
    ...more,
  });
  return { h, log, written };
}

const byStep = (argv: readonly string[]): RunResult => {
  if (argv[0] === 'sh' && argv[2]?.includes('jaggers-host-check')) return checkAnswer();
  if (argv[0] === 'sh') return { exitCode: 0, stdout: '', stderr: '' };
  if (argv[0] === 'jaggers') return upAnswer;
  throw new Error(`unexpected ${argv.join(' ')}`);
};

describe('a host supervisor started', () => {
  const p = project([agent('near'), agent('far', { host: 'box' })]);

  it('checks the host, writes the project, runs `jaggers up` there, forwards its socket, records it and asks its API', async () => {
    const link = new FakeLink(byStep);
    const { h, log, written } = host(link);
    const opened = await h.up(p, 'web', ['jaggers-fake-agent']);
    const root = '/home/me/proj/.jaggers/hosted/web';
    expect(link.runs.map((r) => r[0])).toEqual(['sh', 'sh', 'jaggers']);
    expect(link.runs[0]![2]).toBe(checkScript({ dir: '~/proj', commands: ['jaggers-fake-agent'] }));
    expect(link.runs[1]![2]).toContain(`mkdir -p ${root}`);
    expect(link.runs[2]).toEqual(['jaggers', '--project', root, 'up', '--no-wait', '--json']);
    expect(link.forwards).toEqual([['/p/.jaggers/hosts/box.sock', `${root}/.jaggers/jaggers.sock`]]);
    expect(written).toEqual([{ root, socket: `${root}/.jaggers/jaggers.sock`, startedAt: expect.any(String), agents: ['far'] }]);
    expect(log).toEqual(['prepare', 'GET /v1/health']);
    expect(opened).toEqual({
      windows: [
        { host: 'box', agent: 'far', terminalId: 'jg-1', windowId: '@1', paneId: '%1', action: 'create', launch: { sessionId: 'u-1', pin: 'pre-generated' } },
      ],
      missing: [],
    });
    expect(h.view()).toEqual({ name: 'box', ssh: 'me@box', state: 'connected', detail: 'connected', root });
    // `up` again: everything runs there again (the host's `up` keeps what runs), the socket is not forwarded twice.
    await h.up(p, 'web', ['jaggers-fake-agent']);
    expect(link.runs.map((r) => r[0])).toEqual(['sh', 'sh', 'jaggers', 'sh', 'sh', 'jaggers']);
    expect(link.forwards).toHaveLength(1);
  });

  it('stops at the check: every problem in one E_HOST_NOT_READY, nothing written or started', async () => {
    const bad = checkAnswer({ version: '0.9.0' }).stdout.replace('/home/me/proj\tyes\tyes', '/nowhere\tno\tno');
    const l2 = new FakeLink((argv) => (argv[0] === 'sh' ? { exitCode: 0, stdout: bad, stderr: '' } : upAnswer));
    const { h } = host(l2);
    const e = await h.up(p, 'web', ['jaggers-fake-agent']).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JaggersError);
    expect((e as JaggersError).code).toBe('E_HOST_NOT_READY');
    expect((e as JaggersError).message).toMatch(
      /^host box \(me@box\) is not ready: jaggers: "0.9.0" there .*; dir: \/nowhere is not a folder there.*jaggers host check box/,
    );
    expect(l2.runs).toHaveLength(1);
    expect(l2.forwards).toEqual([]);
    expect(parseCheckOutput(bad)?.dir.exists).toBe(false);
  });

  it("a first connection that fails is the error, with ssh's reason and code; a host never started is not kept retrying", async () => {
    const key = new FakeLink(byStep, 'host box (me@box): its host key is not in known_hosts, and jaggers never accepts a host key unasked');
    const e = await host(key)
      .h.up(p, 'web', [])
      .catch((x: unknown) => x);
    expect((e as JaggersError).code).toBe('E_SSH_HOST_KEY');
    expect(key.closed).toBe(true);

    const down = new FakeLink(byStep, 'host box (me@box): cannot connect (Connection refused)');
    const rec = { root: '/r', socket: '/r/.jaggers/jaggers.sock', startedAt: '', agents: ['far'] };
    const e2 = await host(down, rec)
      .h.up(p, 'web', [])
      .catch((x: unknown) => x);
    expect((e2 as JaggersError).code).toBe('E_SSH');
    expect((e2 as JaggersError).message).toContain('Connection refused');
    // Started before: its connection goes on retrying.
    expect(down.closed).toBe(false);
  });

  it('says what `jaggers up` there printed when it fails', async () => {
    const link = new FakeLink((argv) => (argv[0] === 'jaggers' ? { exitCode: 1, stdout: '', stderr: 'jaggers: tmux 3.0 is too old\n' } : byStep(argv)));
    const e = await host(link)
      .h.up(p, 'web', [])
      .catch((x: unknown) => x);
    expect((e as JaggersError).message).toBe('host box: `jaggers up` there failed (exit 1): jaggers: tmux 3.0 is too old');
    expect(link.forwards).toEqual([]);
  });

  it('a host the last supervisor started is connected again and its socket forwarded, nothing run there', async () => {
    const link = new FakeLink(byStep);
    const rec = { root: '/r', socket: '/r/.jaggers/jaggers.sock', startedAt: '', agents: ['far'] };
    const { h } = host(link, rec);
    expect(await h.resume()).toBe(true);
    expect(link.forwards).toEqual([['/p/.jaggers/hosts/box.sock', '/r/.jaggers/jaggers.sock']]);
    expect(link.runs).toEqual([]);
    expect(await host(new FakeLink(byStep)).h.resume()).toBe(false);
  });

  it('keeps its supervisor once started: one that stops answering is started again with `jaggers up` there after 1 s, and the view says so', async () => {
    const clock = new FakeClock();
    let alive = true;
    let end: () => void = () => {};
    const told: KeeperEvent[] = [];
    const link = new FakeLink((argv) => {
      if (argv[0] === 'jaggers') alive = true;
      return byStep(argv);
    });
    const DOWN = 'no supervisor answers at /p/.jaggers/hosts/box.sock (ECONNREFUSED)';
    const { h } = host(link, null, {
      api: {
        call: async <T>() => {
          if (!alive) throw new JaggersError('E_SUPERVISOR_DOWN', DOWN);
          return {} as T;
        },
        events: (_p, _on, o) =>
          new Promise<void>((resolve) => {
            end = resolve;
            o?.signal?.addEventListener('abort', () => resolve(), { once: true });
          }),
      },
      keeper: { clock, told: (e) => void told.push(e) },
    });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await h.up(p, 'web', ['jaggers-fake-agent']);
    await settle();
    expect(h.view().supervisor).toEqual({ state: 'answering', detail: 'answering', restarts: 0 });
    const root = '/home/me/proj/.jaggers/hosted/web';
    // Killed there: its stream ends, nobody answers.
    alive = false;
    end();
    await settle();
    expect(h.view().supervisor).toEqual({ state: 'not-answering', detail: `not answering (${DOWN}); started again in 1 s unless it answers`, restarts: 0 });
    const runs = link.runs.length;
    clock.advance(1000);
    await settle();
    expect(link.runs.slice(runs)).toEqual([['jaggers', '--project', root, 'up', '--no-wait', '--json']]);
    expect(told.map((e) => [e.what, e.was, e.detail])).toEqual([
      ['restarting', DOWN, `host box: its supervisor does not answer (${DOWN}): starting it again`],
      ['restarted', DOWN, 'far opened in session u-1'],
    ]);
    expect(h.view().supervisor).toMatchObject({
      state: 'answering',
      restarts: 1,
      detail: expect.stringMatching(/^restarted at .* \(was: no supervisor answers/),
    });
    // Let go (`down` next): nothing started again.
    await h.letGo();
    alive = false;
    end();
    clock.advance(60_000);
    await settle();
    expect(link.runs.length).toBe(runs + 1);
    expect(h.view().supervisor).toBeUndefined();
  });

  it('describes each state of the connection', () => {
    expect(describeState({ state: 'retrying', inMs: 7500, attempt: 3, reason: 'the connection dropped' })).toBe('retrying in 8 s (the connection dropped)');
    expect(describeState({ state: 'connecting', attempt: 2 })).toBe('connecting (attempt 2)');
    expect(describeState({ state: 'lost', reason: 'x' })).toBe('lost (x)');
  });
});

describe("the local supervisor's hosts", () => {
  const p = project([agent('near'), agent('far', { host: 'box' })]);

  it('start each host once, show its connection, and make a new connection after a first one that failed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'jg-hosts-'));
    try {
      const links: FakeLink[] = [];
      let fail = true;
      const hosts = new Hosts({
        jaggersDir: path.join(dir, '.jaggers'),
        session: 'web',
        env: {},
        version: '1.0.0',
        log: recordingLog(),
        commandOf: async () => 'jaggers-fake-agent',
        clock: new FakeClock(),
        link: async () => {
          const l = new FakeLink(byStep, fail ? 'host box: cannot connect (Connection refused)' : null);
          links.push(l);
          return l;
        },
      });
      const far = p.agents.filter((a) => a.host);
      await expect(hosts.up(far, p)).rejects.toMatchObject({ code: 'E_SSH', message: 'host box: cannot connect (Connection refused)' });
      expect(links[0]!.closed).toBe(true);
      expect(hosts.views()).toEqual([]);
      fail = false;
      const opened = await hosts.up(far, p).catch((e: Error) => e);
      // The API answers nobody here (no socket): the health asked at the end fails, but everything ran there.
      expect(links).toHaveLength(2);
      expect(links[1]!.runs.map((r) => r[0])).toEqual(['sh', 'sh', 'jaggers']);
      expect(opened).toMatchObject({ code: 'E_SUPERVISOR_DOWN' });
      // Its supervisor kept from then on (here nobody answers: it is not answering, to be started again).
      expect(hosts.views()).toEqual([
        {
          name: 'box',
          ssh: 'me@box',
          state: 'connected',
          detail: 'connected',
          root: '/home/me/proj/.jaggers/hosted/web',
          supervisor: { state: expect.stringMatching(/^(unknown|not-answering)$/), detail: expect.any(String), restarts: 0 },
        },
      ]);
      // The record is written once its socket is forwarded: the next supervisor finds it.
      expect(JSON.parse(await readFile(path.join(dir, '.jaggers', 'hosts', 'box.json'), 'utf8'))).toMatchObject({ root: '/home/me/proj/.jaggers/hosted/web' });
      await hosts.close();
      expect(links[1]!.closed).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
