#!/usr/bin/env node
// The per-agent queues under load (issue 25). Prints figures beside references from the same run;
// asserts nothing.
//
// 1000 work items (jobs and messages, half each, in a random order) to 10 fake agents, with 20 handoffs
// among them (each from one agent to another), all posted at once through the API. Then:
// - every item ended (done / delivered): counted from the journal;
// - the runner's gap: from an agent becoming ready (its `idle`/`done` state event, when the turn before
//   ended) to its next item going in (the item's `starting` record, or a message's `claimed` record),
//   for each item that was already waiting at that moment: p50, p99, max. The reference: the same gap
//   to the prompt's arrival at the agent (its FAKE_AGENT_PROMPTS log), which adds the typing and the
//   profile's paste settle (150 ms);
// - the whole run: items per second and the supervisor's CPU per item, beside the same items to one
//   agent alone (1/10 of them) times 10 (perfect scaling).
//
// Usage: npm run build && node scripts/bench-queue.mjs [items=1000] [handoffs=20] [think=100]
// Everything runs in a private world: temp project and HOME, own TMUX_TMPDIR and socket, TMUX and
// TMUX_PANE removed; the tmux server is killed by its socket at the end, also on error or Ctrl-C.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../dist/src/api/client.js';
import { benchWorld, worldEnd, cpuPressure, cpuTicks, load, pct, ticks } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repo, 'bin', 'jaggers.js');
const [ITEMS = 1000, HANDOFFS = 20, THINK_MS = 100] = process.argv.slice(2).map(Number);
const AGENTS = 10;

const ms = (x) => `${x.toFixed(1)} ms`.padStart(10);
const hex = (n) => randomBytes(n).toString('hex');

const { base, root, dirs, socket, env } = await benchWorld('queue', ['prompts']);
const prompts = dirs.prompts;
const jaggers = (...args) => spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });
const api = new ApiClient({ socketPath: path.join(root, '.jaggers', 'jaggers.sock') });

const events = new AbortController();
const world = worldEnd({ base, socket, env }, () => events.abort());

/** Every line of the journal, parsed. */
const journal = async () =>
  (await readFile(path.join(root, '.jaggers', 'events.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** Until every item in `ids` ended (a job done/failed/cancelled, a message delivered), read from the journal on each event. */
const ended = async (ids, timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = new Set(ids);
    for (const e of await journal()) {
      if (e.type === 'job-state' && ['done', 'failed', 'cancelled'].includes(e.state)) open.delete(e.jobId);
      if (e.type === 'message-delivered') open.delete(e.messageId);
    }
    if (open.size === 0) return;
    if (Date.now() > deadline) throw new Error(`${open.size} items still open after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
};

/** One burst: `n` items (and `handoffs` handoffs) posted at once to `targets`; figures from the journal and the stream. */
async function burst(targets, n, handoffs, states) {
  const { pid } = await api.call('GET', '/v1/health');
  const plan = Array.from({ length: n }, (_, i) => ({
    kind: Math.random() < 0.5 ? 'job' : 'message',
    to: targets[Math.floor(Math.random() * targets.length)],
    i,
  }));
  // The handoffs, spread through the burst: each from one agent to another.
  for (let h = 0; h < handoffs; h++) {
    const to = targets[h % targets.length];
    const from = targets[(h + 1) % targets.length];
    plan.splice(Math.floor(Math.random() * plan.length), 0, { kind: 'handoff', to, from: targets.length > 1 ? from : undefined, i: `h${h}` });
  }
  const ids = [];
  const cpu0 = cpuTicks(pid);
  const t0 = performance.now();
  const wall0 = Date.now();
  await Promise.all(
    plan.map(async (p) => {
      const text = `${p.kind} ${p.i} for ${p.to}: say ok`;
      if (p.kind === 'message') {
        const id = `m-${hex(6)}`;
        ids.push(id);
        await api.call('POST', '/v1/messages', { id, to: p.to, text });
      } else if (p.kind === 'job') {
        const id = `j-${hex(6)}`;
        ids.push(id);
        await api.call('POST', '/v1/jobs', { id, target: p.to, text });
      } else {
        const id = `j-${hex(6)}`;
        ids.push(id);
        await api.call('POST', '/v1/handoffs', { id, agent: p.to, message: text, wait: false, timeout: 3600, ...(p.from ? { from: p.from } : {}) });
      }
    }),
  );
  const stored = performance.now() - t0;
  await ended(ids, 1_800_000);
  const wall = performance.now() - t0;
  const cpuMs = ((cpuTicks(pid) - cpu0) / ticks) * 1000;
  // From the journal: per terminal, each item's place, when it was recorded, when it went in and when it ended.
  const lines = await journal();
  const mine = new Set(ids);
  const items = new Map();
  const terminalOf = new Map();
  for (const e of lines) {
    const id = e.jobId ?? e.messageId;
    if (!mine.has(id)) continue;
    const at = Date.parse(e.ts);
    if (e.type === 'job-created') items.set(id, { id, kind: e.work ?? 'job', terminal: e.terminalId, agent: e.target, created: at, start: null, end: null });
    if (e.type === 'message-created') items.set(id, { id, kind: 'message', terminal: e.to, agent: e.toAgent, created: at, start: null, end: null });
    if (e.type === 'job-state' && e.state === 'starting') items.get(id).start ??= at;
    if (e.type === 'message-claimed') items.get(id).start ??= at;
    if (e.type === 'job-state' && ['done', 'failed', 'cancelled'].includes(e.state)) items.get(id).end = at;
    if (e.type === 'message-delivered') items.get(id).end = at;
  }
  for (const i of items.values()) terminalOf.set(i.terminal, i.agent);
  // When each prompt reached its agent (the fake agents' own logs).
  const arrivals = new Map();
  for (const f of await readdir(prompts)) {
    for (const l of (await readFile(path.join(prompts, f), 'utf8')).split('\n').filter(Boolean)) {
      const p = JSON.parse(l);
      const ref = /(m-[0-9a-f]+)\.md|handover\/(turn_\d+_[0-9a-f]+)\.md/.exec(p.prompt);
      if (ref) arrivals.set(ref[1] ?? ref[2], p.t);
    }
  }
  const artifactOf = new Map();
  for (const e of lines) if (e.type === 'job-state' && e.artifact && mine.has(e.jobId)) artifactOf.set(e.jobId, /turn_\d+_[0-9a-f]+/.exec(e.artifact)?.[0]);
  const gaps = [];
  const arrivalGaps = [];
  for (const [terminal, agent] of terminalOf) {
    const list = [...items.values()].filter((i) => i.terminal === terminal && i.start !== null).sort((a, b) => a.start - b.start);
    const ready = states.filter((s) => s.agent === agent && (s.state === 'idle' || s.state === 'done')).map((s) => s.at);
    for (let k = 1; k < list.length; k++) {
      const prev = list[k - 1];
      const cur = list[k];
      // Only an item that was waiting when the one before it ended measures the runner.
      if (cur.created > (prev.end ?? 0)) continue;
      const readyAt = ready.filter((t) => t > prev.start && t <= cur.start + 5).at(-1);
      if (readyAt === undefined) continue;
      gaps.push(cur.start - readyAt);
      const arrived = arrivals.get(cur.kind === 'message' ? cur.id : artifactOf.get(cur.id));
      if (arrived !== undefined) arrivalGaps.push(arrived - readyAt);
    }
  }
  const done = [...items.values()].filter((i) => i.end !== null).length;
  const failed = lines.filter((e) => mine.has(e.jobId) && e.type === 'job-state' && e.state !== 'done' && ['failed', 'cancelled'].includes(e.state));
  return { n: ids.length, stored, wall, wall0, rate: ids.length / (wall / 1000), cpuMs, gaps, arrivalGaps, done, failed };
}

try {
  const demo = JSON.parse(await readFile(path.join(repo, 'profiles', 'demo.json'), 'utf8'));
  await mkdir(path.join(root, '.jaggers', 'profiles'), { recursive: true });
  await writeFile(
    path.join(root, '.jaggers', 'profiles', 'small.json'),
    JSON.stringify({ ...demo, name: 'small', args: ['--think-ms', String(THINK_MS), '--replies', 'receipt'] }),
  );
  const tees = Array.from({ length: AGENTS }, (_, i) => `t${i}`);
  const solo = ['solo'];
  const agents = [...tees, ...solo].map((name) => ({ name, profile: 'small', env: { FAKE_AGENT_PROMPTS: path.join(prompts, `${name}.jsonl`) } }));
  await writeFile(path.join(root, 'jaggers.json'), JSON.stringify({ agents }));
  let commit = '?';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo }).toString().trim();
  } catch {
    // not a git checkout
  }
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${execFileSync('tmux', ['-V']).toString().trim()}`);
  console.log(`commit ${commit}; load average ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
  world.started();
  const up = jaggers('up');
  if (up.status !== 0) throw new Error(`up failed: ${up.stderr}`);
  const states = [];
  void api
    .events('/v1/events?types=state', (e) => states.push({ agent: e.data.agent, state: e.data.state, at: Date.parse(e.data.since) }), { signal: events.signal })
    .catch((e) => console.error(`event stream: ${e.message}`));

  const alone = await burst(solo, Math.round(ITEMS / AGENTS), Math.round(HANDOFFS / AGENTS), states);
  const all = await burst(tees, ITEMS, HANDOFFS, states);
  const row = (label, xs) => `  ${label.padEnd(58)} p50 ${ms(pct(xs, 50))}  p99 ${ms(pct(xs, 99))}  max ${ms(Math.max(...xs))}  (${xs.length})`;
  console.log(
    `\n${ITEMS} items (jobs and messages) and ${HANDOFFS} handoffs to ${AGENTS} agents, posted at once (think ${THINK_MS} ms, paste settle ${demo.delivery.settleMs} ms)`,
  );
  console.log(
    `  ended: ${all.done} of ${all.n} (failed or cancelled: ${all.failed.length}); all posted in ${(all.stored / 1000).toFixed(2)} s; last ended ${(all.wall / 1000).toFixed(1)} s`,
  );
  console.log(row('agent ready -> its next item going in (the runner)', all.gaps));
  console.log(row('reference: agent ready -> the prompt at the agent', all.arrivalGaps));
  console.log(
    `  throughput ${all.rate.toFixed(2)} items/s; supervisor CPU ${(all.cpuMs / all.n).toFixed(2)} ms/item (${((all.cpuMs / all.wall) * 100).toFixed(0)} % of a core)`,
  );
  console.log(
    `  reference: 1 agent, ${alone.n} items: ${alone.rate.toFixed(2)} items/s, x ${AGENTS} = ${(alone.rate * AGENTS).toFixed(2)} (perfect scaling); ` +
      `${AGENTS} agents reach ${((all.rate / (alone.rate * AGENTS)) * 100).toFixed(0)} % of it; CPU ${(alone.cpuMs / alone.n).toFixed(2)} ms/item alone`,
  );
  console.log(`\nload average at the end ${load()}; cpu pressure (some, avg10) ${cpuPressure()} %`);
} finally {
  await world.end();
}
