#!/usr/bin/env node
// Status detection latency (issue 3): how long after a fake agent draws a new state does jaggers'
// PaneWatcher report it, next to the floor (the same bytes arriving as %output on a bare control
// client) and a 500 ms capture-pane poller (what peers do). Also idle CPU with many agents and the
// number of processes forked per status change. Prints figures; asserts nothing about timings.
//
// Usage: npm run build && node scripts/bench-detect.mjs [--ns 1,10,50] [--turns 40,12,6]
//        [--think-ms 1000] [--idle-s 10] [--poll-ms 500] [--json FILE] [--alone] [--one-connection]
//        [--fresh-home] [--signals SET] [--no-output-busy] [--active K] [--only poller|none] [--nice N]
// --signals SET: what the watcher reads the fake agents by, as a real CLI's profile does (issue 27):
//   state-file (the default: the demo profile's state file and screen; claude without hooks),
//   hooks (native hooks and the screen, no state file: codex, qwen and gemini),
//   hooks+state-file (hooks, state file and screen: claude), screen (the screen alone).
//   With hooks the agents get them through the real path: the fake-agent HookKit's install() (the
//   launcher's hookLaunch + writeHookFiles), the real bridge bin/jaggers-hook, a real spool folder
//   watched by the real HookSpool feeding PaneWatcher.hookCall, as src/supervisor/compose.ts wires it.
//   The fake agent runs its hook (waited for) before it draws the new state, so a hook can tell
//   jaggers before the screen shows it: those latencies are below 0.
// --alone runs the watcher without the floor and the poller beside it (to see what they cost it).
// --one-connection: the watcher's captures (and the prompts) share the connection that receives all
//   pane output, as before 02490a4 (by default they go over a second, no-output connection).
// --screen-only is --signals screen.
// --only poller: the poller alone, no watcher and no floor (turns are timed); --only none: the agents
//   alone. With --alone (the watcher alone) they split tmux's CPU between the methods.
// --active K keeps at most K agents in a turn at once (e.g. 20 busy of 100); the rest wait idle.
// --nice N: the agents' CPU priority, as the launcher gives it (default 5, jaggers' default: `nice -n N`
//   in the command and the pane's session group, src/agents/session-nice.ts); 0 runs them as this process.
// --fresh-home starts the agents with a HOME that has no state folder yet (the watcher's first
//   reading then comes before the folder exists; its state-file watch must be retried later).
// BENCH_DEBUG=1 also prints every reading the watcher made around slow or missed detections.
//
// Everything runs on a private tmux server (own TMUX_TMPDIR, own -L socket, -f /dev/null) that is
// killed by its socket at the end, also on error or Ctrl-C. The floor and the poller each run in a
// worker thread with their own event loop and control connection, so neither waits behind the
// watcher's work on the main thread (they still share the machine's cores).
import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { findCommand } from '../dist/src/agents/find-command.js';
import { hookDir, hookLaunch, writeHookFiles } from '../dist/src/agents/hooks-install.js';
import { DEFAULT_AGENT_NICE, nicedCommand } from '../dist/src/agents/plan.js';
import { realSessionNicePorts, SessionNice } from '../dist/src/agents/session-nice.js';
import { classify } from '../dist/src/detect/classify.js';
import { ensurePrivateFolder } from '../dist/src/fs/private-dir.js';
import { writeBridgeShell } from '../dist/src/panes/bridge-shell.js';
import { HookSpool, hookSpoolDir } from '../dist/src/panes/hook-spool.js';
import { PaneWatcher } from '../dist/src/panes/watcher.js';
import { loadProfile } from '../dist/src/profiles/load.js';
import { capturePane, sendKeys, sendLiteral } from '../dist/src/tmux/commands.js';
import { openCommandControl, openControl } from '../dist/src/tmux/connect.js';
import { tmuxEnv } from '../dist/src/tmux/server.js';

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the fake agent draws (src/fake-agent/render.ts): every frame starts with CLEAR and ends with
// the footer; a busy frame has the spinner line.
const CLEAR = '\x1b[H\x1b[2J';
const FOOTER = ' ? for shortcuts';
const SPINNER = '(esc to cancel';

// ---------------------------------------------------------------------------------------------
// Fork counting: every process this (main) thread starts goes through ChildProcess#spawn (spawn,
// exec, execFile, fork, execa) or one of the *Sync functions; count them all.

function hookSpawns() {
  const require = createRequire(import.meta.url);
  const cp = require('node:child_process');
  const log = [];
  const orig = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function (options) {
    log.push({ at: now(), file: options?.file });
    return orig.call(this, options);
  };
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const o = cp[name];
    cp[name] = function (...args) {
      log.push({ at: now(), file: String(args[0]) });
      return o.apply(this, args);
    };
  }
  syncBuiltinESMExports();
  return log;
}

// ---------------------------------------------------------------------------------------------
// /proc readers (Linux).

async function procStat(pid) {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const f = text.slice(close + 2).split(' ');
    return { pid, comm, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null; // the process ended between readdir and read
  }
}

async function allProcs() {
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
  return (await Promise.all(pids.map(procStat))).filter((p) => p !== null);
}

/** Microseconds some task waited for a CPU (Linux pressure stall information), or NaN. */
async function cpuStallMicros() {
  try {
    const m = /^some .*total=(\d+)$/m.exec(await readFile('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

async function forksSinceBoot() {
  const m = /^processes (\d+)$/m.exec(await readFile('/proc/stat', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

// ---------------------------------------------------------------------------------------------
// Frame tracking on a raw %output stream: which state each drawn frame shows, and when the chunk
// that made it visible arrived. A busy frame counts from the chunk holding the spinner text; a quiet
// frame from the chunk that completes it (ends with the footer) without a spinner.

function frameTracker(onState) {
  const panes = new Map();
  const KEEP = 40; // longer than CLEAR, SPINNER and FOOTER, so a marker split between chunks is found
  return (paneId, data, at) => {
    let p = panes.get(paneId);
    if (!p) {
      p = { decoder: new StringDecoder('utf8'), tail: '', judged: false, state: null, bytes: 0 };
      panes.set(paneId, p);
    }
    p.bytes += data.length;
    // Only the new text plus a short tail of the current frame is scanned: O(chunk), not O(frame).
    const parts = (p.tail + p.decoder.write(data)).split(CLEAR);
    const judge = (state) => {
      p.judged = true;
      if (state !== p.state) {
        p.state = state;
        onState({ pane: paneId, state, at, bytes: p.bytes });
      }
    };
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) {
        if (!p.judged) judge('idle'); // the previous frame ended without a spinner
        p.judged = false;
      }
      if (p.judged) continue;
      if (parts[i].includes(SPINNER)) judge('busy');
      else if (i === parts.length - 1 && parts[i].endsWith(FOOTER)) judge('idle');
    }
    p.tail = parts[parts.length - 1].slice(-KEEP);
  };
}

// ---------------------------------------------------------------------------------------------
// Workers: the floor (bare control client) and the poller.

async function floorWorker({ server, session }) {
  const client = await openControl(server, session);
  const events = [];
  const track = frameTracker((e) => events.push(e));
  let chunks = 0;
  let bytes = 0;
  client.onOutput((paneId, data) => {
    chunks++;
    bytes += data.length;
    track(paneId, data, now());
  });
  parentPort.on('message', async (msg) => {
    if (msg.type === 'collect') parentPort.postMessage({ type: 'events', events: events.splice(0), chunks, bytes });
    if (msg.type === 'stop') {
      await client.close().catch(() => {});
      parentPort.postMessage({ type: 'stopped' });
      parentPort.close();
    }
  });
  parentPort.postMessage({ type: 'ready', pid: client.pid });
}

async function pollerWorker({ server, session, rules, pollMs }) {
  const client = await openControl(server, session);
  await client.runOk(['refresh-client', '-f', 'no-output']); // a poller reads screens, not streams
  let panes = [];
  const last = new Map();
  const events = [];
  let running = false;
  let polls = 0;
  let timer = null;
  const tick = async () => {
    const started = now();
    await Promise.all(
      panes.map(async (paneId) => {
        let screen;
        try {
          screen = await capturePane(client, paneId);
        } catch {
          return;
        }
        const at = now();
        const { status } = classify({ screen, raw: '', rules });
        polls++;
        if (status !== last.get(paneId)) {
          last.set(paneId, status);
          events.push({ pane: paneId, state: status, at });
        }
      }),
    );
    // Fixed rate: the next poll starts pollMs after this one started (or at once if it overran).
    if (running) timer = setTimeout(tick, Math.max(0, started + pollMs - now()));
  };
  parentPort.on('message', async (msg) => {
    if (msg.type === 'panes') panes = msg.panes;
    if (msg.type === 'start' && !running) {
      running = true;
      void tick();
    }
    if (msg.type === 'pause') {
      running = false;
      clearTimeout(timer);
    }
    if (msg.type === 'collect') parentPort.postMessage({ type: 'events', events: events.splice(0), polls });
    if (msg.type === 'stop') {
      running = false;
      clearTimeout(timer);
      await client.close().catch(() => {});
      parentPort.postMessage({ type: 'stopped' });
      parentPort.close();
    }
  });
  parentPort.postMessage({ type: 'ready', pid: client.pid });
}

/** Stands in for the PaneWatcher with --only (the poller, or nothing, measured without it). */
function nullWatcher() {
  return {
    captures: 0,
    captureReasons: {},
    entries: new Map(),
    start: async () => {},
    watch() {},
    onChange() {},
    inputSent() {},
    stop() {},
    status: () => 'idle',
    turns: () => 0,
    snapshot: () => undefined,
    lastScreen: () => null,
  };
}

/** Stands in for the floor and the poller with --alone (jaggers measured without them). */
function nullWorker() {
  return {
    worker: { postMessage() {}, terminate: async () => {} },
    request: async (msg, replyType) => ({ type: replyType, events: [], chunks: 0, polls: 0 }),
    ready: Promise.resolve({ type: 'ready', pid: undefined }),
  };
}

/** A worker with request/reply by message type. */
function startWorker(data) {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: data });
  let failure = null;
  worker.on('error', (e) => {
    failure = e;
  });
  const request = (msg, replyType) =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      const onMsg = (m) => {
        if (m.type === replyType) {
          worker.off('message', onMsg);
          worker.off('error', reject);
          resolve(m);
        }
      };
      worker.on('message', onMsg);
      worker.once('error', reject);
      if (msg) worker.postMessage(msg);
    });
  return { worker, request, ready: request(null, 'ready') };
}

// ---------------------------------------------------------------------------------------------
// Statistics.

function pct(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summary(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 0.5), p95: pct(s, 0.95), p99: pct(s, 0.99), max: s.length ? s[s.length - 1] : NaN, min: s.length ? s[0] : NaN };
}

const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');

/**
 * For each traced state change (pid, state, t), the first detection of that state for the pid's
 * pane at or after t and before the pid's next trace line of the same state. The slack covers an
 * agent preempted between writing its screen and reading the clock for its trace line (seen on this
 * loaded 2-core box); such a change shows up as a latency below zero, and the previous change of the
 * same kind is a whole turn (over a second) earlier, so the slack cannot pick it.
 */
const SLACK_MS = 25;

/**
 * `early` (--signals with hooks): a hook runs before the agent draws the new state, so a detection
 * may come before the trace line by more than the slack; it may come at any time after the pid's
 * previous trace line (of the other state: that turn's other end).
 */
let early = false;

function match(traces, detections, paneOfPid, wanted, pick = (d) => d.at) {
  const byPane = new Map();
  for (const d of detections) {
    if (!byPane.has(d.pane)) byPane.set(d.pane, []);
    byPane.get(d.pane).push(d);
  }
  const out = [];
  const missed = [];
  for (const [i, tr] of traces.entries()) {
    const want = wanted[tr.state];
    if (!want) continue;
    const next = traces.slice(i + 1).find((x) => x.pid === tr.pid && x.state === tr.state);
    const until = next ? next.t : Infinity;
    const prev = early ? traces.slice(0, i).findLast((x) => x.pid === tr.pid) : undefined;
    const from = early ? (prev ? prev.t : -Infinity) : tr.t - SLACK_MS;
    const d = (byPane.get(paneOfPid.get(tr.pid)) ?? []).find((x) => want.includes(x.state) && x.at >= from && x.at < until);
    if (d) out.push({ trace: tr, latency: pick(d) - tr.t, d });
    else missed.push(tr);
  }
  return { latencies: out, missed: missed.length, missedTraces: missed };
}

// ---------------------------------------------------------------------------------------------
// One benchmark for N agents on a fresh server.

// The watcher's read API has changed while this script was written; use what this build has.
const statusOf = (w, id) => (typeof w.status === 'function' ? w.status(id) : w.snapshot(id)?.value);
const turnsOf = (w, id) => (typeof w.turns === 'function' ? w.turns(id) : (w.snapshot(id)?.context.turns ?? 0));

async function runN(ctx, n, turns) {
  const { tmp, profile, opts, spawnLog } = ctx;
  const server = ctx.newServer(n);
  const session = 'bench';
  const work = path.join(tmp, 'work');
  await mkdir(work, { recursive: true });
  const trace = path.join(tmp, `trace-${n}.jsonl`);
  // By default the agents' HOME already has the state folder, as on a machine where the CLI ran
  // before. Without it (--fresh-home) the watcher's first capture comes before the agent made the
  // folder, its fs.watch fails and is never retried: see the report.
  const home = path.join(ctx.home, `n${n}`);
  await mkdir(opts.freshHome ? home : path.join(home, '.fake-agent', 'state'), { recursive: true });
  const client = await openControl(server, session, {
    windowName: 'hold',
    command: ['sleep', '1000000'],
    cwd: work,
    width: 200,
    height: 50,
    env: {},
  });
  ctx.clients.push(client);
  const serverPid = Number((await client.runOk(['display-message', '-p', '#{pid}']))[0]);
  const floor = opts.alone || opts.only ? nullWorker() : startWorker({ role: 'floor', server, session });
  const poller =
    opts.alone || opts.only === 'none' ? nullWorker() : startWorker({ role: 'poller', server, session, rules: profile.detect.rules, pollMs: opts.pollMs });
  ctx.workers.push(floor, poller);
  const floorReady = await floor.ready;
  const pollerReady = await poller.ready;

  // As the supervisor does: pane output and notifications on one connection, captures (and here the
  // prompts) on a second one that asked tmux for no output. --one-connection puts everything on the
  // first, as jaggers did before 02490a4.
  const cmd = opts.oneConnection ? client : await openCommandControl(server, session);
  if (cmd !== client) ctx.clients.push(cmd);
  // Every capture-pane round trip on the watcher's command connection, with the number of commands
  // already waiting for a reply when it was sent (the watcher is untouched; only the client is wrapped).
  const captureLog = [];
  const run = cmd.run.bind(cmd);
  cmd.run = (args) => {
    if (args[0] !== 'capture-pane') return run(args);
    const sent = now();
    const depth = cmd.pending?.length ?? NaN;
    return run(args).then((r) => {
      captureLog.push({ sent, replied: now(), depth });
      return r;
    });
  };
  // openControl resolves once a first command is answered, which can happen before tmux ran the
  // attach; a `refresh-client -f no-output` sent then lands on another client. Check every
  // connection's flag and repair it, so the run measures the intended setup; report what was wrong.
  const flagFixes = await ensureOutputFlags(client, [
    [client.pid, Boolean(opts.only), 'watcher output'], // no watcher (--only): nobody reads that output
    [cmd.pid, cmd !== client, 'watcher commands'],
    [floorReady.pid, false, 'floor'],
    [pollerReady.pid, true, 'poller'],
  ]);
  // --only poller|none: no watcher at all (a stand-in that does nothing); turns are then timed, not watched.
  // With hooks, as src/supervisor/compose.ts wires it: a pane started with its hooks installed has its
  // hook folder; the spool's calls go to watcher.hookCall.
  const projectRoot = path.join(tmp, `project-n${n}`);
  const jaggersDir = path.join(projectRoot, '.jaggers');
  const hooked = opts.signals.includes('hooks');
  const watcherOptions = {
    ...(opts.oneConnection ? {} : { commands: cmd }),
    ...(hooked ? { hooksInstalled: (pane) => pane.terminalId != null && existsSync(hookDir(projectRoot, pane.terminalId)) } : {}),
  };
  const watcher = opts.only ? nullWatcher() : new PaneWatcher(client, watcherOptions);
  await watcher.start();
  // Every bridge call: when the bridge started (the ns in its file's name) and when the watcher had it.
  const hookCalls = [];
  const hookSkips = [];
  let spool = null;
  if (hooked) {
    await ensurePrivateFolder(hookSpoolDir(jaggersDir));
    spool = new HookSpool({
      dir: hookSpoolDir(jaggersDir),
      deliver: (call) => {
        const at = now();
        const wall = Date.now(); // the bridge's ns come from the wall clock (`$EPOCHREALTIME`, `date +%s%N`)
        const skipped = watcher.hookCall(call);
        hookCalls.push({ terminalId: call.terminalId, event: call.event, lagMs: wall - Number(call.ns / 1000n) / 1000, at, stale: call.stale, skipped });
      },
      skipped: (file, why) => hookSkips.push(`${path.basename(file)}: ${why}`),
    });
    spool.start();
    await writeBridgeShell(hookSpoolDir(jaggersDir));
  }
  // A pane whose hooks the watcher stopped trusting (a turn with no hook call): the screen decides it from then on.
  const hookWarnings = [];
  watcher.onHookWarning?.((pane, warning) => hookWarnings.push({ pane: pane.paneId, agent: pane.agent, at: now(), warning }));
  const hooksBack = [];
  watcher.onHooksBack?.((pane) => hooksBack.push(pane.agent));
  const changes = [];
  const waiters = new Set();
  watcher.onChange((c) => {
    const at = now();
    changes.push({ pane: c.pane.paneId, state: c.status, at, since: c.since, turns: c.turns });
    for (const w of [...waiters]) w(c);
  });
  // The machine's own states, `settling` included (the public status hides it): read from the
  // watcher's internal actor, which only a benchmark should do.
  const machine = [];
  const settleRestarts = [];
  const readings = []; // BENCH_DEBUG=1: every event the watcher sent to each machine
  // Arrival of each %output chunk on the watcher's own connection (byte offsets per pane), to split
  // the jaggers-floor gap into delivery to this thread and the capture round trip.
  const ownArrivals = new Map();
  let ownChunks = 0;
  client.onOutput((paneId, data) => {
    ownChunks++;
    let a = ownArrivals.get(paneId);
    if (!a) ownArrivals.set(paneId, (a = { bytes: 0, at: [], cum: [] }));
    a.bytes += data.length;
    a.at.push(now());
    a.cum.push(a.bytes);
  });

  const fakeAgent = path.join(ctx.root, 'dist', 'src', 'fake-agent', 'main.js');
  // The agents' CPU priority, as the launcher gives it.
  const niceBin = findCommand('nice', process.env.PATH ?? '', ctx.root);
  const sessionNice = new SessionNice(realSessionNicePorts((pid, why) => console.log(`agent ${pid}: its session group kept its nice (${why})`)));
  const panes = [];
  for (let i = 0; i < n; i++) {
    const terminalId = `jg-bench-${i}`;
    // The launcher's path: the kit's install(), its files written under .jaggers/hooks/<terminalId>/.
    const launch = hooked ? hookLaunch(profile, { projectRoot, binDir: path.join(ctx.root, 'bin'), terminalId, cwd: work }) : null;
    if (hooked && !launch) throw new Error(`the ${profile.detect.hooks} hook kit installs nothing`);
    await writeHookFiles(launch, null);
    const [line] = await client.runOk([
      'new-window',
      '-d',
      '-P',
      '-F',
      '#{window_id} #{pane_id} #{pane_pid}',
      '-t',
      `=${session}:`,
      '-n',
      `a${i}`,
      '-c',
      work,
      '-e',
      `HOME=${home}`,
      '-e',
      `FAKE_AGENT_TRACE=${trace}`,
      ...Object.entries(launch?.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      '--',
      ...nicedCommand([process.execPath, fakeAgent, '--think-ms', String(opts.thinkMs), ...(launch?.args ?? [])], opts.nice, niceBin),
    ]);
    const [windowId, paneId, pid] = line.split(' ');
    sessionNice.set(Number(pid), opts.nice);
    // Per window: a global `window-size manual` crashes tmux 3.3a on the next new-window.
    await client.runOk(['set-option', '-w', '-t', windowId, 'window-size', 'manual']);
    await client.runOk(['resize-window', '-t', windowId, '-x', '200', '-y', '50']);
    const pane = { paneId, windowId, agent: `a${i}`, profile, pid: Number(pid), terminalId };
    panes.push(pane);
    watcher.watch(pane);
    const entry = watcher.entries?.get(paneId);
    if (process.env.BENCH_DEBUG && entry) {
      const send = entry.actor.send.bind(entry.actor);
      entry.actor.send = (ev) => {
        readings.push({
          pane: paneId,
          at: now(),
          type: ev.type,
          status: ev.classification?.status,
          source: ev.source,
          before: entry.actor.getSnapshot().value,
        });
        send(ev);
      };
    }
    let prev = null;
    let prevSince = null;
    entry?.actor.subscribe((snap) => {
      // A new quiet reading while settling re-enters `settling` and restarts the settle timer.
      if (snap.value === 'settling' && prev === 'settling' && snap.context.since !== prevSince) {
        settleRestarts.push({ pane: paneId, at: now() });
      }
      prevSince = snap.context.since;
      if (snap.value === prev) return;
      prev = snap.value;
      machine.push({ pane: paneId, state: snap.value, at: now(), since: snap.context.since });
    });
  }
  const paneOfPid = new Map(panes.map((p) => [p.pid, p.paneId]));

  // Ready: every pane idle, then a quiet moment for the resize redraws to pass.
  const deadline = Date.now() + 60_000;
  const idleNow = opts.only
    ? async () => {
        for (const p of panes) if (classify({ screen: await capturePane(cmd, p.paneId), raw: '', rules: profile.detect.rules }).status !== 'idle') return false;
        return true;
      }
    : async () => panes.every((p) => statusOf(watcher, p.paneId) === 'idle');
  while (!(await idleNow())) {
    if (Date.now() > deadline) {
      for (const p of panes.filter((x) => statusOf(watcher, x.paneId) !== 'idle').slice(0, 3)) {
        console.log(`not idle: ${p.paneId} ${JSON.stringify(watcher.snapshot?.(p.paneId)?.context ?? null)}; now on screen:`);
        console.log((await capturePane(cmd, p.paneId)).trimEnd().split('\n').slice(-6).join('\n'));
      }
      throw new Error(`agents not idle after 60 s: ${panes.map((p) => statusOf(watcher, p.paneId)).join(',')}`);
    }
    await sleep(50);
  }
  await sleep(500);
  poller.worker.postMessage({ type: 'panes', panes: panes.map((p) => p.paneId) });
  poller.worker.postMessage({ type: 'start' });
  await sleep(opts.pollMs + 100);

  // ---- measured phase: every agent runs `turns` turns, each on its own loop with random gaps.
  const spawnsBefore = spawnLog.length;
  const forksBefore = await forksSinceBoot();
  const procsBefore = await allProcs();
  const childrenBefore = procsBefore.filter((p) => p.ppid === process.pid);
  const serverChildrenBefore = procsBefore.filter((p) => p.ppid === serverPid).length;
  const capturesBefore = watcher.captures;
  const ownChunksBefore = ownChunks;
  const reasonsBefore = { ...(watcher.captureReasons ?? {}) };
  const commandsBefore = cmd.commandsSent;
  const floorBytesBefore = (await floor.request({ type: 'collect' }, 'events')).bytes;
  const cpuBefore = process.cpuUsage();
  const stallBefore = await cpuStallMicros();
  const serverBefore = await procStat(serverPid);
  const agentTicks = (procs) => procs.filter((p) => p.ppid === serverPid).reduce((sum, p) => sum + p.ticks, 0);
  const agentsBefore = agentTicks(procsBefore);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const phaseStart = now();
  let timeouts = 0;

  const waitDone = (paneId, afterTurns, ms) =>
    new Promise((resolve) => {
      const w = (c) => {
        if (c.pane.paneId === paneId && c.status === 'done' && c.turns > afterTurns) finish(true);
      };
      const timer = setTimeout(() => finish(false), ms);
      const finish = (ok) => {
        clearTimeout(timer);
        waiters.delete(w);
        resolve(ok);
      };
      waiters.add(w);
    });

  // --active K: at most K agents in a turn at once (the others wait idle for a slot), as when a few of
  // many agents work; 0 = all at once.
  const slots = opts.active > 0 ? opts.active : Infinity;
  let busyNow = 0;
  const slotWaiters = [];
  const acquire = async () => {
    while (busyNow >= slots) await new Promise((r) => slotWaiters.push(r));
    busyNow++;
  };
  const release = () => {
    busyNow--;
    slotWaiters.shift()?.();
  };
  await Promise.all(
    panes.map(async (p) => {
      await sleep(Math.random() * 600);
      for (let k = 0; k < turns; k++) {
        await acquire();
        const turnsBefore = turnsOf(watcher, p.paneId);
        // A turn whose done never comes is ended by the next prompt (counted as timed out). Without a
        // watcher (--only), a turn is given its think time and 800 ms more.
        const done = opts.only ? sleep(opts.thinkMs + 950).then(() => true) : waitDone(p.paneId, turnsBefore, opts.thinkMs + 5000);
        // As a delivery does: the screen read before typing tells the machine which turn summary is old
        // (without it, a start look that reads the last turn's summary took it for this turn's end).
        const before = opts.only ? undefined : await capturePane(cmd, p.paneId).catch(() => undefined);
        await sendLiteral(cmd, p.paneId, `bench turn ${k + 1} of ${p.agent}`);
        await sleep(150); // let the typed text show before Enter
        await sendKeys(cmd, p.paneId, ['Enter']);
        watcher.inputSent(p.paneId, before);
        if (!(await done)) timeouts++;
        release();
        await sleep(100 + Math.random() * 500);
      }
    }),
  );
  await sleep(opts.pollMs + 300); // let the poller see the last screens
  const phaseEnd = now();
  loopDelay.disable();
  const spawnsDuring = spawnLog.slice(spawnsBefore);
  const forksDuring = (await forksSinceBoot()) - forksBefore;
  const procsAfter = await allProcs();
  const cpuDuring = process.cpuUsage(cpuBefore);
  const serverAfter = await procStat(serverPid);
  const phaseMs = phaseEnd - phaseStart;
  const ticksPct = (ticks) => ((ticks * 1000) / ctx.clkTck / phaseMs) * 100;
  const phaseCpu = {
    processPct: ((cpuDuring.user + cpuDuring.system) / 1000 / phaseMs) * 100,
    tmuxServerPct: serverBefore && serverAfter ? ticksPct(serverAfter.ticks - serverBefore.ticks) : NaN,
    agentsPct: ticksPct(agentTicks(procsAfter) - agentsBefore),
    loadavg: os.loadavg()[0],
    cpuStallPct: (((await cpuStallMicros()) - stallBefore) / 1000 / phaseMs) * 100,
  };
  const phaseCaptures = captureLog.filter((c) => c.sent >= phaseStart && c.sent <= phaseEnd);
  const childrenAfter = procsAfter.filter((p) => p.ppid === process.pid);
  const serverChildrenAfter = procsAfter.filter((p) => p.ppid === serverPid).length;
  const captures = watcher.captures - capturesBefore;
  const captureReasons = Object.fromEntries(Object.entries(watcher.captureReasons ?? {}).map(([k, v]) => [k, v - (reasonsBefore[k] ?? 0)]));
  const commands = cmd.commandsSent - commandsBefore;

  const floorOut = await floor.request({ type: 'collect' }, 'events');
  const pollerOut = await poller.request({ type: 'collect' }, 'events');

  const traceLines = (await readFile(trace, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((x) => x.t >= phaseStart && paneOfPid.has(x.pid))
    .sort((a, b) => a.t - b.t);
  // The fake agent writes its state file right after the screen and traces that too (`stateFile`).
  const traces = traceLines.filter((x) => !x.stateFile);
  const fileTraces = traceLines.filter((x) => x.stateFile);
  // How late the agent's state file came after its screen: the file cannot tell jaggers sooner.
  const fileLag = [];
  for (const tr of traces) {
    const f = fileTraces.find((x) => x.pid === tr.pid && x.state === tr.state && x.t >= tr.t);
    if (f) fileLag.push(f.t - tr.t);
  }

  const during = (xs) => xs.filter((x) => x.at >= phaseStart);
  const jBusy = match(traces, during(changes), paneOfPid, { busy: ['busy'] });
  const jDone = match(traces, during(changes), paneOfPid, { idle: ['done', 'idle'] });
  const jDoneSince = match(traces, during(changes), paneOfPid, { idle: ['done', 'idle'] }, (d) => d.since);
  const jQuiet = match(traces, during(machine), paneOfPid, { idle: ['settling', 'idle', 'done'] });
  const fBusy = match(traces, during(floorOut.events), paneOfPid, { busy: ['busy'] });
  const fQuiet = match(traces, during(floorOut.events), paneOfPid, { idle: ['idle'] });
  const pBusy = match(traces, during(pollerOut.events), paneOfPid, { busy: ['busy'] });
  const pQuiet = match(traces, during(pollerOut.events), paneOfPid, { idle: ['done', 'idle'] });

  // Breakdown of busy detection: floor arrival -> arrival of the same byte on the watcher's
  // connection -> the reading that decided (`since`: a capture reply or a state-file event, which
  // can come first) -> listeners told.
  const ownAt = (paneId, bytes) => {
    const a = ownArrivals.get(paneId);
    if (!a) return NaN;
    const i = a.cum.findIndex((c) => c >= bytes);
    return i < 0 ? NaN : a.at[i];
  };
  const floorByTrace = new Map([...fBusy.latencies, ...fQuiet.latencies].map((m) => [m.trace, m.d]));
  const breakdown = (jm) => {
    const own = [];
    const capture = [];
    const notify = [];
    for (const m of jm.latencies) {
      const fd = floorByTrace.get(m.trace);
      if (!fd) continue;
      const o = ownAt(fd.pane, fd.bytes);
      own.push(o - fd.at);
      if (m.d.since !== undefined) {
        capture.push(m.d.since - o);
        notify.push(m.d.at - m.d.since);
      }
    }
    return { ownMinusFloor: summary(own), captureAfterOwn: summary(capture), notifyAfterCapture: summary(notify) };
  };
  const paired = (jm, fm) => {
    const fl = new Map(fm.latencies.map((m) => [m.trace, m.latency]));
    return summary(jm.latencies.filter((m) => fl.has(m.trace)).map((m) => m.latency - fl.get(m.trace)));
  };

  const lat = (m) => m.latencies.map((x) => x.latency);
  // How much later than settling-start + settleMs the done came, and how many restarts it took.
  const doneByTrace = new Map(jDone.latencies.map((m) => [m.trace, m.d.at]));
  const settleExtra = [];
  const restarts = [];
  for (const m of jQuiet.latencies) {
    const doneAt = doneByTrace.get(m.trace);
    if (doneAt === undefined) continue;
    settleExtra.push(doneAt - m.d.at - profile.detect.settleMs);
    restarts.push(settleRestarts.filter((x) => x.pane === m.d.pane && x.at >= m.d.at && x.at <= doneAt).length);
  }
  // A pane whose hooks were warned of: its status changes, machine events (BENCH_DEBUG=1) and hook calls, in order.
  {
    for (const w of hookWarnings.slice(0, 1)) {
      const pane = panes.find((p) => p.paneId === w.pane);
      const t0 = phaseStart;
      const lines = [
        ...readings.filter((y) => y.pane === w.pane).map((y) => ({ at: y.at, text: `${y.type} ${y.status ?? ''} (${y.source ?? ''}) in ${y.before}` })),
        ...changes.filter((y) => y.pane === w.pane).map((y) => ({ at: y.at, text: `-> ${y.state} (turns ${y.turns})` })),
        ...hookCalls
          .filter((c) => c.terminalId === pane?.terminalId)
          .map((c) => ({ at: c.at, text: `hook call ${c.event} (bridge started ${c.lagMs.toFixed(0)} ms before)` })),
        { at: w.at, text: `WARNING ${w.warning.slice(0, 60)}` },
      ].sort((a, b) => a.at - b.at);
      console.log(`warned pane ${w.agent}:`);
      for (const l of lines) console.log(`  ${(l.at - t0).toFixed(1)} ms: ${l.text}`);
    }
  }
  if (process.env.BENCH_DEBUG) {
    console.log(
      `debug: fs.watch calls: ${fsWatchCalls.ok} ok, ${fsWatchCalls.failed.length} failed ${JSON.stringify(fsWatchCalls.failed.slice(0, 2))}; their handles reported ${fsEvents.length} events so far`,
    );
    for (const tr of jBusy.missedTraces.slice(0, 3)) {
      const pane = paneOfPid.get(tr.pid);
      console.log(`missed: jaggers never reported busy for ${JSON.stringify(tr)} (${pane})`);
      for (const e of readings.filter((y) => y.pane === pane && y.at >= tr.t - 300 && y.at <= tr.t + 3000)) {
        console.log(`  ${(e.at - tr.t).toFixed(1)} ms: ${e.type} ${e.status ?? ''} (${e.source ?? ''}) in ${e.before}`);
      }
      for (const e of fsEvents.filter((y) => y.name.startsWith(`${tr.pid}.json`) && y.at >= tr.t - 300 && y.at <= tr.t + 3000)) {
        console.log(`  ${(e.at - tr.t).toFixed(1)} ms: fs.watch ${e.ev} ${e.name}`);
      }
    }
  }
  // BENCH_DEBUG=1: anything this slow is worth seeing in full.
  for (const [name, m] of process.env.BENCH_DEBUG
    ? [
        ['busy', jBusy],
        ['quiet', jQuiet],
      ]
    : []) {
    for (const x of m.latencies.filter((y) => y.latency > 1000)) {
      console.log(`outlier: jaggers ${name} ${x.latency.toFixed(1)} ms for ${JSON.stringify(x.trace)} matched ${JSON.stringify(x.d)}`);
      for (const e of readings.filter((y) => y.pane === x.d.pane && y.at >= x.trace.t - 300 && y.at <= x.d.at)) {
        console.log(`  ${(e.at - x.trace.t).toFixed(1)} ms: ${e.type} ${e.status ?? ''} (${e.source ?? ''}) in ${e.before}`);
      }
      const mine = fsEvents.filter((y) => y.name.startsWith(`${x.trace.pid}.json`));
      console.log(
        `  fs.watch events: ${fsEvents.length} in all, ${mine.length} for ${x.trace.pid}.json*, at ${mine
          .slice(-12)
          .map((y) => (y.at - x.trace.t).toFixed(0))
          .join(' ')}`,
      );
      for (const e of fsEvents.filter((y) => y.name.startsWith(`${x.trace.pid}.json`) && y.at >= x.trace.t - 300 && y.at <= x.d.at)) {
        console.log(`  ${(e.at - x.trace.t).toFixed(1)} ms: fs.watch ${e.ev} ${e.name}`);
      }
    }
  }
  const series = {
    'busy/jaggers': { ...summary(lat(jBusy)), missed: jBusy.missed },
    'busy/floor': { ...summary(lat(fBusy)), missed: fBusy.missed },
    'busy/poller': { ...summary(lat(pBusy)), missed: pBusy.missed },
    'quiet/jaggers': { ...summary(lat(jQuiet)), missed: jQuiet.missed },
    'quiet/floor': { ...summary(lat(fQuiet)), missed: fQuiet.missed },
    'quiet/poller': { ...summary(lat(pQuiet)), missed: pQuiet.missed },
    'all/jaggers': summary([...lat(jBusy), ...lat(jQuiet)]),
    'all/floor': summary([...lat(fBusy), ...lat(fQuiet)]),
    'all/poller': summary([...lat(pBusy), ...lat(pQuiet)]),
    'done/jaggers': { ...summary(lat(jDone)), missed: jDone.missed },
    'done-since/jaggers': summary(lat(jDoneSince)),
    'gap-busy/jaggers-floor': paired(jBusy, fBusy),
    'gap-quiet/jaggers-floor': paired(jQuiet, fQuiet),
  };
  const statusChanges = during(changes).filter((c) => c.at <= phaseEnd).length;
  // A capture that lands in the middle of a full-screen redraw can see a torn frame (the spinner
  // line not drawn yet, an older `Worked for` line at the bottom). Count quiet readings made while the
  // agent's own trace still said busy.
  const falseQuiet = (events, quiet) => {
    let count = 0;
    for (const e of during(events)) {
      if (!quiet.includes(e.state)) continue;
      const pid = [...paneOfPid].find(([, pane]) => pane === e.pane)?.[0];
      const before = traces.filter((x) => x.pid === pid && x.t <= e.at).at(-1);
      if (before?.state === 'busy') count++;
    }
    return count;
  };
  const phaseCalls = hookCalls.filter((c) => c.at >= phaseStart && c.at <= phaseEnd);
  const result = {
    n,
    turns,
    signals: opts.signals,
    hooks: hooked
      ? {
          calls: phaseCalls.length,
          byEvent: Object.fromEntries(['UserPromptSubmit', 'Stop'].map((ev) => [ev, phaseCalls.filter((c) => c.event === ev).length])),
          skipped: phaseCalls
            .filter((c) => c.skipped)
            .map((c) => `${c.event}: ${c.skipped}`)
            .slice(0, 5),
          spoolSkips: hookSkips.slice(0, 5),
          // From the bridge's start (the ns in its file's name) to the watcher applying the call.
          lag: summary(phaseCalls.filter((c) => !c.skipped && !c.stale).map((c) => c.lagMs)),
        }
      : undefined,
    traced: traces.length,
    timeouts,
    hookWarnings,
    hooksBack,
    phaseSeconds: (phaseEnd - phaseStart) / 1000,
    series,
    breakdownBusy: breakdown(jBusy),
    breakdownQuiet: breakdown(jQuiet),
    captures,
    captureReasons,
    fileLag: summary(fileLag),
    // jaggers' own part: from the agent's state-file write to the state being known (busy and quiet).
    afterFile: summary(
      [...jBusy.latencies, ...jQuiet.latencies]
        .map((m) => {
          const f = fileTraces.find((x) => x.pid === m.trace.pid && x.state === m.trace.state && x.t >= m.trace.t);
          return f ? m.d.at - f.t : NaN;
        })
        .filter(Number.isFinite),
    ),
    loopDelayMs: { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
    ownChunks: ownChunks - ownChunksBefore,
    commands,
    statusChanges,
    floorChunks: floorOut.chunks,
    flagFixes,
    falseQuiet: {
      jaggers: falseQuiet(machine, ['settling']),
      poller: falseQuiet(pollerOut.events, ['done', 'idle']),
      floor: falseQuiet(floorOut.events, ['idle']),
    },
    phaseCpu,
    outputBytes: opts.alone ? undefined : floorOut.bytes - floorBytesBefore,
    settleExtra: summary(settleExtra),
    settleRestarts: summary(restarts),
    captureRoundTrip: summary(phaseCaptures.map((c) => c.replied - c.sent)),
    captureQueueDepth: summary(phaseCaptures.map((c) => c.depth)),
    polls: pollerOut.polls,
    forks: {
      spawnedByThisProcess: spawnsDuring.length,
      spawnedFiles: [...new Set(spawnsDuring.map((s) => s.file))],
      systemWide: forksDuring,
      childrenBefore: childrenBefore.map((p) => `${p.pid}:${p.comm}`),
      childrenAfter: childrenAfter.map((p) => `${p.pid}:${p.comm}`),
      serverChildrenBefore,
      serverChildrenAfter,
      controlClientPids: [client.pid, ...(cmd === client ? [] : [cmd.pid]), floorReady.pid, pollerReady.pid].filter(Boolean),
    },
  };

  // ---- idle CPU, with the largest N only: first the watcher alone, then with the poller running.
  if (n === Math.max(...opts.ns)) {
    poller.worker.postMessage({ type: 'pause' });
    await sleep(1500);
    const measure = async (label) => {
      const cpu0 = process.cpuUsage();
      const srv0 = await procStat(serverPid);
      const cap0 = watcher.captures;
      const floor0 = (await floor.request({ type: 'collect' }, 'events')).chunks;
      const t0 = now();
      await sleep(opts.idleS * 1000);
      const wall = now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const srv1 = await procStat(serverPid);
      const floor1 = (await floor.request({ type: 'collect' }, 'events')).chunks;
      return {
        label,
        seconds: wall / 1000,
        processPct: ((cpu.user + cpu.system) / 1000 / wall) * 100,
        tmuxServerPct: srv0 && srv1 ? (((srv1.ticks - srv0.ticks) * 1000) / ctx.clkTck / wall) * 100 : NaN,
        captures: watcher.captures - cap0,
        outputChunks: floor1 - floor0,
      };
    };
    const watcherOnly = await measure('watcher only');
    poller.worker.postMessage({ type: 'start' });
    await sleep(opts.pollMs);
    const withPoller = await measure(`watcher + ${opts.pollMs} ms poller`);
    poller.worker.postMessage({ type: 'pause' });
    result.idleCpu = [watcherOnly, withPoller];
  }

  await floor.request({ type: 'stop' }, 'stopped').catch(() => {});
  await poller.request({ type: 'stop' }, 'stopped').catch(() => {});
  spool?.stop();
  watcher.stop();
  if (cmd !== client) await cmd.close().catch(() => {});
  await client.close().catch(() => {});
  await killServer(server);
  return result;
}

/** Wait until every connection is attached, then set `no-output` where expected; returns the repairs. */
async function ensureOutputFlags(client, expected) {
  const fixes = [];
  const want = expected.filter(([pid]) => pid !== undefined);
  for (let attempt = 0; attempt < 100; attempt++) {
    const lines = await client.runOk(['list-clients', '-F', '#{client_pid} #{client_name} #{client_flags}']);
    const listed = new Map(
      lines.map((l) => l.split(' ')).map(([pid, name, flags]) => [Number(pid), { name, noOutput: /(^|,)no-output(,|$)/.test(flags ?? '') }]),
    );
    if (want.some(([pid]) => !listed.has(pid))) {
      await sleep(20); // not attached yet
      continue;
    }
    let changed = false;
    for (const [pid, noOutput, role] of want) {
      const c = listed.get(pid);
      if (c.noOutput === noOutput) continue;
      fixes.push(`${role} connection (pid ${pid}) had no-output ${c.noOutput ? 'on' : 'off'}`);
      await client.runOk(['refresh-client', '-t', c.name, '-f', noOutput ? 'no-output' : '!no-output']);
      changed = true;
    }
    if (!changed) return fixes;
  }
  throw new Error(`tmux clients did not attach or keep their flags: ${JSON.stringify(expected)}`);
}

async function killServer(server) {
  await execa(server.bin, ['-L', server.socket.name, '-f', '/dev/null', 'kill-server'], {
    env: server.env,
    extendEnv: false,
    reject: false,
  });
}

// ---------------------------------------------------------------------------------------------
// Output.

function printResult(r, settleMs, opts) {
  const out = [];
  out.push('');
  out.push(
    `== N=${r.n} agents${opts.active > 0 ? ` (at most ${opts.active} in a turn at once)` : ''}: ${r.turns} turns each, think ${opts.thinkMs} ms, ${r.traced} traced state changes in ${r.phaseSeconds.toFixed(1)} s` +
      (r.timeouts ? `, ${r.timeouts} turns timed out` : ''),
  );
  if (r.hookWarnings?.length)
    out.push(
      `hooks warned of on ${r.hookWarnings.length} panes (${r.hookWarnings
        .map((w) => w.agent)
        .slice(0, 5)
        .join(', ')}; the screen decides them until their hooks call again, and ${r.hooksBack.length} did): ${r.hookWarnings[0].warning}`,
    );
  out.push('latency in ms from the agent drawing the new screen (its trace line) to the state being known:');
  out.push(
    `${'change'.padEnd(11)}${'method'.padEnd(46)}${'n'.padStart(5)}${'p50'.padStart(8)}${'p95'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}${'min'.padStart(8)}${'missed'.padStart(8)}`,
  );
  const label = {
    'busy/jaggers': 'jaggers PaneWatcher (onChange)',
    'busy/floor': 'floor (%output on bare client)',
    'busy/poller': `poller (capture every ${opts.pollMs} ms)`,
    'quiet/jaggers': 'jaggers (settling starts)',
    'quiet/floor': 'floor (%output on bare client)',
    'quiet/poller': `poller (capture every ${opts.pollMs} ms)`,
    'all/jaggers': 'jaggers (busy + settling starts)',
    'all/floor': 'floor',
    'all/poller': 'poller',
    'done/jaggers': `jaggers done (onChange, incl. ${settleMs} ms settle)`,
    'done-since/jaggers': 'jaggers done, its `since` field',
    'gap-busy/jaggers-floor': 'jaggers - floor, same change',
    'gap-quiet/jaggers-floor': 'jaggers - floor, same change',
  };
  for (const [key, s] of Object.entries(r.series)) {
    const change = key.split('/')[0].replace('gap-', 'gap ');
    out.push(
      `${change.padEnd(11)}${label[key].padEnd(46)}${String(s.n).padStart(5)}${f1(s.p50).padStart(8)}${f1(s.p95).padStart(8)}${f1(s.p99).padStart(8)}${f1(s.max).padStart(8)}${f1(s.min).padStart(8)}${(s.missed === undefined ? '' : String(s.missed)).padStart(8)}`,
    );
  }
  for (const [name, b] of [
    ['busy', r.breakdownBusy],
    ['quiet', r.breakdownQuiet],
  ]) {
    out.push(
      `where jaggers' ${name} time goes (p50 / p95 / p99 ms): floor arrival -> same byte on the watcher's connection ${f1(b.ownMinusFloor.p50)} / ${f1(b.ownMinusFloor.p95)} / ${f1(b.ownMinusFloor.p99)}; ` +
        `-> the reading that decided (capture reply or state-file event) ${f1(b.captureAfterOwn.p50)} / ${f1(b.captureAfterOwn.p95)} / ${f1(b.captureAfterOwn.p99)}; -> listeners told ${f1(b.notifyAfterCapture.p50)} / ${f1(b.notifyAfterCapture.p95)} / ${f1(b.notifyAfterCapture.p99)}`,
    );
  }
  out.push(
    `work: ${r.captures} capture-pane by the watcher (${(r.captures / r.phaseSeconds).toFixed(0)}/s, ${(r.captures / Math.max(1, r.statusChanges)).toFixed(1)} per status change), ${r.commands} commands on its connection, ${r.floorChunks} %output chunks to the floor and ${r.ownChunks} to the watcher, ${r.polls} poller captures`,
  );
  out.push(
    `the agent's state file was written after its screen by p50 ${f1(r.fileLag.p50)} / p95 ${f1(r.fileLag.p95)} / p99 ${f1(r.fileLag.p99)} / max ${f1(r.fileLag.max)} ms (its own trace; a reading of the file cannot be earlier); jaggers knew the state after that write by p50 ${f1(r.afterFile.p50)} / p95 ${f1(r.afterFile.p95)} / p99 ${f1(r.afterFile.p99)} ms (below 0: the screen told first)`,
  );
  out.push(
    `the watcher's event loop (main thread) was late by p50 ${f1(r.loopDelayMs.p50)} / p99 ${f1(r.loopDelayMs.p99)} / max ${f1(r.loopDelayMs.max)} ms during the phase (perf_hooks.monitorEventLoopDelay)`,
  );
  if (r.hooks) {
    const h = r.hooks;
    out.push(
      `hooks: ${h.calls} bridge calls in the phase (${Object.entries(h.byEvent)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}); bridge start -> watcher applied it p50 ${f1(h.lag.p50)} / p95 ${f1(h.lag.p95)} / p99 ${f1(h.lag.p99)} / max ${f1(h.lag.max)} ms` +
        (h.skipped.length ? `; SKIPPED: ${h.skipped.join('; ')}` : '') +
        (h.spoolSkips.length ? `; spool skipped: ${h.spoolSkips.join('; ')}` : ''),
    );
  }
  if (Object.keys(r.captureReasons).length) out.push(`captures by what asked for them: ${JSON.stringify(r.captureReasons)}`);
  out.push(
    `quiet readings while the agent was still busy (torn frames): jaggers ${r.falseQuiet.jaggers} entries into settling (the ${settleMs} ms settle hides them), poller ${r.falseQuiet.poller}, floor ${r.falseQuiet.floor}`,
  );
  out.push(
    `done came later than settling start + ${settleMs} ms by p50 ${f1(r.settleExtra.p50)} / p95 ${f1(r.settleExtra.p95)} / p99 ${f1(r.settleExtra.p99)} ms;` +
      ` settle timer restarted by a new quiet reading p50 ${r.settleRestarts.p50} / p95 ${r.settleRestarts.p95} / max ${r.settleRestarts.max} times per turn`,
  );
  const rt = r.captureRoundTrip;
  const qd = r.captureQueueDepth;
  out.push(
    `watcher's capture-pane round trips (ms) p50 ${f1(rt.p50)} p95 ${f1(rt.p95)} p99 ${f1(rt.p99)} max ${f1(rt.max)}; commands already waiting on the connection when one was sent: p50 ${qd.p50} p95 ${qd.p95} max ${qd.max}`,
  );
  const pc = r.phaseCpu;
  out.push(
    `CPU during the phase (% of one core; the machine has ${os.cpus().length}): this process ${pc.processPct.toFixed(0)}%, tmux server ${pc.tmuxServerPct.toFixed(0)}%, fake agents ${pc.agentsPct.toFixed(0)}%; load average ${pc.loadavg.toFixed(1)}; some task waiting for a CPU ${pc.cpuStallPct.toFixed(0)}% of the time (/proc/pressure/cpu); agents printed ${r.outputBytes === undefined ? '?' : (r.outputBytes / 1e6 / r.phaseSeconds).toFixed(2)} MB/s`,
  );
  if (r.flagFixes.length) {
    out.push(`REPAIRED before the phase: ${r.flagFixes.join('; ')} (a refresh-client sent before tmux attached its client lands on another client)`);
  }
  const fk = r.forks;
  out.push(
    `forks: ${fk.spawnedByThisProcess} processes started by this process during the phase (ChildProcess#spawn and *Sync hooked)` +
      ` for ${r.statusChanges} status changes = ${(fk.spawnedByThisProcess / Math.max(1, r.statusChanges)).toFixed(3)} per status change` +
      (fk.spawnedFiles.length ? ` [${fk.spawnedFiles.join(', ')}]` : ''),
  );
  out.push(
    `       children of this process before [${fk.childrenBefore.join(' ')}] after [${fk.childrenAfter.join(' ')}] (control clients ${fk.controlClientPids.join(', ')});` +
      ` tmux server children ${fk.serverChildrenBefore} -> ${fk.serverChildrenAfter}; system-wide forks in /proc/stat during the phase: ${fk.systemWide} (every user of the machine)`,
  );
  for (const c of r.idleCpu ?? []) {
    out.push(
      `idle CPU with ${r.n} idle agents, ${c.label}, ${c.seconds.toFixed(1)} s: this process ${c.processPct.toFixed(2)}% of one core, tmux server ${c.tmuxServerPct.toFixed(2)}%` +
        ` (${c.captures} watcher captures, ${c.outputChunks} %output chunks in the window)`,
    );
  }
  console.log(out.join('\n'));
}

// ---------------------------------------------------------------------------------------------

const SIGNAL_SETS = ['state-file', 'hooks', 'hooks+state-file', 'screen'];

function parseOptions(argv) {
  const o = {
    ns: [1, 10, 50],
    turns: [40, 12, 6],
    thinkMs: 1000,
    idleS: 10,
    pollMs: 500,
    json: null,
    alone: false,
    oneConnection: false,
    freshHome: false,
    signals: 'state-file',
    active: 0,
    only: null,
    nice: DEFAULT_AGENT_NICE,
  };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--ns':
        o.ns = v.split(',').map(Number);
        i++;
        break;
      case '--turns':
        o.turns = v.split(',').map(Number);
        i++;
        break;
      case '--think-ms':
        o.thinkMs = Number(v);
        i++;
        break;
      case '--idle-s':
        o.idleS = Number(v);
        i++;
        break;
      case '--poll-ms':
        o.pollMs = Number(v);
        i++;
        break;
      case '--json':
        o.json = v;
        i++;
        break;
      case '--only':
        if (v !== 'poller' && v !== 'none') throw new Error(`--only takes poller or none, not ${v}`);
        o.only = v;
        i++;
        break;
      case '--active':
        o.active = Number(v);
        i++;
        break;
      case '--alone':
        o.alone = true;
        break;
      case '--one-connection':
        o.oneConnection = true;
        break;
      case '--no-output-busy':
        o.noOutputBusy = true;
        break;
      case '--screen-only':
        o.signals = 'screen';
        break;
      case '--signals':
        if (!SIGNAL_SETS.includes(v)) throw new Error(`--signals takes ${SIGNAL_SETS.join(', ')}, not ${v}`);
        o.signals = v;
        i++;
        break;
      case '--fresh-home':
        o.freshHome = true;
        break;
      case '--nice':
        if (!/^\d+$/.test(v ?? '') || Number(v) > 19) throw new Error(`--nice takes 0 to 19, not ${v}`);
        o.nice = Number(v);
        i++;
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return o;
}

const fsEvents = []; // BENCH_DEBUG=1: every fs.watch event the watcher's state-file watches got
const fsWatchCalls = { ok: 0, failed: [] };

function hookFsWatch() {
  const require = createRequire(import.meta.url);
  const fs = require('node:fs');
  const orig = fs.watch;
  fs.watch = function (p, ...rest) {
    const listener = rest.find((x) => typeof x === 'function');
    const opts = rest.filter((x) => typeof x !== 'function');
    try {
      const w = orig.call(this, p, ...opts, (ev, name) => {
        fsEvents.push({ at: now(), ev, name: String(name) });
        listener?.(ev, name);
      });
      fsWatchCalls.ok++;
      return w;
    } catch (e) {
      fsWatchCalls.failed.push(`${p}: ${e.code ?? e.message}`);
      throw e;
    }
  };
  syncBuiltinESMExports();
}

async function main() {
  const spawnLog = hookSpawns();
  if (process.env.BENCH_DEBUG) hookFsWatch();
  const opts = parseOptions(process.argv.slice(2));
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'jg-bench-detect-'));
  const tmuxTmp = path.join(tmp, 't');
  const home = path.join(tmp, 'home');
  await mkdir(tmuxTmp);
  await mkdir(home);
  const env = tmuxEnv({ ...process.env, TMUX_TMPDIR: tmuxTmp });
  // One server (and socket) per N: reusing a socket right after kill-server can reach the old server
  // while it is still shutting down ("server exited unexpectedly").
  const base = `jg-bench-detect-${process.pid}-${randomBytes(4).toString('hex')}`;
  const servers = [];
  const newServer = (n) => {
    const server = { socket: { name: `${base}-n${n}` }, configFile: null, bin: 'tmux', env };
    servers.push(server);
    return server;
  };
  const ctx = { newServer, tmp, home, root, opts, spawnLog, clients: [], workers: [], clkTck: 100 };

  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const w of ctx.workers) await w.worker.terminate().catch(() => {});
    for (const c of ctx.clients) await c.close().catch(() => {});
    for (const server of servers) await killServer(server).catch(() => {});
    await rm(tmp, { recursive: true, force: true });
  };
  // A rejected tmux command nobody awaited (e.g. the tmux server died) still tears everything down.
  process.on('unhandledRejection', (e) => {
    console.error('bench-detect: unhandled rejection:', e);
    void cleanup().finally(() => process.exit(1));
  });
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      void cleanup().finally(() => process.exit(130));
    });
  }

  try {
    ctx.clkTck = Number((await execa('getconf', ['CLK_TCK'])).stdout) || 100;
    const tmuxVersion = (await execa('tmux', ['-V'], { env, extendEnv: false })).stdout;
    const git = await execa('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { reject: false });
    const dirty = await execa('git', ['-C', root, 'status', '--porcelain', '--', 'src', 'machines', 'profiles'], { reject: false });
    const build = `commit ${git.stdout || '?'}${dirty.stdout ? ` + ${dirty.stdout.split('\n').length} uncommitted files under src/ machines/ profiles/` : ''}`;
    ctx.profile = (await loadProfile('demo', path.join(tmp, '.jaggers'))).profile;
    // --signals: the demo profile with only the signals of the set (screen rules always).
    const withFile = opts.signals.includes('state-file');
    const withHooks = opts.signals.includes('hooks');
    early = withHooks;
    ctx.profile = {
      ...ctx.profile,
      detect: {
        ...ctx.profile.detect,
        stateFile: withFile ? ctx.profile.detect.stateFile : undefined,
        hooks: withHooks ? ctx.profile.detect.hooks : undefined,
      },
    };
    // --no-output-busy: no spinner text that says busy by itself either (as gemini's, qwen's and codex's profiles).
    if (opts.noOutputBusy) ctx.profile = { ...ctx.profile, detect: { ...ctx.profile.detect, outputBusy: [] } };
    const settleMs = ctx.profile.detect.settleMs;
    console.log(
      `bench-detect: ${tmuxVersion}, node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; jaggers ${build}`,
    );
    console.log(
      `demo profile, --signals ${opts.signals} (${[withHooks ? 'hooks (fake-agent kit, bin/jaggers-hook, HookSpool)' : null, withFile ? 'state file' : null, 'screen'].filter(Boolean).join(' + ')}): settleMs ${settleMs}; fake agent --think-ms ${opts.thinkMs}; prompts typed with send-keys -l, Enter 150 ms later; each agent on its own loop with random 100-600 ms gaps`,
    );
    console.log(
      opts.freshHome
        ? 'agents start with a fresh HOME without ~/.fake-agent/state (--fresh-home)'
        : 'agents start with ~/.fake-agent/state already present (as after an earlier run of the CLI)',
    );
    console.log(
      opts.nice > 0
        ? `agents run at nice ${opts.nice} (jaggers' default: nice -n ${opts.nice}, and their pane's session group where the kernel groups by session); this process at ${os.getPriority()}`
        : "agents run at this process's priority (--nice 0)",
    );
    console.log(
      opts.alone
        ? 'no floor and no poller (--alone)'
        : "floor and poller run in worker threads (own event loop, own control connection; the poller's with -f no-output)",
    );
    console.log(
      opts.oneConnection
        ? 'the watcher hears %output and sends capture-pane (and the prompts) on ONE control connection (--one-connection)'
        : 'the watcher hears %output on one control connection and sends capture-pane (and the prompts) on a second one with -f no-output, as the supervisor does',
    );
    const results = [];
    for (const [i, n] of opts.ns.entries()) {
      const r = await runN(ctx, n, opts.turns[i] ?? opts.turns[opts.turns.length - 1]);
      ctx.workers = [];
      ctx.clients = [];
      printResult(r, settleMs, opts);
      results.push(r);
    }
    console.log(
      `\nload average at the end ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    if (opts.json) {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(opts.json, JSON.stringify({ tmuxVersion, build, node: process.version, cores: os.cpus().length, settleMs, opts, results }, null, 1));
    }
  } finally {
    await cleanup();
  }
}

// Last, so every constant above is initialised before the top-level await runs.
if (isMainThread) {
  await main();
} else if (workerData.role === 'floor') {
  await floorWorker(workerData);
} else {
  await pollerWorker(workerData);
}
