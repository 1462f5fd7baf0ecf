import { mkdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listPanes } from '../../src/tmux/commands.js';
import { catProfile, writeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { api, readRegistry, waitPidGone } from '../helpers/api.js';
import type { HealthView } from '../../src/api/types.js';

async function environOf(pid: number): Promise<Record<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe('jaggers up / ls / capture / send / down on real tmux', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeProfile(rig.root, 'echo', catProfile);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'echo' },
        { name: 'beta', profile: 'echo', env: { EXTRA: 'x y' } },
      ],
    });
  });
  afterEach(async () => rig.cleanup());

  it('opens one tagged window per agent with the pane environment set', async () => {
    const r = await rig.run(['up']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/alpha\s+jg-[0-9a-f]{8}\s+@\d+\s+started/);
    const c = await rig.control();
    const panes = await listPanes(c, rig.session);
    expect(panes.map((p) => p.windowName)).toEqual(['jaggers', 'alpha', 'beta']);
    for (const name of ['alpha', 'beta']) {
      const p = panes.find((x) => x.windowName === name)!;
      expect(p).toMatchObject({ agent: name, profile: 'echo', width: 200, height: 50, dead: false });
      expect(p.terminalId).toMatch(/^jg-[0-9a-f]{8}$/);
      await rig.waitForScreen(p.paneId, /ready/);
      // The pane's command is `sh -c 'echo ready; exec cat'`: cat is the pane's own process.
      const env = await environOf(p.panePid!);
      expect(env).toMatchObject({ JAGGERS_TERMINAL_ID: p.terminalId, JAGGERS_AGENT: name, JAGGERS_SESSION: rig.session, JAGGERS_SOCKET: rig.socket });
      expect(env.PATH?.split(':')[0]).toMatch(/\/bin$/);
    }
    const beta = panes.find((x) => x.windowName === 'beta')!;
    expect((await environOf(beta.panePid!)).EXTRA).toBe('x y');
    const reg = readRegistry(rig.root);
    expect(Object.keys(reg.terminals).sort()).toEqual(
      panes
        .filter((p) => p.agent)
        .map((p) => p.terminalId)
        .sort(),
    );
  });

  it("runs each agent under nice 5 (jaggers.json's `nice`, an agent's own), its pane's session group too where the kernel groups by session", async () => {
    await writeProject(rig.root, {
      nice: 7,
      agents: [
        { name: 'alpha', profile: 'echo' },
        { name: 'beta', profile: 'echo', nice: 0 },
      ],
    });
    const r = await rig.run(['up']);
    expect(r.code, r.stderr).toBe(0);
    const c = await rig.control();
    const panes = (await listPanes(c, rig.session)).filter((p) => p.agent);
    const of = (agent: string) => panes.find((p) => p.agent === agent)!.panePid!;
    // The pane's own process is the CLI (nice execs it): its `nice` field (the 19th of /proc/<pid>/stat).
    const niceOf = async (pid: number) => Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[16]);
    const commOf = async (pid: number) => (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
    expect(await niceOf(of('alpha'))).toBe(7);
    expect(await commOf(of('alpha'))).toBe('cat');
    expect(await niceOf(of('beta'))).toBe(0);
    const grouped = (await readFile('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').catch(() => '0')).trim() === '1';
    if (!grouped) {
      console.log('autogroup is off on this kernel: the session group part is not checked');
      return;
    }
    // Changed by the supervisor after the pane started (one change per 100 ms for a user without CAP_SYS_ADMIN).
    const groupNice = async (pid: number) => /nice (-?\d+)/.exec(await readFile(`/proc/${pid}/autogroup`, 'utf8'))?.[1];
    const deadline = Date.now() + 5000;
    while ((await groupNice(of('alpha'))) !== '7' && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(await groupNice(of('alpha'))).toBe('7');
    expect(await groupNice(of('beta'))).toBe('0');
  });

  it('is idempotent, and a restarted server gets the same terminal ids back', async () => {
    expect((await rig.run(['up'])).code).toBe(0);
    const first = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    const again = await rig.run(['up']);
    expect(again.stdout).toMatch(/alpha\s+jg-\w+\s+@\d+\s+running/);
    const second = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    expect(second).toEqual(first);
    expect(first).toHaveLength(2);

    await rig.tmux(['kill-server']);
    const restarted = await rig.run(['up']);
    expect(restarted.code, restarted.stderr).toBe(0);
    const third = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    expect(third.map((a: { agent: string; terminalId: string }) => [a.agent, a.terminalId])).toEqual(
      first.map((a: { agent: string; terminalId: string }) => [a.agent, a.terminalId]),
    );
  });

  it('starts when an exiting server still holds the socket and drops the first clients', async () => {
    // What a `kill-server` leaves for a moment: something on the socket that accepts and closes
    // ("server exited unexpectedly"). It drops three clients (has-session, new-session, the check after
    // it), then is gone, as the old server would be.
    const dir = path.join(rig.env.TMUX_TMPDIR!, `tmux-${process.getuid!()}`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let dropped = 0;
    const dying = createServer((s) => {
      s.destroy();
      if (++dropped === 3) dying.close();
    });
    await new Promise<void>((resolve) => dying.listen(path.join(dir, rig.socket), resolve));
    const r = await rig.run(['up']);
    dying.close();
    expect(dropped).toBe(3);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/alpha\s+jg-[0-9a-f]{8}\s+@\d+\s+started/);
  });

  it('rebuilds a lost registry from the tmux tags', async () => {
    await rig.run(['up']);
    const before = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    // Lost while no supervisor ran (it keeps the registry in memory while it runs).
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const { rm } = await import('node:fs/promises');
    await rm(path.join(rig.root, '.jaggers', 'sessions.json'), { force: true });
    await rm(path.join(rig.root, '.jaggers', 'events.jsonl'));
    expect((await rig.run(['up'])).stdout).toMatch(/alpha\s+jg-\w+\s+@\d+\s+running/);
    const reg = readRegistry(rig.root);
    expect(Object.keys(reg.terminals).sort()).toEqual(before.map((a: { terminalId: string }) => a.terminalId).sort());
  });

  it('restarts a dead agent pane in place on the next up', async () => {
    await rig.run(['up']);
    const before = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    const alpha = before.find((a: { agent: string }) => a.agent === 'alpha');
    await rig.tmux(['send-keys', '-t', alpha.pane, 'C-d']);
    await rig.waitForDead(alpha.pane);
    expect(JSON.parse((await rig.run(['ls', '--json'])).stdout).find((a: { agent: string }) => a.agent === 'alpha').state).toBe('exited');
    expect((await rig.run(['up'])).stdout).toMatch(/alpha\s+jg-\w+\s+@\d+\s+restarted/);
    const after = JSON.parse((await rig.run(['ls', '--json'])).stdout);
    expect(after.find((a: { agent: string }) => a.agent === 'alpha')).toMatchObject({ terminalId: alpha.terminalId, window: alpha.window, state: 'idle' });
  });

  it('sends hostile text exactly and captures the screen', async () => {
    await rig.run(['up']);
    await rig.waitForScreen('alpha', /ready/);
    const text = `it's $HOME "q" \`b\` x; 日本語 🎉 é\u0301 end;`;
    const r = await rig.run(['send', 'alpha', text]);
    expect(r.stdout).toMatch(/sent \d+ bytes to alpha/);
    await rig.waitForScreen('alpha', /end;\n.*end;/s);
    const cap = await rig.run(['capture', 'alpha']);
    expect(cap.stdout.split('\n').filter((l) => l === text)).toHaveLength(2); // the tty echo and cat's copy
    const ansi = await rig.run(['capture', 'alpha', '--ansi']);
    expect(ansi.code).toBe(0);
  });

  it('names unknown agents and stops the server with down', async () => {
    await rig.run(['up']);
    const bad = await rig.run(['send', 'nobody', 'hi']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown agent "nobody" in session jgtest: agents are alpha, beta/);
    expect((await rig.run(['capture', 'nobody'])).stderr).toMatch(/unknown agent "nobody"/);
    expect((await rig.run(['down'])).stdout).toMatch(/stopped tmux -L jgtest-/);
    expect((await rig.run(['down'])).stdout).toMatch(/nothing running/);
    expect((await rig.run(['ls'])).stderr).toMatch(/no jaggers session "jgtest" on tmux -L jgtest-\S+: run `jaggers up` to start it/);
  });
});

describe('bad input stops up before anything starts', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
  });
  afterEach(async () => rig.cleanup());

  const serverUp = async () => (await rig.run(['doctor', '--json'])).stdout.includes('"serverRunning": true');

  it('tmux missing from PATH', async () => {
    await writeProfile(rig.root, 'echo', catProfile);
    const r = await rig.run(['up', '--agents', 'echo'], { env: { ...rig.env, PATH: '/nonexistent' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('jaggers: tmux not found on PATH: install it with apt-get install tmux or your package manager\n');
    const r2 = await rig.run(['up', '--agents', 'echo'], { env: { ...rig.env, JAGGERS_TMUX: '/opt/none/tmux' } });
    expect(r2.stderr).toMatch(/tmux not found at \/opt\/none\/tmux \(from JAGGERS_TMUX\)/);
    expect(await serverUp()).toBe(false);
  });

  it("an agent on another host: not in a task's own worktree; a host that cannot be reached is said after the local agents started", async () => {
    await writeProfile(rig.root, 'echo', catProfile);
    await writeProject(rig.root, {
      hosts: { box: { ssh: 'me@127.0.0.1', port: 1, dir: '/srv/p' } },
      agents: [
        { name: 'here', profile: 'echo' },
        { name: 'far', profile: 'echo', host: 'box' },
      ],
    });
    const t = await rig.run(['run', 'collaborative', '-m', 'x', '--agents', 'here,far', '--worktree']);
    expect(t.code).toBe(1);
    expect(t.stderr).toBe(
      "jaggers: up: far (host box): agents on other hosts are not started in a task of its own worktree (--worktree) yet; `jaggers up` starts jaggers.json's team there (docs/hosts.md)\n",
    );
    expect(await serverUp()).toBe(false);
    const r = await rig.run(['up', '--no-wait']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^jaggers: host box \(me@127\.0\.0\.1 port 1\): cannot connect \(.*Connection refused/);
    expect(await rig.paneOf('here')).toMatch(/^%\d+$/);
    // A task's team: its local agents here, then its host, not reached either.
    const task = await rig.run(['up', '--task', 't-1', '--no-wait']);
    expect(task.code).toBe(1);
    expect(task.stderr).toMatch(/^jaggers: host box \(me@127\.0\.0\.1 port 1\): cannot connect \(.*Connection refused/);
  });

  it('a malformed jaggers.json', async () => {
    const file = await writeProject(rig.root, { agents: [{ name: 'a', profile: 42 }] });
    const r = await rig.run(['up']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: field \`agents[0].profile\`: `);
    expect(r.stderr).toContain('got 42 (number)');
    await writeProject(rig.root, '{"agents": [');
    expect((await rig.run(['up'])).stderr).toContain(`${file}: not valid JSON`);
    await writeProject(rig.root, {
      agents: [
        { name: 'a', profile: 'echo' },
        { name: 'a', profile: 'echo' },
      ],
    });
    expect((await rig.run(['up'])).stderr).toContain('field `agents[1].name`: must be unique');
    expect(await serverUp()).toBe(false);
  });

  it('a malformed profile, and an unknown one', async () => {
    const file = await writeProfile(rig.root, 'broken', { command: 42, args: 'x' });
    await writeProject(rig.root, { agents: [{ name: 'a', profile: 'broken' }] });
    const r = await rig.run(['up']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: field \`command\`: `);
    expect(r.stderr).toContain('got 42 (number)');
    expect(r.stderr).toContain(`${file}: field \`args\`: `);
    const u = await rig.run(['up', '--agents', 'nosuch']);
    expect(u.stderr).toMatch(/unknown profile "nosuch": known profiles are .*claude.*demo/);
    expect(await serverUp()).toBe(false);
  });
});

describe('tmux version and doctor', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
  });
  afterEach(async () => rig.cleanup());

  it('refuses a tmux older than 3.2 by name and version', async () => {
    const { writeFile, chmod } = await import('node:fs/promises');
    const old = path.join(rig.root, 'old-tmux');
    await writeFile(old, '#!/bin/sh\necho "tmux 2.9a"\n');
    await chmod(old, 0o755);
    await writeProfile(rig.root, 'echo', catProfile);
    const r = await rig.run(['up', '--agents', 'echo'], { env: { ...rig.env, JAGGERS_TMUX: old } });
    expect(r.stderr).toBe('jaggers: tmux 2.9a is too old: jaggers needs tmux 3.2 or newer\n');
  });

  it('doctor reports tmux, the socket and every profile, and fails on a broken one', async () => {
    const ok = await rig.run(['doctor']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok {3}tmux: tmux 3\.\d/m);
    expect(ok.stdout).toMatch(/socket: -L jgtest-\S+ \(session jgtest, server not running\)/);
    // `ok` (or `warn`: a version it was not checked on) where claude is installed, `miss` where it is not.
    expect(ok.stdout).toMatch(/^(?:ok {2}|warn|miss) profile claude: .*profiles\/claude\.json/m);
    const file = await writeProfile(rig.root, 'claude', { command: '' });
    const bad = await rig.run(['doctor', '--json']);
    expect(bad.code).toBe(1);
    const report = JSON.parse(bad.stdout);
    expect(report.profiles.find((p: { name: string }) => p.name === 'claude').error).toContain(`${file}: field \`command\``);
  });
});
