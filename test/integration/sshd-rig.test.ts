// The loopback sshd rig itself (test/helpers/sshd.ts): a session runs as its throwaway user, and only
// with the rig's own known_hosts.
import { execa } from 'execa';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_ALIAS, sshdSkipReason, startSshd, type SshdRig } from '../helpers/sshd.js';

const skip = sshdSkipReason();

describe.skipIf(skip !== null)(`the loopback sshd rig${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let rig: SshdRig;
  beforeAll(async () => {
    rig = await startSshd();
  }, 30_000);
  afterAll(async () => {
    await rig?.stop();
  }, 30_000);

  const ssh = (args: string[]) =>
    execa('ssh', ['-F', rig.configFile, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', ...args], { reject: false, stdin: 'ignore' });

  it('runs a command as the throwaway user, in its home', async () => {
    const r = await ssh([HOST_ALIAS, 'id -un; pwd']);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([rig.user, rig.home]);
  });

  it('refuses a host key it does not know, and a key it was not given', async () => {
    const other = path.join(rig.dir, 'ssh_config_unknown');
    await writeFile(other, (await import('node:fs')).readFileSync(rig.configFile, 'utf8').replace(rig.knownHosts, '/dev/null'));
    const unknown = await execa('ssh', ['-F', other, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', HOST_ALIAS, 'true'], { reject: false });
    expect(unknown.exitCode).toBe(255);
    expect(unknown.stderr).toMatch(/Host key verification failed/);
    const nokey = await ssh(['-o', 'IdentityFile=/dev/null', '-i', '/dev/null', '-l', 'root', HOST_ALIAS, 'true']);
    expect(nokey.exitCode).toBe(255);
  });

  it('lists the per-connection sshd processes while a session lasts', async () => {
    // The earlier tests' connections may still be ending: only a new one is this session's.
    const before = new Set(rig.connections());
    const session = execa('ssh', ['-F', rig.configFile, '-o', 'BatchMode=yes', HOST_ALIAS, 'echo up; exec sleep 60'], { reject: false, buffer: false });
    await new Promise<void>((resolve) => session.stdout!.once('data', () => resolve()));
    const conns = rig.connections().filter((p) => !before.has(p));
    expect(conns.length).toBe(1);
    process.kill(conns[0]!, 'SIGTERM');
    const r = await session;
    expect(r.exitCode).toBe(255);
  });
});
