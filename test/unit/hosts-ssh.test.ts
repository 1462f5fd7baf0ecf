// The pure side of running ssh (src/hosts/ssh.ts) and of `host check` (src/hosts/check.ts): argv,
// quoting, failures read from ssh's stderr, the check script's answer judged.
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { checkScript, judgeHost, parseCheckOutput, type HostFacts } from '../../src/hosts/check.js';
import { classifySshFailure, describeSshFailure, remoteCommandLine, shellQuote, sshArgv, sshErrorCode } from '../../src/hosts/ssh.js';

const settings = { bin: 'ssh', configFile: null, home: '/home/me' };

describe('ssh argv', () => {
  it('always asks for no prompts and strict host keys; port, key and config file when given; `--` before the destination', () => {
    expect(sshArgv({ ssh: 'me@box', dir: '/p' }, settings, 'true')).toEqual([
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'ConnectTimeout=10',
      '--',
      'me@box',
      'true',
    ]);
    const full = sshArgv({ ssh: 'box', port: 2222, identity: '~/.ssh/id_ed25519', dir: '/p' }, { ...settings, configFile: '/t/cfg' }, null, ['-N']);
    expect(full).toEqual([
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
      '/home/me/.ssh/id_ed25519',
      '-N',
      '--',
      'box',
    ]);
  });

  it('quotes words so that sh reads them back as they were', async () => {
    const words = ['plain', "it's", 'a b', '$HOME', '`id`', 'a\nb', '', '--x', '*', "''"];
    expect(shellQuote('plain')).toBe('plain');
    const r = await execa('sh', ['-c', `for w in ${words.map(shellQuote).join(' ')}; do printf '%s\\0' "$w"; done`]);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(words);
    expect(remoteCommandLine(['sh', '-c', "echo 'hi'"])).toBe(`sh -c 'echo '\\''hi'\\'''`);
  });
});

describe('ssh failures', () => {
  const f = (stderr: string, exitCode: number | null = 255) => classifySshFailure({ exitCode, stderr }, 'ssh');
  it('tells each apart from what ssh says', () => {
    expect(f('No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.\r\n')).toEqual({
      reason: 'host-key-unknown',
    });
    expect(f('@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.\n')).toEqual({ reason: 'host-key-changed' });
    expect(f('me@box: Permission denied (publickey).\n')).toEqual({ reason: 'auth-failed', detail: 'me@box: Permission denied (publickey).' });
    expect(f('ssh: connect to host 127.0.0.1 port 1: Connection refused\n')).toMatchObject({ reason: 'unreachable' });
    expect(f('ssh: Could not resolve hostname nope: Name or service not known\n')).toMatchObject({ reason: 'unreachable' });
    expect(f('something new\n')).toEqual({ reason: 'ssh-failed', detail: 'something new' });
    expect(f('')).toMatchObject({ reason: 'ssh-failed' });
    expect(classifySshFailure({ exitCode: null, stderr: '', spawnError: 'ENOENT' }, '/no/ssh')).toEqual({ reason: 'ssh-missing', bin: '/no/ssh' });
  });

  it('gives a host key problem its own error code', () => {
    expect(sshErrorCode({ reason: 'host-key-unknown' })).toBe('E_SSH_HOST_KEY');
    expect(sshErrorCode({ reason: 'host-key-changed' })).toBe('E_SSH_HOST_KEY');
    expect(sshErrorCode({ reason: 'auth-failed', detail: '' })).toBe('E_SSH');
  });

  it('is no failure when the remote command itself exited (any code but 255)', () => {
    expect(f('Permission denied', 1)).toBeNull();
    expect(f('', 0)).toBeNull();
  });

  it('names the host and where it is, and what to do', () => {
    const host = { ssh: 'me@build', port: 2222, dir: '/p' };
    expect(describeSshFailure('box', host, { reason: 'host-key-unknown' })).toMatch(
      /^host box \(me@build port 2222\): its host key is not in known_hosts.*never accepts/,
    );
    expect(describeSshFailure('box', host, { reason: 'host-key-changed' })).toMatch(/NOT the one known_hosts has/);
    expect(describeSshFailure('box', host, { reason: 'auth-failed', detail: 'Permission denied (publickey).' })).toMatch(
      /login refused \(Permission denied \(publickey\)\.\).*never a password/,
    );
  });
});

describe('host check', () => {
  const facts: HostFacts = {
    user: 'me',
    home: '/home/me',
    uid: 1000,
    tmp: '/tmp',
    path: '/usr/bin:/bin',
    tmux: { path: '/usr/bin/tmux', version: 'tmux 3.3a' },
    clis: [{ command: 'claude', path: '/usr/bin/claude' }],
    jaggers: { path: '/usr/bin/jaggers', version: '1.2.3' },
    dir: { path: '/srv/p', exists: true, writable: true },
  };

  it('runs as a POSIX sh script and reads its own answer back, ignoring what a login prints around it', async () => {
    const script = checkScript({ dir: '~/no such dir', commands: ['sh', "it's-missing"] });
    const r = await execa('sh', ['-c', script], { env: { ...process.env, HOME: '/tmp' } });
    const got = parseCheckOutput(`Welcome to the host!\n${r.stdout}\nbye\n`)!;
    expect(got.home).toBe('/tmp');
    expect(got.uid).toBe(process.getuid!());
    expect(got.tmp).toBe(process.env.TMPDIR?.replace(/(.)\/+$/, '$1') || '/tmp');
    expect(got.clis).toEqual([
      { command: 'sh', path: expect.stringMatching(/\/sh$/) },
      { command: "it's-missing", path: null },
    ]);
    expect(got.dir).toEqual({ path: '/tmp/no such dir', exists: false, writable: false });
    expect(parseCheckOutput(r.stdout.split('\n').slice(0, 3).join('\n'))).toBeNull();
  });

  it('judges each fact: all fine', () => {
    const items = judgeHost(facts, '1.2.3', ' on box');
    expect(items.every((i) => i.ok)).toBe(true);
    expect(items.map((i) => i.what)).toEqual(['ssh', 'tmux', 'cli claude', 'jaggers', 'dir']);
  });

  it.each([
    [{ tmux: null }, 'tmux', /not found on PATH/],
    [{ tmux: { path: '/usr/bin/tmux', version: 'tmux 3.1c' } }, 'tmux', /tmux 3\.1c is too old.*3\.2 or newer/],
    [{ clis: [{ command: 'claude', path: null }] }, 'cli claude', /not found on PATH there \(\/usr\/bin:\/bin\)/],
    [{ jaggers: null }, 'jaggers', /npm install -g jaggers@1\.2\.3/],
    [{ jaggers: { path: '/x/jaggers', version: '1.2.0' } }, 'jaggers', /"1\.2\.0" there \(\/x\/jaggers\), 1\.2\.3 here/],
    [{ dir: { path: '/srv/p', exists: false, writable: false } }, 'dir', /not a folder there/],
    [{ dir: { path: '/srv/p', exists: true, writable: false } }, 'dir', /not writable by me/],
  ])('judges %j as a failure of %s', (change, what, re) => {
    const items = judgeHost({ ...facts, ...change } as HostFacts, '1.2.3', '');
    const bad = items.filter((i) => !i.ok);
    expect(bad).toHaveLength(1);
    expect(bad[0]!.what).toBe(what);
    expect(bad[0]!.detail).toMatch(re);
  });
});
