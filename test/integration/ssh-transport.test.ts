// The transport remote agents will use (src/hosts/connection.ts on src/hosts/ssh-master.ts) against a
// real sshd on loopback (test/helpers/sshd.ts): commands run as the host's user through one master
// connection, a forwarded unix socket carries HTTP to a server there, and a cut connection (its sshd
// process killed) is reported lost and made again, forwards and all.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostConnection, type ConnectionState } from '../../src/hosts/connection.js';
import { controlPathFor, prepareControlPath, sshPorts } from '../../src/hosts/ssh-master.js';
import { sshSettings } from '../../src/hosts/ssh.js';
import { realClock } from '../../src/panes/clock.js';
import { HOST_ALIAS, sshdSkipReason, startSshd, type SshdRig } from '../helpers/sshd.js';

const skip = sshdSkipReason();

function get(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path: '/who', timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timed out')));
  });
}

/** Wait for the connection to reach `state` (an event, not a poll); fails with the states it saw. */
function waitFor(conn: HostConnection, seen: ConnectionState[], state: ConnectionState['state'], timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${state} within ${timeoutMs} ms; saw ${JSON.stringify(seen)}`));
    }, timeoutMs);
    const off = conn.on((s) => {
      if (s.state !== state) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

describe.skipIf(skip !== null)(`the ssh transport on a loopback sshd${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let sshd: SshdRig;
  let local: string;
  let conn: HostConnection;
  const seen: ConnectionState[] = [];
  beforeAll(async () => {
    sshd = await startSshd();
    local = await mkdtemp(path.join(os.tmpdir(), 'jgssh-local-'));
  }, 60_000);
  afterAll(async () => {
    await conn?.close();
    await sshd?.stop();
    await rm(local, { recursive: true, force: true });
  }, 60_000);

  it('connects, runs commands as the host user over the one connection, carries HTTP over a forwarded socket, and reconnects after a cut', async () => {
    const controlPath = controlPathFor(path.join(local, '.jaggers'), 'box');
    await prepareControlPath(controlPath);
    const env = { ...process.env, JAGGERS_SSH_CONFIG: sshd.configFile };
    const ports = sshPorts({ name: 'box', host: { ssh: HOST_ALIAS, dir: sshd.home }, settings: sshSettings(env), controlPath, env });
    conn = new HostConnection('box', ports, realClock, { initialMs: 100, factor: 2, maxMs: 1000 });
    conn.on((s) => seen.push(s));
    const up = waitFor(conn, seen, 'connected');
    conn.open();
    await up;
    expect(seen.map((s) => s.state)).toEqual(['connecting', 'connected']);

    // A command runs as the host's user, through the master: no second connection to sshd.
    const id = await conn.run(['id', '-un']);
    expect(id).toEqual({ exitCode: 0, stdout: `${sshd.user}\n`, stderr: '' });
    expect(sshd.connections()).toHaveLength(1);
    const quoted = await conn.run(['printf', '%s|', "it's", 'a b', '$HOME']);
    expect(quoted.stdout).toBe("it's|a b|$HOME|");

    // A tiny HTTP server there, as that user, on a unix socket in its home; started through the master.
    const remoteSock = path.join(sshd.home, 'api.sock');
    const server = conn.start([
      'node',
      '-e',
      `process.on('SIGHUP', () => {}); process.stdout.on('error', () => {});
       const s = require('http').createServer((q, r) => r.end(require('os').userInfo().username + ' ' + process.pid));
       s.listen(${JSON.stringify(remoteSock)}, () => console.log('listening'));`,
    ]);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      server.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('listening')) resolve();
      });
      void server.exited.then((r) => reject(new Error(`the server ended: ${r.stderr}`)));
    });
    const localSock = path.join(local, 'api.sock');
    await conn.forward(localSock, remoteSock);
    // Only its owner may connect to the local end.
    expect(statSync(localSock).mode & 0o777).toBe(0o600);
    const first = await get(localSock);
    expect(first).toMatch(new RegExp(`^${sshd.user} \\d+$`));

    // Cut the connection: kill the per-connection sshd process.
    const [session] = sshd.connections();
    const lost = waitFor(conn, seen, 'lost');
    const back = waitFor(conn, seen, 'connected');
    process.kill(session!, 'SIGTERM');
    await lost;
    await expect(conn.run(['true'])).rejects.toMatchObject({ code: 'E_SSH' });
    await back;
    const states = seen.map((s) => s.state);
    expect(states.slice(0, 2)).toEqual(['connecting', 'connected']);
    expect(states.slice(2, 4)).toEqual(['lost', 'retrying']);
    expect(states.at(-1)).toBe('connected');
    const retry = seen.find((s) => s.state === 'retrying');
    expect(retry).toMatchObject({ inMs: 100, attempt: 1 });
    expect((seen.find((s) => s.state === 'lost') as { reason: string }).reason).toMatch(
      /^host box \(box\): the connection dropped \(Connection to 127\.0\.0\.1 closed by remote host\.\)$/,
    );

    // The forward came back with the connection: the same server answers through it.
    expect(await get(localSock)).toBe(first);
    expect((await conn.run(['id', '-un'])).stdout).toBe(`${sshd.user}\n`);

    await conn.close();
    expect(conn.state).toEqual({ state: 'closed' });
    // The master is gone, and its control socket and the forward's local socket with it.
    expect(existsSync(controlPath)).toBe(false);
    expect(existsSync(localSock)).toBe(false);
  }, 90_000);

  it('never accepts a host key it does not know: each attempt fails, saying so, and no known_hosts is written', async () => {
    const empty = path.join(sshd.dir, 'known_hosts_transport');
    await writeFile(empty, '');
    const config = path.join(sshd.dir, 'ssh_config_transport');
    await writeFile(config, (await readFile(sshd.configFile, 'utf8')).replace(sshd.knownHosts, empty));
    const controlPath = controlPathFor(path.join(local, '.jaggers'), 'stranger');
    await prepareControlPath(controlPath);
    const env = { ...process.env, JAGGERS_SSH_CONFIG: config };
    const ports = sshPorts({ name: 'stranger', host: { ssh: HOST_ALIAS, dir: sshd.home }, settings: sshSettings(env), controlPath, env });
    const c = new HostConnection('stranger', ports, realClock, { initialMs: 50, factor: 2, maxMs: 100 });
    const states: ConnectionState[] = [];
    c.on((s) => states.push(s));
    const retrying = waitFor(c, states, 'retrying');
    c.open();
    try {
      await retrying;
      expect(states.at(-1)).toMatchObject({ state: 'retrying', reason: expect.stringMatching(/^host stranger \(box\): its host key is not in known_hosts/) });
      expect(await readFile(empty, 'utf8')).toBe('');
    } finally {
      await c.close();
    }
  }, 60_000);
});
