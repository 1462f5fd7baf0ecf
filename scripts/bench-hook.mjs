#!/usr/bin/env node
// The hook bridge's latency (issue 27). Prints figures beside references from the same run; asserts nothing.
//
// From the moment the bridge is started (`sh bin/jaggers-hook <spool> <id> Stop`, a Stop payload on
// stdin, as a CLI's hook runs it) to the signal reaching the watcher: the spool's inotify event, the
// file read and removed, the fake agent's HookKit reading it. Beside it, in the same run and the same
// way (spawn to exit): `sh -c true` and `node -e ""`, what any hook and a node hook cost at least.
//
// Usage: npm run build && node scripts/bench-hook.mjs [runs=50]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { HookSpool } = await import(path.join(repo, 'dist/src/panes/hook-spool.js'));
const { writeBridgeShell, bridgeShellFile } = await import(path.join(repo, 'dist/src/panes/bridge-shell.js'));
const { HOOKS } = await import(path.join(repo, 'dist/src/clis/kinds.js'));
const [RUNS = 50] = process.argv.slice(2).map(Number);
const bridge = path.join(repo, 'bin', 'jaggers-hook');
const dir = mkdtempSync(path.join(os.tmpdir(), 'jg-bench-hook-'));
const payload = JSON.stringify({ session_id: 's-1', hook_event_name: 'Stop', last_assistant_message: 'x'.repeat(2000) });

let waiting = null;
const spool = new HookSpool({
  dir,
  deliver: (call) => {
    const signals = HOOKS['fake-agent'].read(call.event, call.payload);
    if (signals[0]?.kind === 'turn-end' && waiting) waiting(performance.now());
  },
  skipped: (file, why) => console.error(`skipped ${file}: ${why}`),
});

/** Spawn to exit, in ms. */
const exitTime = (cmd, args, input) =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    c.on('error', reject);
    c.on('exit', () => resolve(performance.now() - t0));
    c.stdin.on('error', () => {});
    c.stdin.end(input ?? '');
  });

/** Bridge start to the signal in the watcher, and to the bridge's exit, in ms. */
const hookTime = () =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    let exited = null;
    let signal = null;
    const done = () => exited !== null && signal !== null && ((waiting = null), resolve({ signal: signal - t0, exit: exited - t0 }));
    waiting = (t) => ((signal = t), done());
    const c = spawn('sh', [bridge, dir, 'jg-1', 'Stop'], { stdio: ['pipe', 'ignore', 'ignore'] });
    c.on('error', reject);
    c.on('exit', () => ((exited = performance.now()), done()));
    c.stdin.end(payload);
  });

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const row = (name, xs) =>
  console.log(`${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms   p90 ${pct(xs, 90).toFixed(1).padStart(6)} ms   (${xs.length} runs)`);

spool.start();
// As the supervisor does: the bash 5 the bridge runs as, when there is one (bench:bridge compares the paths).
console.log(`bridge runs as ${(await writeBridgeShell(dir)) ?? 'plain sh'}`);
try {
  const toSignal = [];
  const toExit = [];
  const sh = [];
  const node = [];
  // Interleaved, so that each reference sees the same machine load as the bridge beside it.
  for (let i = 0; i < RUNS; i++) {
    const h = await hookTime();
    toSignal.push(h.signal);
    toExit.push(h.exit);
    sh.push(await exitTime('sh', ['-c', 'true']));
    node.push(await exitTime(process.execPath, ['-e', '']));
  }
  console.log(`hook bridge latency, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}; payload ${payload.length} bytes`);
  row('bridge start -> signal in watcher', toSignal);
  row('bridge start -> bridge exit', toExit);
  row('sh -c true (start -> exit)', sh);
  row('node -e "" (start -> exit)', node);
} finally {
  spool.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(bridgeShellFile(dir), { force: true });
}
