#!/usr/bin/env node
// Work for an agent on another host (issue 31: a handoff to a remote agent adds at most 50 ms over the
// same handoff locally, beside the loopback SSH round trip measured in the same run). Prints figures;
// asserts nothing.
//
// A private OpenSSH server on loopback (Debian's sshd, as test/helpers/sshd.ts starts it: a generated
// host key, public keys only, no PAM) with a throwaway user; the user's PATH has `jaggers` and
// `jaggers-fake-agent` wrappers running this checkout's dist/, its tmux servers in a folder of the run.
// The project here has host `box` (that server) and two fake agents with the same --think-ms: `near`
// (here) and `far` (on box; its supervisor there, started by `up` through ssh). In one run, N rounds after
// the warm-ups, each round in turn near first or far first:
//   1. `POST /v1/handoffs` (wait) to the local supervisor, for near and for far; beside it, the same
//      handoff to far asked of box's supervisor directly through the forwarded socket;
//   2. `POST /v1/jobs` + `GET /v1/jobs/<id>/wait` for near and for far;
//   3. the loopback SSH round trip: `true` run through the local supervisor's master connection (the
//      transport's own `run`, a new ssh client multiplexed on the master) and `GET /v1/health` of box's
//      supervisor through the forwarded socket, beside the local supervisor's `GET /v1/health`.
//
// Usage: npm run build && node scripts/bench-hosts.mjs [runs=12] [warmups=2] [thinkMs=200]
// Needs root and Debian's openssh-server (it adds a user and runs sshd); prints "skipped: <why>" and
// exits 0 otherwise. Everything it starts is ended at the end, also on an error or Ctrl-C: `jaggers
// down`, both tmux servers by their sockets, the sshd, the user's processes, the user, the temp folder.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld, cpuPressure, load, pct } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [RUNS = 12, WARMUPS = 2, THINK_MS = 200] = process.argv.slice(2).map(Number);
/** SSH round trips of each kind per round. */
const TRIPS = 3;
const SSHD = '/usr/sbin/sshd';
const TARGET_MS = 50;

const skip = (() => {
  if (process.getuid?.() !== 0) return 'runs as root only (it adds a throwaway user and runs sshd)';
  if (!existsSync(SSHD)) return `no ${SSHD}: install Debian's openssh-server (apt-get install openssh-server)`;
  for (const b of ['ssh', 'ssh-keygen', 'useradd', 'usermod', 'userdel', 'tmux']) {
    if (!(process.env.PATH ?? '').split(':').some((d) => d && existsSync(path.join(d, b)))) return `no ${b} on PATH`;
  }
  if (!existsSync(path.join(repo, 'dist', 'src', 'api', 'client.js'))) return 'no dist/: run npm run build first';
  return null;
})();
if (skip) {
  console.log(`bench-hosts: skipped: ${skip}`);
  process.exit(0);
}

const { ApiClient } = await import('../dist/src/api/client.js');
const { apiSocketPath, hostSocketPath } = await import('../dist/src/api/paths.js');
const { controlPathFor, sshPorts } = await import('../dist/src/hosts/ssh-master.js');
const { sshSettings } = await import('../dist/src/hosts/ssh.js');
const { socketNameFor } = await import('../dist/src/tmux/server.js');

// ---------------------------------------------------------------------------------------------
// The world: the project here, and under box/ the server's keys and configs, the user's home (its
// project `proj`), its PATH's wrappers and its tmux folder. The user's home is inside: the folders on
// the way must be open to it.

const world = await benchWorld('hosts', ['box']);
const { base, root, env } = world;
await chmod(base, 0o755);
const box = world.dirs.box;
const session = 'jgbench';
env.JAGGERS_SESSION_NAME = session;
const jaggersDir = path.join(root, '.jaggers');

/** What to undo, last first; run once, at the end, on an error or on a signal. */
const undo = [];
let cleaning = null;
const cleanup = () =>
  (cleaning ??= (async () => {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch (e) {
        console.error(`bench-hosts: cleanup: ${e.message}`);
      }
    }
    await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  })());
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => void cleanup().finally(() => process.exit(130)));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pids = () =>
  readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
/** A process's parent and real uid, or null once it is gone. */
function procOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return { ppid, uid };
  } catch {
    return null;
  }
}
const kill = (pid, sig) => {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
};
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** The loopback sshd and its user, as test/helpers/sshd.ts makes them. */
async function startSshd() {
  const user = `jgbench${randomBytes(3).toString('hex')}`;
  const home = path.join(box, 'home');
  const bin = path.join(box, 'bin');
  const tmux = path.join(box, 'tmux');
  await mkdir(bin, { mode: 0o755 });
  await mkdir(tmux);
  await chmod(tmux, 0o1777);
  for (const [name, entry] of [
    ['jaggers', 'jaggers.js'],
    ['jaggers-fake-agent', 'jaggers-fake-agent.js'],
  ])
    await writeFile(path.join(bin, name), `#!/bin/sh\nexec ${process.execPath} ${path.join(repo, 'bin', entry)} "$@"\n`, { mode: 0o755 });

  const key = (file) => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'jaggers-bench', '-f', file]);
    return readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  };
  const hostKey = path.join(box, 'host_ed25519');
  const clientKey = path.join(box, 'client_ed25519');
  const [hostPub, clientPub] = [key(hostKey), key(clientKey)];

  execFileSync('useradd', ['--no-create-home', '--home-dir', home, '--shell', '/bin/sh', '--user-group', user]);
  let uid = -1;
  const userProcesses = () => (uid < 0 ? [] : pids().filter((p) => procOf(p)?.uid === uid));
  undo.push(async () => {
    // What the user's sessions left running, by process id; then the user.
    for (let round = 0; round < 20 && userProcesses().length; round++) {
      for (const p of userProcesses()) kill(p, round < 5 ? 'SIGTERM' : 'SIGKILL');
      await sleep(50);
    }
    spawnSync('userdel', [user]);
    // Its temp folder for a socket path too long for its project (src/api/paths.ts), if one was made.
    if (uid >= 0) await rm(path.join(os.tmpdir(), `jaggers-${uid}`), { recursive: true, force: true });
  });
  // useradd locks the account (`!`), and without PAM sshd refuses a locked account even for a key.
  execFileSync('usermod', ['-p', '*', user]);
  uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await writeFile(path.join(home, '.ssh', 'authorized_keys'), `${clientPub}\n`, { mode: 0o600 });
  await chmod(home, 0o755);
  await chmod(path.join(home, '.ssh'), 0o700);
  const proj = path.join(home, 'proj');
  await mkdir(proj);
  for (const p of [home, path.join(home, '.ssh'), path.join(home, '.ssh', 'authorized_keys'), proj]) await chown(p, uid, gid);
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = path.join(box, 'sshd_config');
    await writeFile(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${path.join(box, 'sshd.pid')}`,
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
        `SetEnv PATH=${bin}:/usr/local/bin:/usr/bin:/bin TMUX_TMPDIR=${tmux}`,
        '',
      ].join('\n'),
    );
    const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => void (log = (log + d).slice(-20_000)));
    const exited = new Promise((r) => child.once('exit', r));
    const listening = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      child.stderr.on('data', () => {
        if (!/Server listening on 127\.0\.0\.1 port/.test(log)) return;
        clearTimeout(timer);
        resolve(true);
      });
      void exited.then(() => (clearTimeout(timer), resolve(false)));
    });
    if (!listening) {
      kill(child.pid, 'SIGKILL');
      await exited;
      if (attempt < 3 && /Address already in use/.test(log)) continue;
      throw new Error(`sshd did not start:\n${log}`);
    }
    undo.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      for (const c of pids().filter((p) => procOf(p)?.ppid === child.pid)) kill(c, 'SIGTERM');
      kill(child.pid, 'SIGTERM');
      const hard = setTimeout(() => kill(child.pid, 'SIGKILL'), 3000);
      await exited;
      clearTimeout(hard);
    });
    const knownHosts = path.join(box, 'known_hosts');
    await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n`);
    const configFile = path.join(box, 'ssh_config');
    await writeFile(
      configFile,
      [
        'Host box',
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
    return { user, proj, configFile };
  }
}

// ---------------------------------------------------------------------------------------------

const ms = (x) => (Number.isNaN(x) ? '—' : `${x.toFixed(1)} ms`);
const row = (cells) => `| ${cells.join(' | ')} |`;
const median = (xs) => pct(xs, 50);

async function main() {
  const sshd = await startSshd();
  env.JAGGERS_SSH_CONFIG = sshd.configFile;
  const args = ['--boot-ms', '50', '--think-ms', String(THINK_MS)];
  await writeFile(
    path.join(root, 'jaggers.json'),
    JSON.stringify({
      hosts: { box: { ssh: 'box', dir: sshd.proj } },
      agents: [
        { name: 'near', profile: 'demo', args },
        { name: 'far', profile: 'demo', host: 'box', args },
      ],
    }),
  );
  const jaggers = (...a) => spawnSync(process.execPath, [path.join(repo, 'bin', 'jaggers.js'), ...a], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
  const hostRoot = path.join(sshd.proj, '.jaggers', 'hosted', session);
  undo.push(async () => {
    jaggers('down');
    spawnSync('tmux', ['-L', world.socket, 'kill-server'], { env });
    // The host's tmux server, by its socket, as its user (`down` stopped it already unless it failed).
    spawnSync('ssh', ['-F', sshd.configFile, 'box', `tmux -L ${socketNameFor(hostRoot)} kill-server`], { env, timeout: 15_000 });
  });
  const t0 = performance.now();
  const up = jaggers('up');
  const upMs = performance.now() - t0;
  if (up.status !== 0) throw new Error(`jaggers up failed (${up.status}):\n${up.stdout}\n${up.stderr}`);

  const local = new ApiClient({ socketPath: apiSocketPath(jaggersDir) });
  const there = new ApiClient({ socketPath: hostSocketPath(jaggersDir, 'box') }, session);
  const health = await local.call('GET', '/v1/health');
  if (health.hosts?.[0]?.state !== 'connected') throw new Error(`host box not connected: ${JSON.stringify(health.hosts)}`);
  const ports = sshPorts({ name: 'box', host: { ssh: 'box' }, settings: sshSettings(env), controlPath: controlPathFor(jaggersDir, 'box'), env });

  const series = Object.fromEntries(['hNear', 'hFar', 'hDirect', 'jNear', 'jFar', 'sshTrue', 'fwdHealth', 'localHealth'].map((k) => [k, []]));
  const diffs = { handoff: [], job: [] };
  const failures = [];
  const timed = async (fn) => {
    const t = performance.now();
    const v = await fn();
    return { v, ms: performance.now() - t };
  };
  const handoff = (api, agent, i, task = `bench-${agent}`) =>
    timed(() => api.call('POST', '/v1/handoffs', { agent, message: `round ${i}: count these words`, task, wait: true, timeout: 60 }));
  const job = (agent, i) =>
    timed(async () => {
      const j = await local.call('POST', '/v1/jobs', { target: agent, text: `round ${i}: count these words` });
      return local.call('GET', `/v1/jobs/${j.id}/wait?timeout=60`);
    });

  for (let i = 0; i < WARMUPS + RUNS; i++) {
    const keep = i >= WARMUPS;
    const order = i % 2 === 0 ? ['near', 'far'] : ['far', 'near'];
    const h = {};
    for (const agent of order) {
      const r = await handoff(local, agent, i);
      if (!r.v.reply?.text) failures.push(`round ${i}: handoff to ${agent}: no reply`);
      h[agent] = r.ms;
    }
    const d = await handoff(there, 'far', i, 'bench-direct');
    if (!d.v.reply?.text) failures.push(`round ${i}: handoff to far on box directly: no reply`);
    const j = {};
    for (const agent of order) {
      const r = await job(agent, i);
      if (r.v.state !== 'done') failures.push(`round ${i}: job for ${agent} ended ${r.v.state}`);
      j[agent] = r.ms;
    }
    const trips = { sshTrue: [], fwdHealth: [], localHealth: [] };
    for (let k = 0; k < TRIPS; k++) {
      const s = await timed(() => ports.run(['true']));
      if (s.v.exitCode !== 0) failures.push(`round ${i}: ssh true: exit ${s.v.exitCode}: ${s.v.stderr.trim()}`);
      trips.sshTrue.push(s.ms);
      trips.fwdHealth.push((await timed(() => there.call('GET', '/v1/health'))).ms);
      trips.localHealth.push((await timed(() => local.call('GET', '/v1/health'))).ms);
    }
    if (!keep) continue;
    series.hNear.push(h.near);
    series.hFar.push(h.far);
    series.hDirect.push(d.ms);
    series.jNear.push(j.near);
    series.jFar.push(j.far);
    for (const [k, xs] of Object.entries(trips)) series[k].push(...xs);
    diffs.handoff.push(h.far - h.near);
    diffs.job.push(j.far - j.near);
  }
  return { upMs, series, diffs, failures, tmuxVersion: execFileSync('tmux', ['-V'], { encoding: 'utf8' }).trim() };
}

function report({ upMs, series, diffs, failures, tmuxVersion }, startLoad, startPressure) {
  const line = (name, xs) => row([name, ms(median(xs)), ms(pct(xs, 90)), String(xs.length)]);
  const hDiff = median(series.hFar) - median(series.hNear);
  const jDiff = median(series.jFar) - median(series.jNear);
  const out = [
    `bench-hosts: ${os.cpus().length} cores, node ${process.version}, ${tmuxVersion}, ${spawnSync('ssh', ['-V'], { encoding: 'utf8' }).stderr.trim()}`,
    `load ${startLoad} at start, ${load()} at end; CPU pressure (some avg10) ${startPressure} -> ${cpuPressure()} %`,
    `fake agent --think-ms ${THINK_MS}; ${RUNS} rounds after ${WARMUPS} warm-ups, near and far in turn (order swapped each round); ${TRIPS} SSH round trips of each kind a round; up (near here, far on box) ${(upMs / 1000).toFixed(1)} s`,
    '',
    row(['figure', 'p50', 'p90', 'n']),
    row(['---', '---', '---', '---']),
    line('handoff (POST /v1/handoffs, wait) to near, here', series.hNear),
    line('handoff to far on box, through the local supervisor', series.hFar),
    line('reference: handoff to far asked of box supervisor directly (forwarded socket)', series.hDirect),
    line('assign + wait (POST /v1/jobs, GET .../wait) for near', series.jNear),
    line('assign + wait for far on box', series.jFar),
    line('loopback SSH: `true` through the master connection (transport run)', series.sshTrue),
    line("loopback SSH: GET /v1/health of box's supervisor, forwarded socket", series.fwdHealth),
    line('reference: GET /v1/health of the local supervisor', series.localHealth),
    '',
    `handoff: far - near, difference of the medians ${ms(hDiff)} (median of the rounds' differences ${ms(median(diffs.handoff))}); target at most ${TARGET_MS} ms: ${hDiff <= TARGET_MS ? 'met' : 'NOT met'}`,
    `assign + wait: far - near, difference of the medians ${ms(jDiff)} (median of the rounds' differences ${ms(median(diffs.job))})`,
  ];
  if (failures.length) out.push('', `failures (${failures.length}):`, ...failures.map((f) => `- ${f}`));
  console.log(out.join('\n'));
}

const startLoad = load();
const startPressure = cpuPressure();
try {
  report(await main(), startLoad, startPressure);
} catch (e) {
  // After a Ctrl-C, what fails is the run being taken down: not worth a stack.
  if (!cleaning) console.error(`bench-hosts: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
