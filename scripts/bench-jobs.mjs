#!/usr/bin/env node
// Jobs and the inbox through the supervisor. Prints figures beside references from the same run;
// asserts nothing.
//
// 1. Whole-process time of `jaggers assign <agent> -m TEXT` beside `node -e ''`, interleaved run by run.
// 2. Message latency to an idle agent: from the start of `POST /v1/messages` to the `message` event with
//    state `delivered` on the event stream, one message at a time, each sent once the receiver has
//    finished the turn the last one started. Beside it, interleaved: the same text typed by
//    `POST /v1/terminals/:agent/input` (the same verified delivery, without the inbox: no stored file,
//    no journal, no dispatcher), start to answer. Also the record's own created -> delivered, and a few
//    messages sent by a `jaggers message` process (clock started before the spawn).
// 3. Messages per second through one supervisor to 10 agents: N messages posted at once, spread over
//    the agents, until the last `delivered` event; beside one agent alone given N/10 the same way,
//    times 10 (perfect scaling). The 10-agent burst runs twice: the registry grows with every message.
//    Then WARM bursts more: a supervisor that has run a while (its code compiled, V8's optimising
//    compiler done with the message path) costs less per message than one just started.
// 4. `kill -9` of the supervisor to a `jaggers ls --json` that succeeded (it finds nobody on the
//    socket, starts the supervisor in window 0 and waits for GET /v1/health); beside `jaggers ls
//    --json` against a live supervisor. Split at the new supervisor's process start (from /proc).
//
// Usage: npm run build && node scripts/bench-jobs.mjs [assigns=30] [messages=100] [burst=200] [kills=7] [warm=3] [nice]
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed; the tmux server is killed by its socket at the end, also on error or Ctrl-C.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../dist/src/api/client.js';
import { benchWorld, worldEnd, cpuPressure, cpuTicks, fileCreateUs, load, pct, startedAt, ticks } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
const [ASSIGNS = 30, MESSAGES = 100, BURST = 200, KILLS = 7, WARM = 3, NICE = null] = process.argv.slice(2).map(Number);
const CLI_MESSAGES = 20;
const AGENTS = 10;
/** The fake agents' think time in the latency and throughput phases. */
const THINK_MS = 100;

const ms = (x) => `${x.toFixed(1)} ms`.padStart(10);

const { base, root, socket, env } = await benchWorld('jobs');

const jaggers = (...args) => spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });
/** Wall time of one whole process; throws when it fails. */
const timed = (args) => {
  const t = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8' });
  const elapsed = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return { elapsed, stdout: r.stdout };
};
const api = new ApiClient({ socketPath: path.join(root, '.jaggers', 'jaggers.sock') });
const newMessageId = () => `m-${randomBytes(6).toString('hex')}`;
const post = (to, text, id = newMessageId()) => api.call('POST', '/v1/messages', { id, to, text });
const registrySize = () => {
  // The journal grows with every change; the snapshot is written only a second after the last one.
  const kib = (f) => (statSync(path.join(root, '.jaggers', f), { throwIfNoEntry: false })?.size ?? 0) / 1024;
  return `journal ${kib('events.jsonl').toFixed(0)} KiB, registry snapshot ${kib('sessions.json').toFixed(0)} KiB`;
};

// The event stream: when each message's `delivered` event arrived here, and each agent's last state.
const events = new AbortController();
const delivered = new Map();
const state = new Map();
const waiters = new Set();
/** Until `ok()` holds, checked again on every event; fails after `timeoutMs` naming what it waited for. */
const until = (ok, what, timeoutMs = 60_000) =>
  new Promise((resolve, reject) => {
    if (ok()) return resolve();
    const check = () => {
      if (!ok()) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    waiters.add(check);
  });
const ready = (agent) => ['idle', 'done'].includes(state.get(agent)?.state);
/** Once the turn started after `turnsBefore` has ended, `agent` is free for the next prompt. */
const turnEnded = (agent, turnsBefore) => until(() => ready(agent) && state.get(agent).turns > turnsBefore, `${agent} done with its turn`);

const world = worldEnd({ base, socket, env }, () => events.abort());

try {
  // Agents: `j0` answers at once (it takes the assigned jobs); `rx` and `t0`..`t9` think THINK_MS.
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  const profile = (name, think) =>
    writeFile(path.join(root, '.jaggers', 'profiles', `${name}.json`), JSON.stringify({ ...demo, name, args: ['--think-ms', String(think)] }));
  await profile('quick', 0);
  await profile('small', THINK_MS);
  const tees = Array.from({ length: AGENTS }, (_, i) => `t${i}`);
  const agents = [{ name: 'j0', profile: 'quick' }, { name: 'rx', profile: 'small' }, ...tees.map((name) => ({ name, profile: 'small' }))];
  // NICE: the agents' CPU priority (jaggers.json `nice`); absent: jaggers' default.
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents, ...(Number.isInteger(NICE) ? { nice: NICE } : {}) }));
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo }).toString().trim();
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${execFileSync('tmux', ['-V']).toString().trim()}`);
  console.log(`commit ${commit}; load average ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
  console.log(`world ${base}: creating a file there takes ${fileCreateUs(root).toFixed(0)} us of CPU (the supervisor creates one per message)`);
  world.started();
  const up = jaggers('up');
  if (up.status !== 0) throw new Error(`up failed: ${up.stderr}`);
  for (const t of await api.call('GET', '/v1/terminals')) state.set(t.agent, { state: t.state, turns: t.turns });
  void api
    .events(
      '/v1/events?types=message,state',
      (e) => {
        if (e.type === 'message' && e.data.state === 'delivered') delivered.set(e.data.id, performance.now());
        if (e.type === 'state') state.set(e.data.agent, { state: e.data.state, turns: e.data.turns });
        for (const w of [...waiters]) w();
      },
      { signal: events.signal },
    )
    .catch((e) => console.error(`event stream: ${e.message}`));
  await until(() => agents.every((a) => ready(a.name)), 'every agent ready');

  // 1. `jaggers assign`, interleaved with `node -e ''`; one warm-up of each dropped.
  const assign = { node: [], assign: [] };
  const jobIds = [];
  for (let i = 0; i <= ASSIGNS; i++) {
    const n = timed(['-e', '']).elapsed;
    const a = timed([bin, 'assign', 'j0', '-m', `job ${i}: say ok`]);
    jobIds.push(a.stdout.trim());
    if (i === 0) continue;
    assign.node.push(n);
    assign.assign.push(a.elapsed);
  }
  const w0 = performance.now();
  const waited = jaggers('wait', '--timeout', '300', ...jobIds);
  const jobsDone = (await api.call('GET', '/v1/jobs')).filter((j) => j.state === 'done').length;
  console.log(`\n1. whole process, ${ASSIGNS} runs each, interleaved (j0 runs the jobs meanwhile, think 0 ms)`);
  console.log(`  ${"node -e ''".padEnd(26)} p50 ${ms(pct(assign.node, 50))}  p90 ${ms(pct(assign.node, 90))}`);
  console.log(
    `  ${'jaggers assign j0 -m ...'.padEnd(26)} p50 ${ms(pct(assign.assign, 50))}  p90 ${ms(pct(assign.assign, 90))}   p50 - node p50: +${(pct(assign.assign, 50) - pct(assign.node, 50)).toFixed(1)} ms`,
  );
  console.log(
    `  the ${jobIds.length} jobs: ${jobsDone} done, the last ${((performance.now() - w0) / 1000).toFixed(1)} s after the last assign returned (jaggers wait exit ${waited.status})`,
  );
  await until(() => ready('j0'), 'j0 ready');

  // 2. One message at a time to the idle agent rx, interleaved with the same text typed by /input.
  const viaInbox = [];
  const viaInput = [];
  for (let i = -3; i < MESSAGES; i++) {
    let before = state.get('rx').turns;
    const id = newMessageId();
    let t = performance.now();
    await post('rx', `message ${i}: say ok`, id);
    await until(() => delivered.has(id), `message ${id} delivered`);
    if (i >= 0) viaInbox.push({ id, latency: delivered.get(id) - t });
    await turnEnded('rx', before);
    before = state.get('rx').turns;
    t = performance.now();
    await api.call('POST', '/v1/terminals/rx/input', { text: `input ${i}: say ok` });
    if (i >= 0) viaInput.push(performance.now() - t);
    await turnEnded('rx', before);
  }
  // Through the CLI: the process chooses the id; the clock starts before it is spawned.
  const viaCli = [];
  for (let i = 0; i < CLI_MESSAGES; i++) {
    const before = state.get('rx').turns;
    const t = performance.now();
    const child = spawn(process.execPath, [bin, 'message', 'rx', '-m', `cli message ${i}: say ok`, '--json'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    if (code !== 0) throw new Error(`jaggers message: exit ${code}`);
    const id = JSON.parse(out).id;
    await until(() => delivered.has(id), `message ${id} delivered`);
    viaCli.push(delivered.get(id) - t);
    await turnEnded('rx', before);
  }
  const inbox = await api.call('GET', '/v1/terminals/rx/inbox');
  const byId = new Map(inbox.messages.map((m) => [m.id, m]));
  const recorded = viaInbox.map((m) => Date.parse(byId.get(m.id).delivered) - Date.parse(byId.get(m.id).created));
  const hows = new Map();
  for (const m of viaInbox) hows.set(byId.get(m.id).how, (hows.get(byId.get(m.id).how) ?? 0) + 1);
  const lat = viaInbox.map((m) => m.latency);
  const row = (label, xs) => `  ${label.padEnd(50)} p50 ${ms(pct(xs, 50))}  p99 ${ms(pct(xs, 99))}  max ${ms(Math.max(...xs))}`;
  console.log(`\n2. one at a time to an idle agent (rx, think ${THINK_MS} ms); the ${demo.delivery.settleMs} ms paste settle is inside each`);
  console.log(row(`POST /v1/messages -> delivered event (${MESSAGES})`, lat));
  console.log(row('  the record: created -> delivered', recorded));
  console.log(row(`reference: POST /v1/terminals/rx/input (${MESSAGES})`, viaInput));
  console.log(row(`jaggers message spawned -> delivered event (${CLI_MESSAGES})`, viaCli));
  console.log(`  how: ${[...hows].map(([k, v]) => `${k} ${v}`).join(', ')}`);
  await until(() => ready('rx'), 'rx ready');

  // 3. Throughput: N/10 to t0 alone, then N spread over t0..t9 (twice), all posted at once.
  const turnsOf = (targets) => targets.reduce((sum, a) => sum + state.get(a).turns, 0);
  const burst = async (targets, n) => {
    const size = registrySize();
    const { pid } = await api.call('GET', '/v1/health');
    const turnsBefore = turnsOf(targets);
    const ids = Array.from({ length: n }, newMessageId);
    const cpu0 = cpuTicks(pid);
    const t = performance.now();
    await Promise.all(ids.map((id, i) => post(targets[i % targets.length], `burst ${i}: say ok`, id)));
    const stored = performance.now() - t;
    await until(() => ids.every((id) => delivered.has(id)), `all ${n} delivered`, Number(process.env.JAGGERS_BENCH_TIMEOUT_MS ?? 600_000)).catch(async (e) => {
      // What the supervisor says of the messages whose delivered event never came, and of their agents.
      const missing = ids.filter((id) => !delivered.has(id));
      const said = [];
      for (const a of new Set(missing.map((id) => targets[ids.indexOf(id) % targets.length]))) {
        const inbox = await api.call('GET', `/v1/terminals/${a}/inbox`).catch((x) => ({ error: x.message }));
        const term = await api.call('GET', `/v1/terminals/${a}`).catch((x) => ({ error: x.message }));
        said.push(`${a}: ${JSON.stringify(term).slice(0, 600)}\n  inbox: ${JSON.stringify(inbox).slice(0, 1500)}`);
      }
      throw new Error(`${e.message}: ${missing.length} without a delivered event (${missing.slice(0, 5).join(', ')})\n${said.join('\n')}`);
    });
    const last = Math.max(...ids.map((id) => delivered.get(id))) - t;
    const cpuMs = ((cpuTicks(pid) - cpu0) / ticks) * 1000;
    await until(() => targets.every(ready) && turnsOf(targets) >= turnsBefore + n, 'every target done with its turns');
    return { n, stored, last, rate: n / (last / 1000), size, cpuMs, turns: turnsOf(targets) - turnsBefore };
  };
  const alone = await burst(['t0'], BURST / AGENTS);
  const all = await burst(tees, BURST);
  const again = await burst(tees, BURST);
  const warm = [];
  for (let k = 0; k < WARM; k++) warm.push(await burst(tees, BURST));
  console.log(`\n3. posted at once (think ${THINK_MS} ms, paste settle ${demo.delivery.settleMs} ms, detect settle ${demo.detect.settleMs} ms)`);
  for (const [label, r] of [
    [`1 agent, ${alone.n} messages`, alone],
    [`${AGENTS} agents, ${all.n} messages`, all],
    [`${AGENTS} agents, ${again.n} more`, again],
    ...warm.map((r, k) => [`${AGENTS} agents, burst ${k + 3}`, r]),
  ]) {
    console.log(
      `  ${label.padEnd(26)} all stored ${ms(r.stored)}   last delivered ${(r.last / 1000).toFixed(2).padStart(6)} s   ${r.rate.toFixed(2).padStart(6)} msg/s` +
        `   supervisor CPU ${(r.cpuMs / r.n).toFixed(1)} ms/message (${((r.cpuMs / r.last) * 100).toFixed(0)} % of a core)   turns seen ${r.turns}   (${r.size} before)`,
    );
  }
  console.log(`  ${`reference: 1 agent x ${AGENTS}`.padEnd(26)} ${(alone.rate * AGENTS).toFixed(2)} msg/s (perfect scaling)`);

  // 4. kill -9 of the supervisor -> a `jaggers ls --json` that succeeded.
  events.abort();
  const live = [];
  const restart = [];
  const relaunch = [];
  for (let i = 0; i <= KILLS; i++) {
    live.push(timed([bin, 'ls', '--json']).elapsed);
    const { pid } = await api.call('GET', '/v1/health');
    const t = performance.now();
    const wall = Date.now();
    process.kill(pid, 'SIGKILL');
    timed([bin, 'ls', '--json']);
    const took = performance.now() - t;
    const h = await api.call('GET', '/v1/health');
    if (h.pid === pid) throw new Error(`the supervisor ${pid} still answers after kill -9`);
    if (i === 0) continue;
    restart.push(took);
    relaunch.push(startedAt(h.pid) - wall);
  }
  live.shift();
  const boot = restart.map((r, i) => r - relaunch[i]);
  console.log(`\n4. kill -9 of the supervisor -> jaggers ls --json succeeded (${KILLS} times, ${agents.length} agents)`);
  console.log(`  ${'reference: ls, live'.padEnd(34)} p50 ${ms(pct(live, 50))}  min ${ms(Math.min(...live))}  max ${ms(Math.max(...live))}`);
  console.log(`  ${'kill -9 -> ls succeeded'.padEnd(34)} p50 ${ms(pct(restart, 50))}  min ${ms(Math.min(...restart))}  max ${ms(Math.max(...restart))}`);
  console.log(`  ${'  kill -> new supervisor started'.padEnd(34)} p50 ${ms(pct(relaunch, 50))}  (the client notices and respawns window 0)`);
  console.log(`  ${'  started -> ls succeeded'.padEnd(34)} p50 ${ms(pct(boot, 50))}  (the supervisor boots and answers)`);
  console.log(`\nload average at the end ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
} finally {
  await world.end();
}
