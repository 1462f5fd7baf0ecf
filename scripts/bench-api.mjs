#!/usr/bin/env node
// The supervisor's API (issue 10). Prints figures beside references from the same run; asserts nothing.
//
// 1. Whole-process time of `jaggers status --json` and `jaggers ls --json` (through the API) beside
//    `node -e ''`, interleaved run by run: p50, p95 and the p50 difference.
// 2. One API round trip on a warm socket (a keep-alive connection): GET /v1/health and GET /v1/terminals,
//    beside a bare node HTTP server on a unix socket answering `{}` (the floor of HTTP on this machine).
// 3. The supervisor with N idle agents: its resident memory and CPU over an idle window, beside a bare
//    node process that does nothing (memory) and a 500 ms poller of the same panes (CPU).
//
// Usage: npm run build && node scripts/bench-api.mjs [runs=15] [agents=50] [idleSeconds=20]
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed; the tmux server is killed by its socket at the end, also on error.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld, cpuTicks, pct, ticks } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
const [RUNS = 15, AGENTS = 50, IDLE_S = 20] = process.argv.slice(2).map(Number);

const ms = (x) => `${x.toFixed(1)} ms`;

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

const { base, root, socket, env } = await benchWorld('api');
const jaggers = (...args) => spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });

try {
  // N fake agents that answer at once, sharing the demo profile's rules.
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  await writeFile(path.join(root, '.jaggers', 'profiles', 'quick.json'), JSON.stringify({ ...demo, name: 'quick', args: ['--think-ms', '0'] }));
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents: Array.from({ length: AGENTS }, (_, i) => ({ name: `a${i}`, profile: 'quick' })) }));
  const t0 = performance.now();
  const up = jaggers('up');
  if (up.status !== 0) throw new Error(`up failed: ${up.stderr}`);
  console.log(`jaggers up with ${AGENTS} agents: ${((performance.now() - t0) / 1000).toFixed(1)} s (until every agent was ready)`);
  const status = JSON.parse(jaggers('status', '--json').stdout);
  console.log(
    `states: ${JSON.stringify(Object.fromEntries([...new Set(status.map((r) => r.state))].map((s) => [s, status.filter((r) => r.state === s).length])))}`,
  );

  // 1. Whole-process times, interleaved.
  const runs = { node: [], status: [], ls: [] };
  const time = (args) => {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    return performance.now() - t;
  };
  for (let i = 0; i < RUNS + 1; i++) {
    const n = time(['-e', '']);
    const s = time([bin, 'status', '--json']);
    const l = time([bin, 'ls', '--json']);
    if (i === 0) continue; // warm-up
    runs.node.push(n);
    runs.status.push(s);
    runs.ls.push(l);
  }
  console.log(`\n1. whole process, ${RUNS} runs each, interleaved (${AGENTS} agents)`);
  for (const [k, v] of Object.entries(runs)) {
    const diff = k === 'node' ? '' : `   p50 - node p50: +${ms(pct(v, 50) - pct(runs.node, 50))}`;
    console.log(
      `  ${(k === 'node' ? "node -e ''" : `jaggers ${k} --json`).padEnd(22)} p50 ${ms(pct(v, 50)).padStart(9)}  p95 ${ms(pct(v, 95)).padStart(9)}${diff}`,
    );
  }

  // 2. Round trips on a warm (keep-alive) socket, beside a bare node HTTP server on a unix socket.
  const sock = path.join(root, '.jaggers', 'jaggers.sock');
  const floorSock = path.join(base, 'floor.sock');
  const floor = http.createServer((_q, r) => r.end('{}')).listen(floorSock);
  await new Promise((r) => floor.on('listening', r));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (socketPath, p) =>
    new Promise((resolve, reject) => {
      const t = performance.now();
      http
        .get({ socketPath, path: p, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(performance.now() - t));
        })
        .on('error', reject);
    });
  console.log(`\n2. one request on a warm keep-alive connection, 1000 in a row each`);
  for (const [label, s, p] of [
    ['bare node HTTP server', floorSock, '/'],
    ['GET /v1/health', sock, '/v1/health'],
    [`GET /v1/terminals (${AGENTS})`, sock, '/v1/terminals'],
  ]) {
    const xs = [];
    for (let i = 0; i < 1050; i++) {
      const d = await get(s, p);
      if (i >= 50) xs.push(d);
    }
    console.log(`  ${label.padEnd(24)} p50 ${ms(pct(xs, 50)).padStart(8)}  p99 ${ms(pct(xs, 99)).padStart(8)}`);
  }
  agent.destroy();
  floor.close();

  // 3. The supervisor at idle, beside a do-nothing node process and a 500 ms poller of the same panes.
  const health = JSON.parse(
    await new Promise((resolve) =>
      http.get({ socketPath: sock, path: '/v1/health' }, (r) => {
        let b = '';
        r.on('data', (c) => (b += c));
        r.on('end', () => resolve(b));
      }),
    ),
  );
  const idleNode = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
  const pollerCode = `
    const { execFileSync } = require('node:child_process');
    setInterval(() => { for (const p of ${JSON.stringify(status.map((r) => r.pane))}) execFileSync('tmux', ['-L', ${JSON.stringify(socket)}, 'capture-pane', '-p', '-t', p], { env: process.env }); }, 500);`;
  const poller = spawn(process.execPath, ['-e', pollerCode], { stdio: 'ignore', env });
  await new Promise((r) => setTimeout(r, 2000));
  const tmuxPid = Number(execFileSync('tmux', ['-L', socket, 'display-message', '-p', '#{pid}'], { env }).toString().trim());
  const watch = { supervisor: health.pid, 'idle node': idleNode.pid, 'poller (500 ms)': poller.pid, 'tmux server': tmuxPid };
  const before = Object.fromEntries(Object.entries(watch).map(([k, pid]) => [k, cpuTicks(pid)]));
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const seconds = (performance.now() - w0) / 1000;
  console.log(`\n3. ${IDLE_S} s with ${AGENTS} idle agents (the poller runs beside the supervisor, so the tmux server's figure includes both)`);
  for (const [k, pid] of Object.entries(watch)) {
    const cpu = ((cpuTicks(pid) - before[k]) / ticks / seconds) * 100;
    console.log(`  ${k.padEnd(18)} RSS ${(rssKiB(pid) / 1024).toFixed(1).padStart(6)} MiB   CPU ${cpu.toFixed(2).padStart(6)} % of a core`);
  }
  idleNode.kill();
  poller.kill();
} finally {
  spawnSync('tmux', ['-L', socket, 'kill-server'], { env });
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
