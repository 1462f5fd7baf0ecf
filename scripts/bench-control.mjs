#!/usr/bin/env node
// How long 1,000 tmux commands take over one control-mode connection versus one `tmux` process per
// command. Runs on a private tmux server (own TMUX_TMPDIR and socket) and prints medians of RUNS runs.
// Usage: npm run build && node scripts/bench-control.mjs [runs=5] [commands=1000]
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openControl } from '../dist/src/tmux/connect.js';

const runs = Number(process.argv[2] ?? 5);
const n = Number(process.argv[3] ?? 1000);
const tmp = await mkdtemp(path.join(os.tmpdir(), 'jg-bench-'));
const env = { ...process.env, TMUX_TMPDIR: tmp };
delete env.TMUX;
delete env.TMUX_PANE;
const server = { socket: { name: 'jg-bench' }, configFile: null, bin: 'tmux', env };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const client = await openControl(server, 'bench', { windowName: 'w', command: ['sh', '-c', 'exec cat'], cwd: tmp, width: 80, height: 24, env: {} });
try {
  const control = [];
  const controlSerial = [];
  const forks = [];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    await Promise.all(Array.from({ length: n }, (_, i) => client.run(['display-message', '-p', `x${i}`])));
    control.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < n; i++) await client.run(['display-message', '-p', `x${i}`]);
    controlSerial.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < n; i++) {
      await execa('tmux', ['-L', 'jg-bench', '-f', '/dev/null', 'display-message', '-p', `x${i}`], { env, extendEnv: false });
    }
    forks.push(performance.now() - t);
  }
  const fmt = (xs) => `${median(xs).toFixed(0)} ms (median of ${xs.length}; min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
  console.log(`${n} display-message commands, tmux ${(await execa('tmux', ['-V'])).stdout}, ${os.cpus().length} cores`);
  console.log(`control connection, all in flight at once: ${fmt(control)}`);
  console.log(`control connection, one after another:    ${fmt(controlSerial)}`);
  console.log(`one tmux process per command:              ${fmt(forks)}`);
  console.log(`speed-up (pipelined vs forks): ${(median(forks) / median(control)).toFixed(1)}x`);
} finally {
  await client.close();
  await execa('tmux', ['-L', 'jg-bench', '-f', '/dev/null', 'kill-server'], { env, extendEnv: false, reject: false });
  await rm(tmp, { recursive: true, force: true });
}
