// A real OpenSSH server on loopback for tests of remote hosts (issue 31; docs/hosts.md): Debian's
// `sshd` on a free port with a generated host key, its own sshd_config in a temp folder (no PAM,
// public keys only, the test's own client key), and a throwaway user it logs in as. The client side
// gets a private `-F` config and known_hosts, so the user's own ~/.ssh is never read or written.
// Needs root (to add the user and to run sshd); `sshdSkipReason()` says why not otherwise.
import { execa } from 'execa';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { packageRoot } from '../../src/package-root.js';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SSHD = '/usr/sbin/sshd';
/** The name the client config gives the rig's server: `ssh -F <configFile> box`. */
export const HOST_ALIAS = 'box';

/** Why the loopback sshd cannot run here, or null when it can. */
export function sshdSkipReason(): string | null {
  if (process.getuid?.() !== 0) return 'the loopback sshd tests run as root only (they add a throwaway user)';
  if (!existsSync(SSHD)) return `no ${SSHD}: install Debian's openssh-server (apt-get install openssh-server)`;
  for (const bin of ['ssh', 'ssh-keygen', 'useradd', 'userdel']) {
    if (!(process.env.PATH ?? '').split(':').some((d) => d && existsSync(path.join(d, bin)))) return `no ${bin} on PATH`;
  }
  return null;
}

export interface SshdOptions {
  /** PATH of the sessions sshd starts (sshd_config `SetEnv`); default sshd's own. */
  path?: string;
  /** More variables the sessions get (`SetEnv`): TMUX_TMPDIR, to keep the user's tmux servers in the rig. */
  env?: Record<string, string>;
}

export interface SshdRig {
  /** The throwaway user sessions run as, its uid and its home (inside `dir`). */
  user: string;
  uid: number;
  gid: number;
  home: string;
  port: number;
  /** The rig's temp folder: keys, configs, the user's home. */
  dir: string;
  /** The client's config (`ssh -F`): host `box` is this server, with the rig's key and known_hosts. */
  configFile: string;
  knownHosts: string;
  clientKey: string;
  /** The server's process id (the listener). */
  pid: number;
  /** The per-connection sshd processes (the listener's children): killing one cuts that connection. */
  connections(): number[];
  /**
   * Cut every connection now (SIGTERM to each per-connection sshd process; one that ended meanwhile, such
   * as an `ssh -t` session just closed, is passed over): how many were cut.
   */
  cut(): number;
  /** Every process running as the throwaway user. */
  userProcesses(): number[];
  /**
   * The host rebooted, as the client sees it: no new connection is served meanwhile (the listener is
   * stopped), every connection is cut and every process of the user (its tmux servers, supervisors and
   * agents) is killed (-9) until none is left; then connections are served again. Its files stay.
   */
  reboot(): Promise<void>;
  /** The listener's log so far (sshd -e: to stderr). */
  log(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

function procStat(pid: number): { ppid: number; uid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces: the fields after the last `)`.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return { ppid, uid };
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

/** Wait until `child` writes a line matching `re` to stderr; fails with what it wrote (or its exit). */
function waitForStderr(child: ChildProcess, re: RegExp, timeoutMs: number, seen: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onData = () => {
      if (re.test(seen())) done();
    };
    const onExit = (code: number | null) => done(new Error(`sshd exited (${code}) before it listened:\n${seen()}`));
    const timer = setTimeout(() => done(new Error(`sshd did not listen within ${timeoutMs} ms:\n${seen()}`)), timeoutMs);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    onData();
  });
}

async function startOnce(opts: SshdOptions): Promise<SshdRig> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'jgsshd-')));
  // The user's home is inside: every folder on the way must be open to it.
  await chmod(dir, 0o755);
  const user = `jgssh${randomBytes(4).toString('hex')}`;
  const home = path.join(dir, 'home');
  let pid = 0;
  let child: ChildProcess | null = null;
  let userMade = false;
  let uid = -1;
  let gid = -1;
  let stderr = '';

  const userProcesses = () => (uid < 0 ? [] : allPids().filter((p) => procStat(p)?.uid === uid));
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      for (const c of allPids().filter((p) => procStat(p)?.ppid === pid)) killPid(c, 'SIGTERM');
      killPid(pid, 'SIGTERM');
      const t = setTimeout(() => killPid(pid, 'SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
    // What the user's sessions left running (a server the test started as the user), by process id.
    for (let round = 0; round < 20; round++) {
      const left = userProcesses();
      if (left.length === 0) break;
      for (const p of left) killPid(p, round < 5 ? 'SIGTERM' : 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
    }
    if (userMade) await execa('userdel', [user], { reject: false });
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const key = async (file: string) => {
      await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'jaggers-test', '-f', file]);
      return (await readFile(`${file}.pub`, 'utf8')).trim().split(' ').slice(0, 2).join(' ');
    };
    const hostKey = path.join(dir, 'host_ed25519');
    const clientKey = path.join(dir, 'client_ed25519');
    const [hostPub, clientPub] = await Promise.all([key(hostKey), key(clientKey)]);

    await execa('useradd', ['--no-create-home', '--home-dir', home, '--shell', '/bin/sh', '--user-group', user]);
    userMade = true;
    // useradd locks the new account (`!` in /etc/shadow), and without PAM sshd refuses a locked account
    // even for a key: `*` is no password, not locked.
    await execa('usermod', ['-p', '*', user]);
    uid = Number((await execa('id', ['-u', user])).stdout.trim());
    gid = Number((await execa('id', ['-g', user])).stdout.trim());
    // StrictModes stays on: the key file is the user's own, in its own home, and sshd's walk up the
    // folders stops at the home (the temp folders above it are root's).
    await mkdir(path.join(home, '.ssh'), { recursive: true });
    await writeFile(path.join(home, '.ssh', 'authorized_keys'), `${clientPub}\n`, { mode: 0o600 });
    await chmod(home, 0o755);
    await chmod(path.join(home, '.ssh'), 0o700);
    for (const p of [home, path.join(home, '.ssh'), path.join(home, '.ssh', 'authorized_keys')]) await chown(p, uid, gid);

    const port = await freePort();
    const sshdConfig = path.join(dir, 'sshd_config');
    await writeFile(
      sshdConfig,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'AuthenticationMethods publickey',
        'AuthorizedKeysFile .ssh/authorized_keys',
        'StrictModes yes',
        `AllowUsers ${user}`,
        'PermitRootLogin no',
        'AllowTcpForwarding yes',
        'AllowStreamLocalForwarding yes',
        'StreamLocalBindUnlink yes',
        'PrintMotd no',
        'PrintLastLog no',
        'UseDNS no',
        'LogLevel VERBOSE',
        ...(opts.path || opts.env
          ? [`SetEnv ${[...(opts.path ? [`PATH=${opts.path}`] : []), ...Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`)].join(' ')}`]
          : []),
        '',
      ].join('\n'),
    );
    // sshd refuses to start without its privilege separation folder (made by the service, which we do not run).
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 });

    const knownHosts = path.join(dir, 'known_hosts');
    await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`);
    const configFile = path.join(dir, 'ssh_config');
    await writeFile(
      configFile,
      [
        `Host ${HOST_ALIAS}`,
        '  HostName 127.0.0.1',
        `  Port ${port}`,
        `  User ${user}`,
        `  IdentityFile ${clientKey}`,
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        `  UserKnownHostsFile ${knownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  LogLevel ERROR',
        '',
      ].join('\n'),
    );

    child = spawn(SSHD, ['-D', '-e', '-f', sshdConfig], { stdio: ['ignore', 'ignore', 'pipe'] });
    pid = child.pid ?? 0;
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      // Bounded: a long test's connections each add a few lines.
      stderr = (stderr + d).slice(-200_000);
    });
    await waitForStderr(child, /Server listening on 127\.0\.0\.1 port/, 10_000, () => stderr);

    return {
      user,
      uid,
      gid,
      home,
      port,
      dir,
      configFile,
      knownHosts,
      clientKey,
      pid,
      connections: () => allPids().filter((p) => procStat(p)?.ppid === pid),
      cut: () => {
        let n = 0;
        for (const p of allPids().filter((q) => procStat(q)?.ppid === pid)) {
          try {
            process.kill(p, 'SIGTERM');
            n++;
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
          }
        }
        return n;
      },
      userProcesses,
      reboot: async () => {
        killPid(pid, 'SIGSTOP');
        try {
          for (const p of allPids().filter((q) => procStat(q)?.ppid === pid)) killPid(p, 'SIGTERM');
          for (let round = 0; ; round++) {
            const left = userProcesses();
            if (left.length === 0) break;
            if (round >= 100) throw new Error(`processes of ${user} still there after 100 rounds of SIGKILL: ${left.join(' ')}`);
            for (const p of left) killPid(p, 'SIGKILL');
            await new Promise((r) => setTimeout(r, 20));
          }
        } finally {
          killPid(pid, 'SIGCONT');
        }
      },
      log: () => stderr,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Start the loopback sshd (a new port if the one picked was taken meanwhile). Call `stop()` in afterAll. */
export async function startSshd(opts: SshdOptions = {}): Promise<SshdRig> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      if (attempt >= 3 || !/Address already in use/.test(String(e))) throw e;
    }
  }
}

/**
 * What the host's user runs: this checkout's `jaggers` and fake agent through wrappers in `bin` (first on
 * the sessions' PATH: `startSshd({ path: ... })`), and a folder for its tmux servers (TMUX_TMPDIR), never
 * the user's. `remove()` in afterAll.
 */
export async function hostTools(tag: string): Promise<{ bin: string; tmuxDir: string; remove(): Promise<void> }> {
  const bin = path.join('/tmp', `${tag}-bin-${process.pid}`);
  const tmuxDir = path.join('/tmp', `${tag}-tmux-${process.pid}`);
  await mkdir(bin, { recursive: true, mode: 0o755 });
  await mkdir(tmuxDir, { recursive: true });
  await chmod(tmuxDir, 0o1777);
  for (const name of ['jaggers', 'jaggers-fake-agent'])
    await writeFile(path.join(bin, name), `#!/bin/sh\nexec node ${path.join(packageRoot, 'bin', `${name}.js`)} "$@"\n`, { mode: 0o755 });
  return {
    bin,
    tmuxDir,
    remove: async () => {
      await rm(bin, { recursive: true, force: true });
      await rm(tmuxDir, { recursive: true, force: true });
    },
  };
}

/** Ask `probe` until it returns a value (not undefined), at most `ms`; fails with the last thing it saw. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** jaggers.json of a team of `near` here and `far` (the demo agent, with `farArgs`) on box, whose folder there is `dir`. */
export function hostTeamFile(dir: string, farArgs: string[]): string {
  return JSON.stringify({
    hosts: { [HOST_ALIAS]: { ssh: HOST_ALIAS, dir } },
    agents: [
      { name: 'near', profile: 'demo' },
      { name: 'far', profile: 'demo', host: HOST_ALIAS, args: farArgs },
    ],
  });
}
