#!/usr/bin/env node
// Start-up costs (issue 25). Prints figures beside references from the same run; asserts nothing.
//
// 1. Whole-process wall time of each read command (`status`, `ls`, `jobs`, `inbox`, `tasks`, `why`,
//    `capture`, `sessions`, and `--version`) against a live supervisor, each run right after a
//    `node -e ''`: p50 and p90 of both, the difference of the p50s, and the median of the pairwise
//    differences (each command minus the node run just before it). The order of the commands turns
//    round every run.
// 2. `kill -9` of the supervisor to a `jaggers ls --json` that succeeded (it finds nobody on the socket,
//    starts the supervisor again in window 0 and waits for it). Split at the new supervisor process's
//    start (from /proc, 10 ms ticks) and at its `supervisor serving` log line (the socket listens);
//    beside `jaggers ls --json` against the live supervisor, taken just before each kill.
//
// Usage: npm run build && node scripts/bench-start.mjs [runs=20] [kills=10] [agents=5]
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed; the tmux server is killed by its socket at the end, also on error or Ctrl-C.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchWorld, worldEnd, cpuPressure, cpuTicks, load, pct, startedAt, ticks } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
const [RUNS = 20, KILLS = 10, AGENTS = 5] = process.argv.slice(2).map(Number);

const ms = (x) => `${x.toFixed(1)} ms`.padStart(9);
const signed = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} ms`.padStart(9);

const { base, root, socket, env } = await benchWorld('start');
const apiSocket = path.join(root, '.jaggers', 'jaggers.sock');
const logFile = path.join(root, '.jaggers', 'logs', 'current.log');

/** Wall time of one whole process; throws when it fails. */
const timed = (args) => {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const elapsed = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return elapsed;
};
/** The live supervisor's health, on a connection of its own. */
const health = () =>
  new Promise((resolve, reject) => {
    http
      .get({ socketPath: apiSocket, path: '/v1/health', agent: false }, (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => resolve(JSON.parse(b)));
      })
      .on('error', reject);
  });
/** When the supervisor `pid` logged `supervisor serving` (ms since the epoch), or NaN. */
const servingAt = (pid) => {
  const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const l = JSON.parse(lines[i]);
      if (l.pid === pid && l.msg === 'supervisor serving') return Date.parse(l.time);
    } catch {
      // a line cut short: not ours
    }
  }
  return NaN;
};

const world = worldEnd({ base, socket, env });

try {
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  await writeFile(path.join(root, '.jaggers', 'profiles', 'quick.json'), JSON.stringify({ ...demo, name: 'quick', args: ['--think-ms', '0'] }));
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents: Array.from({ length: AGENTS }, (_, i) => ({ name: `a${i}`, profile: 'quick' })) }));
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      return `(${repo}: not a git checkout)`;
    }
  })();
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${execFileSync('tmux', ['-V']).toString().trim()}`);
  console.log(`commit ${commit}; load average ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
  world.started();
  const up = spawnSync(process.execPath, [bin, 'up'], { cwd: root, env, encoding: 'utf8' });
  if (up.status !== 0) throw new Error(`up failed: ${up.stderr}`);

  // 1. Read commands, each right after a `node -e ''`; the order turns round every run; one warm-up dropped.
  const commands = [
    ['--version'],
    ['status', '--json'],
    ['ls', '--json'],
    ['jobs', '--json'],
    ['inbox', 'a0', '--json'],
    ['tasks', '--json'],
    ['why', 'a0', '--json'],
    ['capture', 'a0'],
    ['sessions', '--json'],
  ];
  const label = (c) => `jaggers ${c.join(' ')}`;
  const runs = new Map(commands.map((c) => [label(c), { node: [], cmd: [], diff: [] }]));
  for (let i = 0; i <= RUNS; i++) {
    for (let k = 0; k < commands.length; k++) {
      const c = commands[(i + k) % commands.length];
      const n = timed(['-e', '']);
      const t = timed([bin, ...c]);
      if (i === 0) continue;
      const r = runs.get(label(c));
      r.node.push(n);
      r.cmd.push(t);
      r.diff.push(t - n);
    }
  }
  const allNode = [...runs.values()].flatMap((r) => r.node);
  console.log(`\n1. whole process against a live supervisor (${AGENTS} agents), ${RUNS} runs each, each right after a node -e ''`);
  console.log(`  ${"node -e ''".padEnd(32)} p50 ${ms(pct(allNode, 50))}  p90 ${ms(pct(allNode, 90))}   (all ${allNode.length})`);
  for (const [k, r] of runs) {
    console.log(
      `  ${k.padEnd(32)} p50 ${ms(pct(r.cmd, 50))}  p90 ${ms(pct(r.cmd, 90))}   p50 - node p50 ${signed(pct(r.cmd, 50) - pct(r.node, 50))}   pairwise p50 ${signed(pct(r.diff, 50))}`,
    );
  }

  // 2. kill -9 of the supervisor -> a `jaggers ls --json` that succeeded.
  const live = [];
  const total = [];
  const untilStarted = [];
  const untilServing = [];
  const untilAnswered = [];
  const cpuToAnswer = [];
  for (let i = 0; i <= KILLS; i++) {
    live.push(timed([bin, 'ls', '--json']));
    const { pid } = await health();
    const t = performance.now();
    const wall = Date.now();
    process.kill(pid, 'SIGKILL');
    timed([bin, 'ls', '--json']);
    const took = performance.now() - t;
    const h = await health();
    const cpu = (cpuTicks(h.pid) * 1000) / ticks;
    if (h.pid === pid) throw new Error(`the supervisor ${pid} still answers after kill -9`);
    if (i === 0) continue;
    const started = startedAt(h.pid) - wall;
    const serving = servingAt(h.pid) - wall;
    total.push(took);
    untilStarted.push(started);
    untilServing.push(serving - started);
    untilAnswered.push(took - serving);
    cpuToAnswer.push(cpu);
  }
  live.shift();
  console.log(`\n2. kill -9 of the supervisor -> jaggers ls --json succeeded (${KILLS} times after one dropped, ${AGENTS} agents)`);
  const row = (l, xs, note = '') => console.log(`  ${l.padEnd(36)} p50 ${ms(pct(xs, 50))}  p90 ${ms(pct(xs, 90))}  min ${ms(Math.min(...xs))}${note}`);
  row('reference: ls --json, live', live);
  row('kill -9 -> ls succeeded', total);
  row('  kill -> new supervisor started', untilStarted, '   (the client notices, respawns window 0)');
  row('  started -> serving', untilServing, '   (the supervisor loads and starts; log line)');
  row('  serving -> ls succeeded', untilAnswered, '   (the client notices it answers; ls)');
  row("the new supervisor's CPU until then", cpuToAnswer, '   (utime + stime, /proc; 10 ms ticks)');
  console.log(`\nload average at the end ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
} finally {
  await world.end();
}
