#!/usr/bin/env node
// Handoff overhead and payload delivery (issue 4). Prints figures; asserts nothing about timings.
//
// 1. Overhead per handoff: sequential `handoff(..., { message, wait: true })` to a fake agent that
//    thinks 0 ms, in two configurations: (a) the demo profile's settle times as shipped, (b) both
//    settle times 0. Overhead = totalMs minus the agent's own busy time, read from its trace file
//    (FAKE_AGENT_TRACE: one JSON line {t, pid, state} per drawn state change). For comparison,
//    (c) the same prompt with deliver() on a control connection kept open (no tmux -V, no new client,
//    no registry, no reply capture), and (d) how often a PaneWatcher kept across prompts misses a
//    0 ms turn. Runs slower than TIMEOUT_S count as failed and are listed; the run goes on.
// 2. Payloads of 1 KB, 100 KB and 1 MB: as handover files (`handoff --file`), and pasted straight
//    into the pane with `deliver()`; each checked to have arrived whole (sha256 the agent computed).
// 3. What single steps of a handoff cost on this machine (tmux -V, a control connection, a capture,
//    a registry update, the turn-number scan).
//
// Usage: npm run build && node scripts/bench-handoff.mjs [handoffs=30] [payloadRuns=5]
//
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed. The tmux server is killed by its socket at the end, also on error or Ctrl-C.
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { handoff } from '../dist/src/commands/handoff.js';
import { resolveContext } from '../dist/src/context.js';
import { deliverNow } from '../dist/src/delivery/deliver.js';
import { paneIO } from '../dist/src/tmux/pane-io.js';
import { makeNonce, sanitizeText } from '../dist/src/delivery/sanitize.js';
import { readTranscriptReply } from '../dist/src/clis/transcript.js';
import { waitForTurnEnd } from '../dist/src/turns/wait-end.js';
import { PaneWatcher } from '../dist/src/panes/watcher.js';
import { nextTurn, parseArtifact, writeArtifact } from '../dist/src/handover/artifact.js';
import { loadProfile } from '../dist/src/profiles/load.js';
import { Registry } from '../dist/src/sessions/registry.js';
import { capturePane, listPanes } from '../dist/src/tmux/commands.js';
import { openControl } from '../dist/src/tmux/connect.js';
import { checkTmux } from '../dist/src/tmux/version.js';

const HANDOFFS = Number(process.argv[2] ?? 30);
const PAYLOAD_RUNS = Number(process.argv[3] ?? 5);
const WARMUP = 3;
/** A handoff or delivery that takes longer than this is counted as failed (and the run goes on). */
const TIMEOUT_S = 30;
const SIZES = [
  ['1 KB', 1024],
  ['100 KB', 100 * 1024],
  ['1 MB', 1024 * 1024],
];
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha = (s) => createHash('sha256').update(s).digest('hex');
const sorted = (xs) => xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
/** Nearest-rank percentile. */
const pct = (xs, p) => {
  const s = sorted(xs);
  return s.length ? s[Math.max(0, Math.ceil(p * s.length) - 1)] : NaN;
};
const ms = (x) => (Number.isNaN(x) ? '—' : x.toFixed(0));
const row = (cells) => `| ${cells.join(' | ')} |`;

// ---------------------------------------------------------------------------------------------
// The private world.

const load = os.loadavg();
const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'jg-bench-handoff-')));
const root = path.join(base, 'project');
const home = path.join(base, 'home');
const tmuxDir = path.join(base, 'tmux');
for (const d of [root, home, tmuxDir]) await mkdir(d, { recursive: true });
const socket = `jgbench-${randomBytes(4).toString('hex')}`;
// This process uses the same world, so nothing (os.homedir(), a stray tmux call) reaches the user's.
Object.assign(process.env, { TMUX_TMPDIR: tmuxDir, HOME: home, JAGGERS_SOCKET: socket, JAGGERS_SESSION_NAME: 'bench' });
for (const k of ['TMUX', 'TMUX_PANE', 'JAGGERS_PROJECT']) delete process.env[k];
const env = { ...process.env };
const tmuxArgs = ['-L', socket, '-f', '/dev/null'];

const clients = [];
function cleanupSync() {
  try {
    execFileSync('tmux', [...tmuxArgs, 'kill-server'], { env, stdio: 'ignore' });
  } catch {
    // no server (never started, or already gone)
  }
  rmSync(base, { recursive: true, force: true });
}
process.once('SIGINT', () => {
  cleanupSync();
  process.exit(130);
});

// The demo profile with --think-ms 0 and a trace file; `zero` also sets both settle times to 0.
const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
const SHIPPED = { delivery: demo.delivery.settleMs, detect: demo.detect.settleMs };
const traceOf = (agent) => path.join(base, `trace-${agent}.jsonl`);
async function writeBenchProfile(agent, zero) {
  const profile = {
    ...demo,
    name: `bench-${agent}`,
    args: ['--think-ms', '0'],
    env: { ...demo.env, FAKE_AGENT_TRACE: traceOf(agent) },
    detect: { ...demo.detect, settleMs: zero ? 0 : demo.detect.settleMs },
    delivery: { ...demo.delivery, settleMs: zero ? 0 : demo.delivery.settleMs },
  };
  const dir = path.join(root, '.jaggers', 'profiles');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `bench-${agent}.json`), JSON.stringify(profile, null, 2));
}
const AGENTS = { shipped: false, zero: true, file: false, paste: false };
for (const [agent, zero] of Object.entries(AGENTS)) await writeBenchProfile(agent, zero);
await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents: Object.keys(AGENTS).map((name) => ({ name, profile: `bench-${name}` })) }, null, 2));

// ---------------------------------------------------------------------------------------------

/** Trace lines written since the last call, per agent. */
const traceSeen = new Map();
async function newTrace(agent) {
  let text = '';
  try {
    text = await readFile(traceOf(agent), 'utf8');
  } catch {
    return [];
  }
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const from = traceSeen.get(agent) ?? 0;
  traceSeen.set(agent, lines.length);
  return lines.slice(from);
}

/** One handoff, with the agent's busy span from its trace. */
async function timedHandoff(ctx, agent, opts) {
  await newTrace(agent);
  const start = now();
  let r;
  try {
    r = await handoff(ctx, agent, { wait: true, timeoutS: TIMEOUT_S, ...opts });
  } catch (e) {
    await newTrace(agent);
    return { failed: String(e.message).split(';')[0] };
  }
  const end = now();
  const trace = await newTrace(agent);
  const busy = trace.find((l) => l.state === 'busy');
  const idle = busy && trace.find((l) => l.state === 'idle' && l.t >= busy.t);
  return {
    ...r.timings,
    deliveryMs: r.delivery.ms,
    submits: r.delivery.submits,
    replyFrom: r.reply?.from,
    reply: r.reply?.text ?? '',
    // The fake agent answers a plain message with `answer: <message>`.
    replyOk: opts.message === undefined || (r.reply?.text ?? '').includes(`answer: ${opts.message}`),
    artifact: r.artifact,
    busyMs: idle ? idle.t - busy.t : null,
    toBusyMs: busy ? busy.t - start : null,
    afterIdleMs: idle ? end - idle.t : null,
  };
}

async function sessionTurns(agent) {
  const reg = JSON.parse(await readFile(path.join(root, '.jaggers', 'sessions.json'), 'utf8'));
  const term = Object.values(reg.terminals).find((t) => t.agent === agent);
  const s = JSON.parse(await readFile(path.join(home, '.fake-agent', 'sessions', `${term.sessionId}.json`), 'utf8'));
  return s.turns;
}

/** `size` bytes of text with multi-byte characters and shell/tmux-special characters, no control characters. */
function payload(size) {
  const line = 'The quick brown fox 日本語 🎉 é\u0301 "q" $x `y` #{pane_id} ;\n';
  const n = Math.floor(size / Buffer.byteLength(line));
  return line.repeat(n) + '.'.repeat(size - n * Buffer.byteLength(line));
}

async function timeMany(n, fn) {
  const xs = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    xs.push(performance.now() - t);
  }
  return pct(xs, 0.5);
}

async function handoverDirSize() {
  const dir = path.join(root, '.jaggers', 'handover');
  const names = await readdir(dir);
  let bytes = 0;
  for (const n of names) bytes += (await stat(path.join(dir, n))).size;
  return { files: names.length, mb: bytes / 1024 / 1024 };
}

async function main() {
  const tmuxVersion = (await execa('tmux', ['-V'])).stdout;
  const up = await execa(process.execPath, [path.join(repo, 'bin', 'jaggers.js'), 'up'], { cwd: root, env, extendEnv: false, reject: false });
  if (up.exitCode !== 0) throw new Error(`jaggers up failed (${up.exitCode}):\n${up.stdout}\n${up.stderr}`);
  const ctx = await resolveContext({}, env, root);

  // 1. Overhead per handoff; the two configurations alternate, so drifting load hits both alike.
  const runs = { shipped: [], zero: [] };
  const warmupFailures = [];
  for (let i = 0; i < WARMUP + HANDOFFS; i++) {
    for (const agent of ['shipped', 'zero']) {
      const r = await timedHandoff(ctx, agent, { message: `ping ${i}`, task: `bench-${agent}` });
      if (i >= WARMUP) runs[agent].push(r);
      else if (r.failed) warmupFailures.push(`warm-up handoff to ${agent}: ${r.failed}`);
    }
  }
  const scan1 = await handoverDirSize();
  const nextTurnAfterOverhead = await timeMany(10, () => nextTurn(ctx.jaggersDir, 'bench-zero'));

  // A long-lived control connection for direct deliveries. Each prompt gets a fresh PaneWatcher, as
  // in handoff(): a watcher that stays in `done` misses a turn finished between two captures (see (d)).
  const c = await openControl(ctx.server, ctx.session);
  clients.push(c);
  const panes = {};
  for (const p of (await listPanes(c, ctx.session)).filter((x) => x.agent)) {
    const { profile } = await loadProfile(p.profile, ctx.jaggersDir);
    panes[p.agent] = { paneId: p.paneId, windowId: p.windowId, agent: p.agent, profile, pid: p.panePid };
  }
  const target = (agent) => ({ paneId: panes[agent].paneId, agent, profile: panes[agent].profile });
  /**
   * deliverNow() with a fresh watcher on the warm connection, then the wait the turn engine does: until the
   * agent's transcript holds the finished reply to this prompt (or the screen shows its end).
   */
  async function deliverAndWait(agent, text) {
    const watcher = new PaneWatcher(c);
    try {
      await watcher.start();
      watcher.watch(panes[agent]);
      const nonce = makeNonce();
      const reg = JSON.parse(await readFile(path.join(root, '.jaggers', 'sessions.json'), 'utf8'));
      const sessionId = Object.values(reg.terminals).find((t) => t.agent === agent).sessionId;
      const sent = `${text} [jg:${nonce}]`;
      const d = await deliverNow(paneIO(c), watcher, target(agent), sent, { nonce });
      const delivered = performance.now();
      if (d.kind !== 'delivered') return { d, delivered, sent, failed: `deliver: ${d.kind}` };
      try {
        await waitForTurnEnd(watcher, paneIO(c), {
          paneId: panes[agent].paneId,
          agent,
          profile: panes[agent].profile,
          nonce,
          turnsBefore: 0,
          timeoutMs: TIMEOUT_S * 1000,
          artifact: '(none)',
          readTranscript: () => readTranscriptReply('fake-agent', home, root, sessionId, nonce),
          label: 'bench',
        });
      } catch (e) {
        return { d, delivered, sent, failed: String(e.message) };
      }
      return { d, delivered, sent };
    } finally {
      watcher.stop();
    }
  }

  // (c) The same small prompt to the settle-0 agent with deliver() on the warm connection: no tmux -V,
  // no new tmux client, no handover file, no registry, no reply capture.
  runs.warm = [];
  for (let i = 0; i < WARMUP + HANDOFFS; i++) {
    await newTrace('zero');
    const start = now();
    const { d, failed } = await deliverAndWait('zero', `ping warm ${i}`);
    const end = now();
    const trace = await newTrace('zero');
    if (failed) {
      if (i >= WARMUP) runs.warm.push({ failed });
      else warmupFailures.push(`warm-up deliver() to zero: ${failed}`);
      continue;
    }
    const busy = trace.find((l) => l.state === 'busy');
    const idle = busy && trace.find((l) => l.state === 'idle' && l.t >= busy.t);
    if (i >= WARMUP) {
      runs.warm.push({
        totalMs: end - start,
        deliverMs: d.ms,
        deliveryMs: d.ms,
        replyMs: null,
        submits: d.submits,
        replyFrom: null,
        replyOk: true,
        busyMs: idle ? idle.t - busy.t : null,
        toBusyMs: busy ? busy.t - start : null,
        afterIdleMs: idle ? end - idle.t : null,
      });
    }
  }

  // (d) One watcher kept across prompts (as the supervisor keeps one): how often is a 0 ms turn missed?
  const longLived = { kinds: {}, received: 0, n: 20 };
  {
    const watcher = new PaneWatcher(c);
    await watcher.start();
    watcher.watch(panes.zero);
    const before = (await sessionTurns('zero')).length;
    for (let i = 0; i < longLived.n; i++) {
      const d = await deliverNow(paneIO(c), watcher, target('zero'), `ping long-lived ${i}`, { verifyTimeoutMs: 2000 });
      longLived.kinds[d.kind] = (longLived.kinds[d.kind] ?? 0) + 1;
    }
    watcher.stop();
    await sleep(300);
    longLived.received = (await sessionTurns('zero')).length - before;
  }

  // 2. Payloads: handover files and direct pastes, sizes interleaved.
  for (const [, size] of SIZES) await writeFile(path.join(root, `payload-${size}.txt`), payload(size));
  const pay = Object.fromEntries(SIZES.map(([name]) => [name, { file: [], paste: [], fileWhole: 0, pasteWhole: 0, submits: [] }]));
  for (let run = 0; run < PAYLOAD_RUNS; run++) {
    for (const [name, size] of SIZES) {
      const p = pay[name];
      // (i) as a handover file: the agent reads the artifact and reports its size and sha256.
      const f = await timedHandoff(ctx, 'file', { file: `payload-${size}.txt`, task: 'bench-file' });
      p.file.push(f);
      const text = await readFile(path.join(root, `payload-${size}.txt`), 'utf8');
      if (!f.failed) {
        const onDisk = await readFile(f.artifact);
        if (parseArtifact(onDisk.toString('utf8')).body === text && f.reply.includes(`(${onDisk.length} bytes, sha256:${sha(onDisk)})`)) p.fileWhole++;
      }
      // (ii) pasted into the pane: the agent's session file records the prompt's bytes and sha256.
      const before = (await sessionTurns('paste')).length;
      const t = performance.now();
      const { d, delivered, sent, failed } = await deliverAndWait('paste', text);
      if (failed) {
        p.paste.push({ failed });
        continue;
      }
      const turns = await sessionTurns('paste');
      const turn = turns.at(-1);
      const whole =
        d.kind === 'delivered' &&
        sanitizeText(sent) === sent &&
        turns.length === before + 1 &&
        turn.bytes === Buffer.byteLength(sent) &&
        turn.sha256 === sha(sent);
      if (whole) p.pasteWhole++;
      p.paste.push({ ms: d.ms, wall: delivered - t, kind: d.kind });
      p.submits.push(d.submits);
    }
  }
  const scan2 = await handoverDirSize();
  const nextTurnAfterPayloads = await timeMany(10, () => nextTurn(ctx.jaggersDir, 'bench-zero'));

  // 3. Single steps of a handoff.
  const scratch = path.join(base, 'scratch', '.jaggers');
  await mkdir(scratch, { recursive: true });
  const scratchRegistry = new Registry(scratch);
  const steps = {
    'tmux -V (checkTmux, one process)': await timeMany(20, () => checkTmux('tmux', env)),
    'openControl + close (a tmux client process)': await timeMany(20, async () => (await openControl(ctx.server, ctx.session)).close()),
    'list-panes over the open connection': await timeMany(20, () => listPanes(c, ctx.session)),
    'capture-pane over the open connection': await timeMany(20, () => capturePane(c, panes.zero.paneId)),
    'loadProfile (read + zod)': await timeMany(20, () => loadProfile('bench-zero', ctx.jaggersDir)),
    'registry.update, one event (lock, journal fsync, snapshot fsync)': await timeMany(20, (i) =>
      scratchRegistry.update(async () => ({ events: [{ type: 'task-created', taskId: `t-${i}`, workflow: 'bench' }], result: null })),
    ),
    'writeArtifact, 30 bytes (fsync file + folder)': await timeMany(20, (i) =>
      writeArtifact(
        scratch,
        {
          task: 'x',
          workflow: 'bench',
          turn: i + 1,
          sourceAgent: null,
          sourceSession: null,
          targetAgent: 'a',
          targetSession: null,
          created: new Date().toISOString(),
        },
        'hi',
      ),
    ),
    [`nextTurn after the overhead runs (${scan1.files} files, ${scan1.mb.toFixed(2)} MB)`]: nextTurnAfterOverhead,
    [`nextTurn after the payload runs (${scan2.files} files, ${scan2.mb.toFixed(1)} MB)`]: nextTurnAfterPayloads,
  };

  report({ tmuxVersion, runs, pay, steps, longLived, warmupFailures });
}

function report({ tmuxVersion, runs, pay, steps, longLived, warmupFailures }) {
  const out = [];
  out.push(
    `bench-handoff: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average at start ${load.map((x) => x.toFixed(2)).join(' ')}, ` +
      `at end ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; ${tmuxVersion}; node ${process.version}`,
  );
  out.push(`fake agent --think-ms 0; shipped demo settle times: delivery.settleMs ${SHIPPED.delivery}, detect.settleMs ${SHIPPED.detect}`);
  out.push('');
  out.push(`Overhead per handoff (${HANDOFFS} sequential handoffs per configuration after ${WARMUP} warm-up, small message), ms:`);
  out.push(
    row([
      'configuration',
      'settle waits inside totalMs',
      'total p50',
      'total p95',
      'deliverMs p50',
      'deliverMs p95',
      'replyMs p50',
      'replyMs p95',
      'agent busy p50',
      'overhead p50',
      'overhead p95',
      `failed (> ${TIMEOUT_S} s)`,
    ]),
  );
  out.push(row(Array(12).fill('---')));
  const label = { shipped: '(a) handoff, shipped settle', zero: '(b) handoff, settle 0', warm: '(c) deliver() + wait for done on a warm connection, settle 0' };
  const waits = { shipped: `${SHIPPED.delivery} + ${SHIPPED.detect} = ${SHIPPED.delivery + SHIPPED.detect}`, zero: 'none', warm: 'none' };
  const failures = [...warmupFailures];
  for (const k of ['shipped', 'zero', 'warm']) {
    const rs = runs[k].filter((r) => !r.failed);
    const failed = runs[k].filter((r) => r.failed);
    failures.push(...failed.map((r) => `${label[k]}: ${r.failed}`));
    const over = rs.map((r) => (r.busyMs === null ? null : r.totalMs - r.busyMs));
    out.push(
      row([
        label[k],
        waits[k],
        ms(
          pct(
            rs.map((r) => r.totalMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.totalMs),
            0.95,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.deliverMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.deliverMs),
            0.95,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.replyMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.replyMs),
            0.95,
          ),
        ),
        pct(
          rs.map((r) => r.busyMs),
          0.5,
        ).toFixed(1),
        ms(pct(over, 0.5)),
        ms(pct(over, 0.95)),
        String(failed.length),
      ]),
    );
  }
  out.push('');
  out.push("Where a handoff's time goes (p50, ms; agent clock vs this process's clock, both wall time):");
  out.push(
    row([
      'configuration',
      'call -> agent busy',
      'agent busy',
      'agent idle -> handoff returns',
      'delivery.ms (deliverNow)',
      'first 10 total p50',
      'last 10 total p50',
      'submits > 1',
      'reply from',
      'wrong reply',
    ]),
  );
  out.push(row(Array(10).fill('---')));
  for (const k of ['shipped', 'zero', 'warm']) {
    const rs = runs[k].filter((r) => !r.failed);
    const counts = {};
    for (const r of rs) if (r.replyFrom) counts[r.replyFrom] = (counts[r.replyFrom] ?? 0) + 1;
    const from =
      Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '(no reply)';
    out.push(
      row([
        label[k],
        ms(
          pct(
            rs.map((r) => r.toBusyMs),
            0.5,
          ),
        ),
        pct(
          rs.map((r) => r.busyMs),
          0.5,
        ).toFixed(1),
        ms(
          pct(
            rs.map((r) => r.afterIdleMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.map((r) => r.deliveryMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.slice(0, 10).map((r) => r.totalMs),
            0.5,
          ),
        ),
        ms(
          pct(
            rs.slice(-10).map((r) => r.totalMs),
            0.5,
          ),
        ),
        String(rs.filter((r) => r.submits > 1).length),
        from,
        k === 'warm' ? '—' : String(rs.filter((r) => !r.replyOk).length),
      ]),
    );
  }
  out.push('');
  out.push(
    `(d) one PaneWatcher kept across ${longLived.n} prompts to the 0 ms agent (verifyTimeoutMs 2000): deliver() results ${JSON.stringify(longLived.kinds)}; ` +
      `the agent received ${longLived.received} of them (a "timeout" here is a finished turn the watcher did not see)`,
  );
  out.push('');
  out.push(`Payload delivery, medians of ${PAYLOAD_RUNS} runs (shipped settle times), ms:`);
  out.push(
    row([
      'size',
      'handoff --file totalMs',
      'handoff --file deliverMs',
      'file arrived whole',
      'deliver() paste: to verified submission',
      'paste arrived whole',
      'paste submits',
    ]),
  );
  // "whole" counts runs that finished and whose content the agent hashed identically, out of all runs.
  out.push(row(Array(7).fill('---')));
  for (const [name] of SIZES) {
    const p = pay[name];
    const ok = (xs) => xs.filter((r) => !r.failed);
    const failedNote = (xs) => (xs.length - ok(xs).length ? ` (${xs.length - ok(xs).length} failed)` : '');
    failures.push(
      ...p.file.filter((r) => r.failed).map((r) => `handoff --file ${name}: ${r.failed}`),
      ...p.paste.filter((r) => r.failed).map((r) => `paste ${name}: ${r.failed}`),
    );
    out.push(
      row([
        name,
        ms(
          pct(
            ok(p.file).map((r) => r.totalMs),
            0.5,
          ),
        ),
        ms(
          pct(
            ok(p.file).map((r) => r.deliverMs),
            0.5,
          ),
        ),
        `${p.fileWhole}/${p.file.length}${failedNote(p.file)}`,
        ms(
          pct(
            ok(p.paste).map((r) => r.ms),
            0.5,
          ),
        ),
        `${p.pasteWhole}/${p.paste.length}${failedNote(p.paste)}`,
        [...new Set(p.submits)].join(', '),
      ]),
    );
  }
  out.push('');
  out.push('Single steps of a handoff, medians of 20 (10 for nextTurn), ms:');
  out.push(row(['step', 'ms']));
  out.push(row(['---', '---']));
  for (const [k, v] of Object.entries(steps)) out.push(row([k, v.toFixed(1)]));
  if (failures.length) out.push('', 'Failures:', ...failures.map((f) => `- ${f}`));
  console.log(out.join('\n'));
}

try {
  await main();
} finally {
  for (const c of clients) await c.close().catch(() => {});
  await execa('tmux', [...tmuxArgs, 'kill-server'], { env, extendEnv: false, reject: false });
  await rm(base, { recursive: true, force: true });
}
