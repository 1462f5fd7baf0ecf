// `host check` as a command (src/commands/hosts.ts) on a fake ssh runner: the one ssh run it makes,
// and what it says when the host is not one of jaggers.json's or the script does not answer.
import { execa } from 'execa';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostCheck, renderHostCheck, type SshRunner } from '../../src/commands/hosts.js';
import { resolveContext } from '../../src/context.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-hostcheck-');

async function ctxWith(project: unknown, env: NodeJS.ProcessEnv = {}) {
  const root = await tempDir();
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify(project));
  return resolveContext({ project: root }, { PATH: process.env.PATH, HOME: root, ...env }, root);
}

const project = {
  hosts: { box: { ssh: 'me@box', port: 2222, identity: '~/.ssh/k', dir: '/srv/p' } },
  agents: [
    { name: 'far', profile: 'demo', host: 'box' },
    { name: 'near', profile: 'claude' },
  ],
};

describe('host check', () => {
  it('makes one ssh run, strict and without prompts, whose remote command is the check script for its agents only', async () => {
    const ctx = await ctxWith(project, { JAGGERS_SSH: '/opt/ssh', JAGGERS_SSH_CONFIG: '/t/cfg' });
    const runs: { bin: string; argv: string[] }[] = [];
    const run: SshRunner = async (bin, argv) => {
      runs.push({ bin, argv });
      // Run the script here, as the host's shell would.
      const script = argv.at(-1)!;
      const r = await execa('sh', ['-c', script], { reject: false });
      return { exitCode: r.exitCode ?? null, stdout: r.stdout, stderr: r.stderr, spawnError: null };
    };
    const r = await hostCheck(ctx, 'box', run);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.bin).toBe('/opt/ssh');
    const argv = runs[0]!.argv;
    expect(argv.slice(0, 14)).toEqual([
      '-F',
      '/t/cfg',
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'ConnectTimeout=10',
      '-p',
      '2222',
      '-i',
      path.join(ctx.env.HOME!, '.ssh/k'),
      '--',
      'me@box',
    ]);
    expect(argv.at(-1)).toMatch(/^sh -c '/);
    expect(r.items.map((i) => i.what)).toEqual(['ssh', 'tmux', 'cli jaggers-fake-agent', 'jaggers', 'dir']);
    expect(r.items.find((i) => i.what === 'dir')).toMatchObject({ ok: false, detail: expect.stringContaining('/srv/p is not a folder there') });
  });

  it.each(['nope', '__proto__', 'constructor'])('refuses %s, naming the hosts there are', async (name) => {
    const ctx = await ctxWith(project);
    await expect(hostCheck(ctx, name, () => Promise.reject(new Error('no ssh run')))).rejects.toMatchObject({
      code: 'E_HOST_UNKNOWN',
      message: `no host ${JSON.stringify(name)} in jaggers.json: its hosts are box`,
    });
  });

  it('says so when the login worked but the script did not answer', async () => {
    const ctx = await ctxWith(project);
    const r = await hostCheck(ctx, 'box', async () => ({ exitCode: 127, stdout: 'Welcome!\n', stderr: 'fish: Unknown command\n', spawnError: null }));
    expect(r.ok).toBe(false);
    expect(renderHostCheck(r)).toBe(
      'FAIL ssh: host box (me@box): logged in, but the check did not answer (exit 127: fish: Unknown command); is the login shell there a POSIX shell?\nhost box: 1 problem\n',
    );
  });
});
