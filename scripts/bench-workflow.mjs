#!/usr/bin/env node
// Workflow tasks (issue 12). Prints figures beside references from the same run; asserts nothing.
//
// 1. jaggers' own cost per workflow turn, with fake agents that answer at once (--think-ms 0): whole
//    `jaggers run collaborative --json` processes (3 turns) and `jaggers run adversarial --json` (run to
//    its limit: 7 turns), timed from the supervisor's records (the journal's task and job events) and by
//    the client (the process's exit). Interleaved with them, the reference: one plain handoff turn
//    (`POST /v1/handoffs`, wait) to an agent of the same profile. Per turn = the task's time from its
//    workflow recorded to its end, over its turns; minus one handoff is the workflow's overhead. The
//    breakdown: each turn's job queued -> starting -> running -> done, and the step between two turns
//    (one job done -> the next turn's status -> the next job recorded).
// 2. Resume after a crash: a detached collaborative task (a: think 0, s: think 3000 ms) whose supervisor
//    gets `kill -9` one second into turn 2's running; once s has finished turn 2 with no supervisor, the
//    command is issued: (a) `jaggers resume <task> --detach`, (b) `jaggers tasks` (the supervisor it
//    starts resumes detached tasks by itself). From issuing it: the API answering, the task live again
//    (`live: true`, and the log line "workflow task resumed"), turn 3's job recorded, the command's exit.
//    The reference, interleaved: kill -9 with no task in flight, then `jaggers tasks` (plain restart).
//
// Usage: npm run build && node scripts/bench-workflow.mjs [--tasks 10] [--long 3] [--handoffs 3] [--runs 3]
//   --tasks: collaborative tasks (after one warm-up), --long: adversarial tasks, --handoffs: reference
//   handoffs before each collaborative task (twice as many before an adversarial one), --runs:
//   crash-and-resume trials per kind (and plain restarts).
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed; the tmux server is killed by its socket at the end (taking the supervisor and
// every agent with it), commands still running are killed by pid, also on error or Ctrl-C. Each task's
// windows are closed when its figures are taken, so every task starts in the same world.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../dist/src/api/client.js';
import { apiSocketPath, currentLogPath } from '../dist/src/api/paths.js';
import { nextTurn } from '../dist/src/handover/artifact.js';
import { processRuns, untilGone } from '../dist/src/proc-state.js';
import { benchWorld, cpuPressure, load, startedAt } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');

function flags(argv) {
  const o = { tasks: 10, long: 3, handoffs: 3, runs: 3 };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(tasks|long|handoffs|runs)(?:=(.*))?$/.exec(argv[i]);
    const v = Number(m?.[2] ?? argv[i + 1]);
    if (!m || !Number.isInteger(v) || v < 0)
      throw new Error(`usage: bench-workflow.mjs [--tasks N] [--long N] [--handoffs N] [--runs N]; got ${argv.slice(i).join(' ')}`);
    if (m[2] === undefined) i++;
    o[m[1]] = v;
  }
  return o;
}
const { tasks: TASKS, long: LONG, handoffs: HANDOFFS, runs: RUNS } = flags(process.argv.slice(2));
/** The slow agent's think time, and how far into turn 2's running the supervisor is killed. */
const SLOW_MS = 3000;
const KILL_AFTER_MS = 1000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Nearest-rank percentile; NaN for no values. */
const pct = (xs, p) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const f = (x) => (Number.isFinite(x) ? x.toFixed(0) : '—').padStart(6);
const at = (iso) => Date.parse(iso);

// ---------------------------------------------------------------------------------------------
// The private world.

const { base, root, socket, env } = await benchWorld('workflow');
const jaggersDir = path.join(root, '.jaggers');
const api = new ApiClient({ socketPath: apiSocketPath(jaggersDir) });
const slowTrace = path.join(base, 'trace-slow.jsonl');

const children = new Set();
let serverStarted = false;
/**
 * Kill what is still running: commands by pid, then the tmux server by its socket (its panes, the
 * supervisor and the agents, get SIGHUP). Returns the pids of the server and its panes, to wait for.
 */
function cleanupSync() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  children.clear();
  if (!serverStarted) return [];
  serverStarted = false;
  const ls = spawnSync('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pid} #{pane_pid}'], { env, encoding: 'utf8' });
  const pids = [...new Set((ls.stdout ?? '').split(/\s+/).filter(Boolean).map(Number))];
  spawnSync('tmux', ['-L', socket, 'kill-server'], { env, stdio: 'ignore' });
  return pids;
}
/** Until the server and its panes' processes have exited (the supervisor goes when its server does); SIGKILL after 5 s. */
async function reap(pids) {
  for (const pid of pids) {
    if (await untilGone(() => processRuns(pid), 5000)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
process.once('SIGINT', () => {
  reap(cleanupSync())
    .then(() => rm(base, { recursive: true, force: true }))
    .finally(() => process.exit(130));
});

/** One `jaggers` process, started now; resolves at its exit with its output and the exit time. */
function jaggers(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      const exitAt = Date.now();
      children.delete(child);
      resolve({ code, stdout, stderr, exitAt });
    });
  });
}
async function ok(args) {
  const r = await jaggers(args);
  if (r.code !== 0) throw new Error(`jaggers ${args.join(' ')}: exit ${r.code}: ${r.stderr.slice(-2000)}`);
  return r;
}

/** Until `check()` gives a value, looking every `everyMs`; fails after `timeoutMs` naming what it waited for. */
async function until(check, what, timeoutMs = 60_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
const quietly = (p) => p.catch(() => null);

// The supervisor's records: the journal, read on from where the last read stopped.
const journalFile = path.join(jaggersDir, 'events.jsonl');
const journal = [];
let journalAt = 0;
function readJournal() {
  const size = statSync(journalFile).size;
  if (size <= journalAt) return journal;
  const buf = Buffer.alloc(size - journalAt);
  const fd = openSync(journalFile, 'r');
  try {
    readSync(fd, buf, 0, buf.length, journalAt);
  } finally {
    closeSync(fd);
  }
  const text = buf.toString('utf8');
  const end = text.lastIndexOf('\n') + 1;
  journalAt += Buffer.byteLength(text.slice(0, end));
  for (const line of text.slice(0, end).split('\n')) if (line) journal.push(JSON.parse(line));
  return journal;
}

/** A task's timeline from the journal: when its workflow was recorded, each turn's job and status, its end. */
function timeline(id) {
  const events = readJournal();
  const jobs = new Map();
  const out = { created: null, recorded: null, status: new Map(), end: null, endStatus: null, turns: [] };
  for (const e of events) {
    if (e.taskId === id) {
      if (e.type === 'task-created') out.created ??= at(e.ts);
      if (e.type === 'task-workflow') out.recorded ??= at(e.ts);
      if (e.type === 'task-status' && e.status === 'running') {
        const seq = Number(/^turn (\d+):/.exec(e.reason)?.[1]);
        if (!out.status.has(seq)) out.status.set(seq, at(e.ts));
      }
      if (e.type === 'task-status' && ['done', 'failed', 'cancelled'].includes(e.status)) {
        out.end = at(e.ts);
        out.endStatus = e.status;
      }
    }
    if (e.type === 'job-created' && e.task === id) {
      const seq = Number(/ turn (\d+):/.exec(e.name)?.[1]);
      jobs.set(e.jobId, { seq, queued: at(e.ts), starting: null, running: null, done: null, state: 'queued' });
    }
    if (e.type === 'job-state' && jobs.has(e.jobId)) {
      const j = jobs.get(e.jobId);
      j.state = e.state;
      if (e.state === 'starting') j.starting ??= at(e.ts);
      if (e.state === 'running') j.running ??= at(e.ts);
      if (e.state === 'done') j.done = at(e.ts);
    }
  }
  out.turns = [...jobs.values()].sort((a, b) => a.seq - b.seq || a.queued - b.queued);
  return out;
}

/** The supervisor's log lines (JSON) that pass `pick`. */
async function logLines(pick) {
  const text = await readFile(currentLogPath(jaggersDir), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter(pick);
}

/** Close a task's windows (its agents exit), so the next task starts in the same world. */
async function closeWindows(id) {
  const views = await api.call('GET', `/v1/terminals?task=${encodeURIComponent(id)}`);
  for (const v of views) spawnSync('tmux', ['-L', socket, 'kill-window', '-t', v.window], { env, stdio: 'ignore' });
  await until(async () => (await api.call('GET', `/v1/terminals?task=${encodeURIComponent(id)}`)).length === 0, `task ${id}'s windows closed`, 10_000);
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(jaggersDir, 'profiles'), { recursive: true });
  const profile = (name, args, extraEnv = {}) =>
    writeFile(path.join(jaggersDir, 'profiles', `${name}.json`), JSON.stringify({ ...demo, name, args, env: { ...demo.env, ...extraEnv } }, null, 2));
  await profile('quick', ['--think-ms', '0']);
  await profile('slow', ['--think-ms', String(SLOW_MS)], { FAKE_AGENT_TRACE: slowTrace });
  const agents = [
    { name: 'h0', profile: 'quick' },
    { name: 'a', profile: 'quick' },
    { name: 'b', profile: 'quick' },
    { name: 's', profile: 'slow' },
  ];
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents }, null, 2));
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo }).toString().trim();
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${execFileSync('tmux', ['-V']).toString().trim()}`);
  console.log(`commit ${commit}; load average ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
  console.log(
    `fake agents: --think-ms 0 (h0, a, b) and ${SLOW_MS} (s); demo.json's settle times: paste ${demo.delivery.settleMs} ms, detect ${demo.detect.settleMs} ms`,
  );
  serverStarted = true;
  await ok(['up']);

  // 1. Workflow turns beside handoff turns, interleaved: HANDOFFS handoffs to h0, then one task.
  const handoffs = [];
  let hn = 0;
  const handoffTurn = async (keep, phase) => {
    const t = performance.now();
    const r = await api.call('POST', '/v1/handoffs', { agent: 'h0', message: `ping ${hn++}`, task: 'bench-handoff', wait: true, timeout: 60 });
    const wall = performance.now() - t;
    if (keep) handoffs.push({ phase, wall, total: r.timings.totalMs, deliver: r.timings.deliverMs, reply: r.timings.replyMs });
  };
  const results = { collaborative: [], adversarial: [] };
  const problems = [];
  const runTask = async (workflow, n, keep) => {
    // Twice as many before a 7-turn task, so its reference is not too few.
    for (let i = 0; i < (workflow === 'adversarial' ? 2 * HANDOFFS : HANDOFFS); i++) await handoffTurn(keep, workflow);
    const start = Date.now();
    const r = await ok(['run', workflow, '--task', `bench ${workflow} ${n}`, '--agents', 'a,b', '--json']);
    const v = JSON.parse(r.stdout);
    const tl = timeline(v.id);
    if (v.status !== 'done' || tl.endStatus !== 'done' || tl.turns.length !== v.turns.length || tl.turns.some((j) => j.state !== 'done'))
      problems.push(`${workflow} ${v.id}: ${v.status} (${v.reason}), ${tl.turns.length} jobs`);
    await closeWindows(v.id);
    if (!keep) return;
    const count = tl.turns.length;
    results[workflow].push({
      id: v.id,
      turns: count,
      wall: r.exitAt - start,
      before: tl.recorded - start,
      upMs: tl.recorded - tl.created,
      perTurnSupervisor: (tl.end - tl.recorded) / count,
      perTurnClient: (r.exitAt - tl.recorded) / count,
      after: r.exitAt - tl.end,
      startMs: tl.turns[0].queued - tl.recorded,
      endMs: tl.end - tl.turns.at(-1).done,
      jobs: tl.turns.map((j) => ({ dispatch: j.starting - j.queued, deliver: j.running - j.starting, reply: j.done - j.running, total: j.done - j.queued })),
      steps: tl.turns.slice(1).map((j, k) => {
        const prev = tl.turns[k];
        const status = tl.status.get(j.seq);
        return { machine: status - prev.done, actor: j.queued - status, total: j.queued - prev.done };
      }),
    });
  };
  await runTask('collaborative', 0, false);
  for (let i = 1; i <= TASKS; i++) await runTask('collaborative', i, true);
  for (let i = 1; i <= LONG; i++) await runTask('adversarial', i, true);

  const row = (label, xs, extra = '') => console.log(`  ${label.padEnd(78)} p50 ${f(pct(xs, 50))}  p90 ${f(pct(xs, 90))}${extra}`);
  console.log(
    `\n1. per turn, ms; fake agents answer at once; ${handoffs.length} reference handoffs interleaved with ${TASKS} collaborative (3 turns) and ${LONG} adversarial (7 turns) tasks`,
  );
  for (const [wf, rs] of Object.entries(results)) {
    if (rs.length === 0) continue;
    // The reference: the handoffs made between this workflow's tasks (the project's history grows during the run).
    const hWall = handoffs.filter((h) => h.phase === wf).map((h) => h.wall);
    row(`reference: one handoff turn, POST /v1/handoffs (wait), wall (${hWall.length}, beside ${wf})`, hWall);
    row(
      '  its own timings.totalMs',
      handoffs.filter((h) => h.phase === wf).map((h) => h.total),
    );
    const sup = rs.map((r) => r.perTurnSupervisor);
    const cli = rs.map((r) => r.perTurnClient);
    row(
      `${wf} (${rs.length} tasks), supervisor: (workflow recorded -> done) / turns`,
      sup,
      `   p50 - handoff p50: ${(pct(sup, 50) - pct(hWall, 50)).toFixed(0)}`,
    );
    row(`${wf}, client: (workflow recorded -> run exited) / turns`, cli, `   p50 - handoff p50: ${(pct(cli, 50) - pct(hWall, 50)).toFixed(0)}`);
  }
  const all = [...results.collaborative, ...results.adversarial];
  const jobs = all.flatMap((r) => r.jobs);
  const steps = all.flatMap((r) => r.steps);
  console.log(`  breakdown over all ${jobs.length} turns of both workflows (the journal's times, ms resolution):`);
  row(
    "  turn's job: queued -> starting (dispatch, handover file)",
    jobs.map((j) => j.dispatch),
  );
  row(
    '              starting -> running (paste, settle, verified)',
    jobs.map((j) => j.deliver),
  );
  row(
    '              running -> done (agent and reply)',
    jobs.map((j) => j.reply),
  );
  row(
    '              queued -> done',
    jobs.map((j) => j.total),
  );
  row(
    `  step (${steps.length}): job done -> next turn's status recorded (machine, snapshot)`,
    steps.map((s) => s.machine),
  );
  row(
    '        status -> next job recorded (turn actor, job file, registry)',
    steps.map((s) => s.actor),
  );
  row(
    '        job done -> next job recorded',
    steps.map((s) => s.total),
  );
  row(
    '  task start: workflow recorded -> first job recorded',
    all.map((r) => r.startMs),
  );
  row(
    '  task end: last job done -> task done recorded',
    all.map((r) => r.endMs),
  );
  for (const [wf, rs] of Object.entries(results)) {
    if (rs.length === 0) continue;
    row(
      `whole \`jaggers run ${wf} --json\` process`,
      rs.map((r) => r.wall),
    );
    row(
      '  spawn -> workflow recorded (node, up --task: 2 windows, POST)',
      rs.map((r) => r.before),
    );
    row(
      '    of it up --task recorded -> workflow recorded',
      rs.map((r) => r.upMs),
    );
    row(
      '  task done recorded -> process exited',
      rs.map((r) => r.after),
    );
  }

  // What grows with the project's history: every turn (a handoff's or a workflow's) scans the handover folder twice.
  const kib = (f) => (statSync(path.join(jaggersDir, f)).size / 1024).toFixed(0);
  const scans = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await nextTurn(jaggersDir, 'bench-handoff');
    scans.push(performance.now() - t);
  }
  const wall = handoffs.map((h) => h.wall);
  console.log(
    `  history: handoff wall p50, first 10 of the run ${f(pct(wall.slice(0, 10), 50)).trim()}, last 10 ${f(pct(wall.slice(-10), 50)).trim()}; at the end ` +
      `${readdirSync(path.join(jaggersDir, 'handover')).length} handover files (nextTurn over them, in this process: ${f(pct(scans, 50)).trim()} ms p50), ` +
      `registry snapshot ${kib('sessions.json')} KiB, journal ${kib('events.jsonl')} KiB`,
  );

  // 2. kill -9 during turn 2 of a detached task, then a command that brings the supervisor back.
  const trials = { resume: [], restart: [], plain: [] };
  const killSupervisor = async () => {
    const { pid } = await api.call('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    if (!(await untilGone(() => processRuns(pid), 10_000))) throw new Error(`the supervisor ${pid} still runs after kill -9`);
    return pid;
  };
  /** From `t0`: the API answering from a new supervisor, and (for a task) the task live in it. */
  const watchComeback = async (t0, oldPid, id) => {
    const seen = { health: null, live: null, pid: null };
    await until(
      async () => {
        const h = await quietly(api.call('GET', '/v1/health'));
        if (!h || h.pid === oldPid) return null;
        seen.health ??= Date.now() - t0;
        seen.pid = h.pid;
        if (!id) return true;
        const t = await quietly(api.call('GET', `/v1/tasks/${id}`));
        if (t?.live) seen.live = Date.now() - t0;
        return t?.live ?? null;
      },
      'the supervisor back',
      60_000,
      10,
    );
    return seen;
  };
  const traceOf = (pid) =>
    readFileSync(slowTrace, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.pid === pid);
  const crash = async (kind, n) => {
    const id = (await ok(['run', 'collaborative', '--task', `bench crash ${kind} ${n}`, '--agents', 'a,s', '--detach'])).stdout.trim();
    const turn2 = await until(() => timeline(id).turns.find((j) => j.seq === 2 && j.running), `task ${id}: turn 2 running`);
    await sleep(Math.max(0, turn2.running + KILL_AFTER_MS - Date.now()));
    const slowPid = (await api.call('GET', `/v1/terminals?task=${id}`)).find((v) => v.agent === 's').pid;
    const oldPid = await killSupervisor();
    const killedAt = Date.now();
    // s finishes turn 2 with no supervisor watching; then the user comes back.
    const agentDone = await until(() => traceOf(slowPid).findLast((l) => l.state === 'idle' && l.t > turn2.running)?.t, `s done with turn 2`, 30_000);
    const t0 = Date.now();
    const cmd = jaggers(kind === 'resume' ? ['resume', id, '--detach'] : ['tasks', '--json']);
    const seen = await watchComeback(t0, oldPid, id);
    const r = await cmd;
    if (r.code !== 0) throw new Error(`${kind}: exit ${r.code}: ${r.stderr}`);
    const job3 = await until(() => timeline(id).turns.find((j) => j.seq === 3), `task ${id}: turn 3's job`, 30_000);
    await until(() => timeline(id).end, `task ${id} ended`, 30_000);
    const v = await api.call('GET', `/v1/tasks/${id}`);
    const resumed = (await logLines((l) => l.task === id && l.msg === 'workflow task resumed' && l.pid === seen.pid))[0];
    const serving = (await logLines((l) => l.pid === seen.pid && l.msg === 'supervisor serving'))[0];
    trials[kind].push({
      health: seen.health,
      live: seen.live,
      resumedLog: resumed ? at(resumed.time) - t0 : NaN,
      serving: serving ? at(serving.time) - t0 : NaN,
      started: startedAt(seen.pid) - t0,
      turn3: job3.queued - t0,
      exit: r.exitAt - t0,
      agentDoneAfterKill: agentDone - killedAt,
      ok: v.status === 'done' && v.turns.length === 3 && v.turns.every((x) => x.attempts === 1 && x.state === 'done'),
      status: `${v.status}, attempts ${v.turns.map((x) => x.attempts).join('/')}`,
    });
    await closeWindows(id);
  };
  const plain = async () => {
    const oldPid = await killSupervisor();
    const t0 = Date.now();
    const cmd = jaggers(['tasks', '--json']);
    const seen = await watchComeback(t0, oldPid, null);
    const r = await cmd;
    if (r.code !== 0) throw new Error(`tasks: exit ${r.code}: ${r.stderr}`);
    const serving = (await logLines((l) => l.pid === seen.pid && l.msg === 'supervisor serving'))[0];
    trials.plain.push({ health: seen.health, serving: serving ? at(serving.time) - t0 : NaN, started: startedAt(seen.pid) - t0, exit: r.exitAt - t0 });
  };
  for (let i = 0; i < RUNS; i++) {
    await crash('resume', i);
    await crash('restart', i);
    await plain();
  }
  if (RUNS > 0) {
    console.log(
      `\n2. kill -9 of the supervisor ${KILL_AFTER_MS} ms into turn 2's running (s thinks ${SLOW_MS} ms; it finished the turn with no supervisor, then the command was issued); ms from issuing it, p50 [min-max] of ${RUNS}`,
    );
    const cell = (xs) => `${f(pct(xs, 50))} [${f(Math.min(...xs)).trim()}-${f(Math.max(...xs)).trim()}]`.padEnd(17);
    const cols = [
      ['new supervisor started', 'started'],
      ['API answers', 'health'],
      ['serving (log)', 'serving'],
      ['resumed (log)', 'resumedLog'],
      ['live (GET)', 'live'],
      ["turn 3's job", 'turn3'],
      ['command exited', 'exit'],
    ];
    console.log(`  ${''.padEnd(44)} ${cols.map(([h]) => h.padEnd(17)).join(' ')}`);
    for (const [label, kind] of [
      ['(a) jaggers resume <task> --detach', 'resume'],
      ['(b) jaggers tasks (resumed on its start)', 'restart'],
      ['reference: kill -9, jaggers tasks, no task', 'plain'],
    ]) {
      const ts = trials[kind];
      console.log(
        `  ${label.padEnd(44)} ${cols.map(([, k]) => (ts.every((t) => t[k] !== undefined) ? cell(ts.map((t) => t[k] ?? NaN)) : ''.padEnd(17))).join(' ')}`,
      );
    }
    // Within each trial, so the machine's drift between trials cancels: the client's part (issue -> the
    // new supervisor's process), its boot (-> serving), and where the task stands against the boot.
    const within = (kind, fn) => pct(trials[kind].map(fn), 50);
    const boot = (kind) => within(kind, (t) => t.serving - t.started);
    console.log(
      `  within each trial, p50: the client until the new supervisor starts: (a) ${f(within('resume', (t) => t.started)).trim()}, (b) ${f(within('restart', (t) => t.started)).trim()}, reference ${f(within('plain', (t) => t.started)).trim()}; ` +
        `its boot (started -> serving): (a) ${f(boot('resume')).trim()}, (b) ${f(boot('restart')).trim()}, reference ${f(boot('plain')).trim()}`,
    );
    for (const kind of ['resume', 'restart'])
      console.log(
        `  ${kind === 'resume' ? '(a)' : '(b)'} task live (log) ${f(within(kind, (t) => t.serving - t.resumedLog)).trim()} before serving; turn 3's job ${f(within(kind, (t) => t.turn3 - t.serving)).trim()} after serving; ` +
          `tasks right (3 turns done, each once): ${trials[kind].filter((t) => t.ok).length}/${trials[kind].length}` +
          (trials[kind].some((t) => !t.ok) ? ` (${trials[kind].map((t) => t.status).join('; ')})` : ''),
      );
    console.log(
      `  s finished turn 2 ${f(
        pct(
          [...trials.resume, ...trials.restart].map((t) => t.agentDoneAfterKill),
          50,
        ),
      ).trim()} ms after the kill (p50)`,
    );
  }
  if (problems.length) console.log(`\nproblems: ${problems.join('; ')}`);
  console.log(`\nload average at the end ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
}

try {
  await main();
} finally {
  await reap(cleanupSync());
  await rm(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
