#!/usr/bin/env node
// The cost of one hook call (issue 27, issue 25): prints figures beside references from the same run;
// asserts nothing.
//
// 1. The bridge (bin/jaggers-hook), `calls` calls in a loop as a CLI runs them (`sh jaggers-hook <spool>
//    <id> Stop`, a 2 KB Stop payload on stdin), per call: the wall time and the CPU time of all its
//    processes (user + system, from the loop's children), each variant once per round, alternated. The
//    variants: its bash 5 path (the bash named beside the spool, as the supervisor names it: no date,
//    cat or mv), its plain sh path (no bash named: date, cat and mv, the bridge before bash), any other
//    bridge file given with --bridge (e.g. an older release's, with the same bash named beside the
//    spool), and `sh -c true` (what any hook costs at least). Processes per call and execve per call:
//    one call under strace -f.
// 2. The supervisor's side, the spool (src/panes/hook-spool.ts): a HookSpool watching a folder into
//    which a child drops `calls` calls through the bridge; this process's CPU time per call delivered.
//    With --against <checkout> (built), that checkout's HookSpool too, fed by that checkout's bridge,
//    alternated round by round.
//
// Usage: npm run build && node scripts/bench-bridge.mjs [calls=200] [rounds=5] [--bridge <file>]... [--against <checkout>]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const extraBridges = [];
let against = null;
const nums = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--bridge') extraBridges.push(path.resolve(args[++i]));
  else if (args[i] === '--against') against = path.resolve(args[++i]);
  else nums.push(Number(args[i]));
}
const [CALLS = 200, ROUNDS = 5] = nums;
const bridge = path.join(repo, 'bin', 'jaggers-hook');
const base = mkdtempSync(path.join(os.tmpdir(), 'jg-bench-bridge-'));
const payloadFile = path.join(base, 'payload.json');
writeFileSync(payloadFile, JSON.stringify({ session_id: 's-1', hook_event_name: 'Stop', last_assistant_message: 'x'.repeat(2000) }));

const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;
const { writeBridgeShell, bridgeShellFile } = await import(path.join(repo, 'dist/src/panes/bridge-shell.js'));
const variants = [
  { name: 'bridge, bash 5 path', cmd: `sh ${q(bridge)} "$d" jg-1 Stop`, bash: true },
  { name: 'bridge, plain sh path', cmd: `sh ${q(bridge)} "$d" jg-1 Stop`, bash: false },
  ...extraBridges.map((b) => ({ name: `bridge ${b}, bash 5 path`, cmd: `sh ${q(b)} "$d" jg-1 Stop`, bash: true })),
  { name: 'sh -c true', cmd: 'sh -c true', bash: false },
];

/** An empty spool folder; beside it the bash the supervisor would name, or none (plain sh). */
async function freshSpool(spool, bash) {
  rmSync(spool, { recursive: true, force: true });
  execFileSync('mkdir', ['-m', '700', spool]);
  if (bash) {
    if (!(await writeBridgeShell(spool))) throw new Error('no bash 5 on PATH: the bash path cannot be measured');
  } else rmSync(bridgeShellFile(spool), { force: true });
}

/** `calls` runs of `cmd` in one bash loop: wall and children's CPU (bash's `times`), ms per call. */
function loop(v, spool) {
  const script = `d=${q(spool)}; t0=$EPOCHREALTIME; for ((i = 0; i < ${CALLS}; i++)); do ${v.cmd} <${q(payloadFile)}; done; t1=$EPOCHREALTIME; echo "$t0 $t1"; times`;
  const out = execFileSync('bash', ['-c', script], { env: { ...process.env, LC_ALL: 'C' }, encoding: 'utf8' })
    .trim()
    .split('\n');
  const [t0, t1] = out[0].split(' ').map(Number);
  // `times`: the shell's user and system time, then its children's.
  const secs = (s) =>
    s.split(' ').reduce((a, x) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(x);
      return a + Number(m[1]) * 60 + Number(m[2]);
    }, 0);
  return { wall: ((t1 - t0) * 1000) / CALLS, cpu: (secs(out[2]) * 1000) / CALLS };
}

/** One call under strace -f: processes (pids seen) and successful execve. */
function processes(v, spool) {
  const log = path.join(base, 'strace.txt');
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=execve', '-o', log, 'bash', '-c', `d=${q(spool)}; ${v.cmd} <${q(payloadFile)}`]);
  if (r.error || r.status !== 0) return null;
  const lines = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => /execve\(/.test(l) && /= 0$/.test(l));
  // The first line is the loop's own bash.
  return { processes: new Set(lines.slice(1).map((l) => l.split(' ')[0])).size, execve: lines.length - 1 };
}

/** Page faults and context switches per call (perf stat over `CALLS` calls; counts that load barely moves). */
function faults(v, spool) {
  const r = spawnSync(
    'perf',
    ['stat', '-x', ',', '-e', 'page-faults,context-switches', '-r', String(CALLS), 'sh', '-c', `d=${q(spool)}; ${v.cmd} <${q(payloadFile)}`],
    {
      encoding: 'utf8',
    },
  );
  if (r.error || r.status !== 0) return null;
  const count = (ev) =>
    Number(
      r.stderr
        .split('\n')
        .find((l) => l.includes(`,${ev},`) || l.includes(`,${ev}:`))
        ?.split(',')[0],
    );
  return { faults: count('page-faults'), switches: count('context-switches') };
}

const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `${xs.map((x) => x.toFixed(2)).join(' / ')}, median ${med(xs).toFixed(2)}`;

try {
  console.log(
    `hook call cost, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${CALLS} calls a run, ${ROUNDS} rounds`,
  );
  const spool = path.join(base, 'spool');
  const results = variants.map(() => ({ wall: [], cpu: [] }));
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, v] of variants.entries()) {
      await freshSpool(spool, v.bash);
      const x = loop(v, spool);
      results[i].wall.push(x.wall);
      results[i].cpu.push(x.cpu);
    }
  // Wall time call by call, the variants interleaved call by call (each sees the same load): p50 / p90 / p99.
  const spools = [];
  for (const [i, v] of variants.entries()) {
    spools.push(`${spool}-${i}`);
    await freshSpool(spools[i], v.bash);
  }
  const each = variants.map((v, i) => `d=${q(spools[i])}; t0=$EPOCHREALTIME; ${v.cmd} <${q(payloadFile)}; t1=$EPOCHREALTIME; echo "${i} $t0 $t1"`).join('\n');
  const calls = execFileSync('bash', ['-c', `for ((n = 0; n < ${CALLS * ROUNDS}; n++)); do\n${each}\ndone`], {
    env: { ...process.env, LC_ALL: 'C' },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const walls = variants.map(() => []);
  for (const line of calls.trim().split('\n')) {
    const [i, t0, t1] = line.split(' ').map(Number);
    walls[i].push((t1 - t0) * 1000);
  }
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  console.log('\n1. the bridge, per call (ms): CPU and wall a run each round in turn; wall call by call interleaved');
  for (const [i, v] of variants.entries()) {
    await freshSpool(spool, v.bash);
    const p = processes(v, spool);
    await freshSpool(spool, v.bash);
    const f = faults(v, spool);
    console.log(
      `${v.name}\n  processes ${p ? `${p.processes}, execve ${p.execve}` : '? (no strace)'}; page faults ${f ? `${f.faults.toFixed(0)}, context switches ${f.switches.toFixed(1)}` : '? (no perf)'} (with the sh -c around it)\n  CPU  ${fmt(results[i].cpu)}\n  wall ${fmt(results[i].wall)}\n  wall call by call, p50 / p90 / p99 of ${walls[i].length}: ${[50, 90, 99].map((p) => pct(walls[i], p).toFixed(2)).join(' / ')}`,
    );
  }
  console.log(`\n2. the spool in the watcher's process, CPU per call delivered (ms); calls dropped by the bridge's bash path`);
  const builds = [['this build', repo], ...(against ? [['--against', against]] : [])];
  const kits = [];
  for (const [name, dir] of builds) kits.push({ name, dir, HookSpool: (await import(path.join(dir, 'dist/src/panes/hook-spool.js'))).HookSpool, cpu: [] });
  for (let r = 0; r < ROUNDS; r++) for (const s of kits) s.cpu.push(await spoolRound(s, spool));
  for (const s of kits) console.log(`${s.name} (${s.dir})\n  CPU ${fmt(s.cpu)}`);
} finally {
  rmSync(base, { recursive: true, force: true });
}

/** `CALLS` calls dropped by a child through the bridge; this process's CPU per call delivered, ms. */
async function spoolRound(s, spool) {
  await freshSpool(spool, true);
  let delivered = 0;
  let done;
  const all = new Promise((r) => (done = r));
  const sp = new s.HookSpool({
    dir: spool,
    deliver: () => ++delivered === CALLS && done(),
    skipped: (file, why) => console.error(`skipped ${file}: ${why}`),
  });
  sp.start();
  const c0 = process.cpuUsage();
  const own = path.join(s.dir, 'bin', 'jaggers-hook');
  const child = spawn('bash', ['-c', `for ((i = 0; i < ${CALLS}; i++)); do sh ${q(own)} ${q(spool)} jg-1 Stop <${q(payloadFile)}; done`], {
    stdio: 'ignore',
  });
  await all;
  const c = process.cpuUsage(c0);
  sp.stop();
  await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  return (c.user + c.system) / 1000 / CALLS;
}
