// `jaggers host check` against a real sshd on loopback (test/helpers/sshd.ts): one connection, one list
// of what the host lacks; an unknown host key is an error naming the host, and nothing is written to
// any known_hosts.
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot, packageVersion } from '../../src/package-root.js';
import { Rig } from '../helpers/rig.js';
import { HOST_ALIAS, sshdSkipReason, startSshd, type SshdRig } from '../helpers/sshd.js';

const skip = sshdSkipReason();

describe.skipIf(skip !== null)(`jaggers host check over ssh${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let sshd: SshdRig;
  let rig: Rig;
  let bin: string;
  let proj: string;
  beforeAll(async () => {
    // The sessions' PATH: a folder of our own first, with `jaggers` and the fake agent's command in it.
    bin = path.join('/tmp', `jgssh-bin-${process.pid}`);
    await mkdir(bin, { recursive: true, mode: 0o755 });
    sshd = await startSshd({ path: `${bin}:/usr/local/bin:/usr/bin:/bin` });
    rig = await Rig.create();
    proj = path.join(sshd.home, 'proj');
    await mkdir(proj);
    await chown(proj, sshd.uid, sshd.gid);
    await writeJaggers(`exec node ${path.join(packageRoot, 'bin', 'jaggers.js')} "$@"`);
    await writeFile(path.join(bin, 'jaggers-fake-agent'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  }, 60_000);
  afterAll(async () => {
    await sshd?.stop();
    await rig?.cleanup();
    await (await import('node:fs/promises')).rm(bin, { recursive: true, force: true });
  }, 60_000);

  async function writeJaggers(body: string) {
    await writeFile(path.join(bin, 'jaggers'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    await chmod(path.join(bin, 'jaggers'), 0o755);
  }

  async function project(hosts: unknown, agents: unknown[]) {
    await writeFile(path.join(rig.root, 'jaggers.json'), JSON.stringify({ hosts, agents }));
  }
  const env = (configFile = sshd.configFile) => ({ ...rig.env, JAGGERS_SSH_CONFIG: configFile });

  it('lists every check as ok on a host that has it all, with --json', async () => {
    await project({ box: { ssh: HOST_ALIAS, dir: proj } }, [
      { name: 'far', profile: 'demo', host: 'box' },
      { name: 'near', profile: 'claude' },
    ]);
    const r = await rig.run(['host', 'check', 'box'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok   ssh: logged in as ${sshd.user} on ${HOST_ALIAS}`);
    expect(r.stdout).toMatch(/^ok {3}tmux: tmux 3\.\d+/m);
    expect(r.stdout).toContain(`ok   cli jaggers-fake-agent: ${bin}/jaggers-fake-agent`);
    expect(r.stdout).toContain(`ok   jaggers: ${packageVersion()} (${bin}/jaggers), the same as here`);
    expect(r.stdout).toContain(`ok   dir: ${proj}`);
    expect(r.stdout).toMatch(/host box: ready\n$/);
    // Only the agents on that host: claude (the local agent's CLI) is not asked for.
    expect(r.stdout).not.toContain('claude');

    const j = await rig.run(['host', 'check', 'box', '--json'], { env: env() });
    expect(j.code).toBe(0);
    const report = JSON.parse(j.stdout) as { ok: boolean; host: string; items: { what: string; ok: boolean }[] };
    expect(report).toMatchObject({ ok: true, host: 'box', ssh: HOST_ALIAS });
    expect(report.items.map((i) => i.what)).toEqual(['ssh', 'tmux', 'cli jaggers-fake-agent', 'jaggers', 'dir']);
  }, 60_000);

  it('lists everything missing at once and exits 1: a CLI, the folder, a jaggers of another version', async () => {
    await writeJaggers('echo 0.0.1');
    try {
      await project({ box: { ssh: HOST_ALIAS, dir: '~/nowhere' } }, [
        { name: 'far', profile: 'demo', host: 'box' },
        { name: 'farther', profile: 'claude', host: 'box' },
      ]);
      const r = await rig.run(['host', 'check', 'box'], { env: env() });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('ok   ssh:');
      expect(r.stdout).toMatch(/FAIL cli claude: not found on PATH there \(.*jgssh-bin/);
      expect(r.stdout).toContain(`FAIL jaggers: "0.0.1" there (${bin}/jaggers), ${packageVersion()} here`);
      expect(r.stdout).toContain(`FAIL dir: ${sshd.home}/nowhere is not a folder there`);
      expect(r.stdout).toMatch(/host box: 3 problems\n$/);
    } finally {
      await writeJaggers(`exec node ${path.join(packageRoot, 'bin', 'jaggers.js')} "$@"`);
    }
  }, 60_000);

  it('refuses a host key known_hosts does not have, naming the host, and writes no known_hosts', async () => {
    const empty = path.join(sshd.dir, 'known_hosts_empty');
    await writeFile(empty, '');
    const config = path.join(sshd.dir, 'ssh_config_unknown');
    await writeFile(config, (await readFile(sshd.configFile, 'utf8')).replace(sshd.knownHosts, empty));
    await project({ box: { ssh: HOST_ALIAS, dir: proj } }, [{ name: 'far', profile: 'demo', host: 'box' }]);
    const r = await rig.run(['host', 'check', 'box'], { env: env(config) });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL ssh: host box \(box\): its host key is not in known_hosts, and jaggers never accepts a host key unasked/m);
    expect(r.stdout).toMatch(/host box: 1 problem\n$/);
    expect(await readFile(empty, 'utf8')).toBe('');
  }, 60_000);

  it('says when the key is refused, and when nothing listens', async () => {
    await project({ box: { ssh: `root@${HOST_ALIAS}`, dir: proj } }, [{ name: 'near', profile: 'claude' }]);
    const denied = await rig.run(['host', 'check', 'box'], { env: env() });
    expect(denied.code).toBe(1);
    expect(denied.stdout).toMatch(/FAIL ssh: host box \(root@box\): login refused \(.*Permission denied/);

    await project({ box: { ssh: HOST_ALIAS, port: 1, dir: proj } }, [{ name: 'near', profile: 'claude' }]);
    const refused = await rig.run(['host', 'check', 'box'], { env: env() });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/FAIL ssh: host box \(box port 1\): cannot connect \(.*Connection refused/);
  }, 60_000);

  it('names the hosts there are for an unknown one; `host list` shows them with their agents', async () => {
    await project({ box: { ssh: HOST_ALIAS, dir: proj }, gpu: { ssh: 'me@gpu', port: 2222, dir: '/srv/p' } }, [{ name: 'far', profile: 'demo', host: 'box' }]);
    const r = await rig.run(['host', 'check', 'bxo'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('jaggers: no host "bxo" in jaggers.json: its hosts are box, gpu');
    const l = await rig.run(['host', 'list'], { env: env() });
    expect(l.stdout).toBe(`box  box  dir ${proj}  agents: far\ngpu  me@gpu port 2222  dir /srv/p  agents: (none)\n`);
    const lj = JSON.parse((await rig.run(['host', 'list', '--json'], { env: env() })).stdout) as unknown[];
    expect(lj).toEqual([
      { name: 'box', ssh: HOST_ALIAS, port: null, identity: null, dir: proj, agents: ['far'] },
      { name: 'gpu', ssh: 'me@gpu', port: 2222, identity: null, dir: '/srv/p', agents: [] },
    ]);
  }, 60_000);
});
