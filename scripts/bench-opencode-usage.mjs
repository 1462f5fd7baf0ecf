#!/usr/bin/env node
// What reading a turn's usage from opencode's SQLite database costs the supervisor (issue 30: at most 5 ms
// a turn with a long session). The fixture's database (test/fixtures/usage/opencode-1.18.33-two-turns.db)
// is grown by SQLite itself (python3's sqlite3) to `messages` messages in its session (a prompt of 300
// bytes; an answer with two steps, each a 2 KB text part and a step-finish part); then, turn by turn, one
// more turn is added (not timed) and the session's usage read once, as the runner reads it at a turn's end
// (src/clis/opencode/usage.ts, with what it kept from the reads before). Beside it, from the same run, after
// the turns (a whole session's garbage would otherwise be collected inside the next turn's read): the same
// read of copies of the database under other names (a reader that kept nothing: the whole session), the
// last one checked against the turns' read. Prints p50 and p95 of the wall time and of the process's CPU
// time in it, the garbage collection inside the turns' reads (the turns it touched, and the CPU of the
// others), and the load average; asserts nothing. Without python3 and its sqlite3 module it says so and exits 0.
// With interleave=1 the reference read follows each turn instead (as this script did before 2026-11-26).
// Usage: npm run build && node scripts/bench-opencode-usage.mjs [messages=5000] [turns=40] [pause=50] [interleave=0]
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { opencodeSessionUsage } from '../dist/src/clis/opencode/usage.js';
import { gcWatch } from './bench-lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [MESSAGES = 5000, TURNS = 40, PAUSE = 50, INTERLEAVE = 0] = process.argv.slice(2).map(Number);
if (spawnSync('python3', ['-c', 'import sqlite3'], { stdio: 'ignore' }).status !== 0) {
  console.log('bench-opencode-usage: skipped: no python3 with its sqlite3 module here (it grows the database)');
  process.exit(0);
}
const FIX = path.join(repo, 'test/fixtures/usage/opencode-1.18.33-two-turns');
const SESSION = readFileSync(`${FIX}.session`, 'utf8').trim();
const dir = mkdtempSync(path.join(os.tmpdir(), 'jaggers-bench-opencode-'));
const db = path.join(dir, 'opencode.db');
// One python3 process keeps the database open while the bench runs, as opencode keeps its own: its
// write-ahead log lives on between turns (checkpointed by SQLite at 1,000 pages). A process per turn would
// close the last connection each time, and SQLite then checkpoints and deletes the log: every turn would
// rewrite the main file, which no session of opencode's does. Each line read is a number of turns to add.
const GROW = `
import sqlite3, sys, json
db, session = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db)
c.execute('pragma journal_mode=wal')
for line in sys.stdin:
    turns = int(line)
    t = c.execute('select max(time_created) from message').fetchone()[0]
    n = c.execute('select count(*) from message').fetchone()[0]
    for k in range(turns):
        t += 10; n += 1
        c.execute('insert into message values (?,?,?,?,?)', ('msg_u%07d' % n, session, t, t, json.dumps({'role': 'user', 'time': {'created': t}, 'text': 'x' * 300})))
        t += 10; n += 1
        a = 'msg_a%07d' % n
        c.execute('insert into message values (?,?,?,?,?)', (a, session, t, t, json.dumps({'role': 'assistant', 'modelID': 'stub-model-opencode', 'time': {'created': t, 'completed': t + 5}})))
        for s in range(2):
            c.execute('insert into part values (?,?,?,?,?,?)', ('prt_t%07d_%d' % (n, s), a, session, t, t, json.dumps({'type': 'text', 'text': 'y' * 2000})))
            c.execute('insert into part values (?,?,?,?,?,?)', ('prt_s%07d_%d' % (n, s), a, session, t, t, json.dumps({'type': 'step-finish', 'tokens': {'input': 10, 'output': 2, 'reasoning': 1, 'cache': {'read': 100, 'write': 0}}})))
    c.commit()
    print('ok', flush=True)
`;
let grower;
let lines;
const grow = async (turns) => {
  grower.stdin.write(`${turns}\n`);
  const { value } = await lines.next();
  if (value !== 'ok') throw new Error(`growing the database: ${value ?? 'python3 ended'}`);
};
const q = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const timed = (fn) => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { out, wall, cpu: (c.user + c.system) / 1000, t0 };
};
try {
  copyFileSync(`${FIX}.db`, db);
  copyFileSync(`${FIX}.db-wal`, `${db}-wal`);
  grower = spawn('python3', ['-c', GROW, db, SESSION], { stdio: ['pipe', 'pipe', 'inherit'] });
  lines = createInterface({ input: grower.stdout })[Symbol.asyncIterator]();
  await grow(Math.max(0, Math.round((MESSAGES - 4) / 2)));
  const first = timed(() => opencodeSessionUsage(db, SESSION));
  const gc = gcWatch();
  const turn = { wall: [], cpu: [] };
  const spans = [];
  const whole = { wall: [], cpu: [] };
  const add = (series, t) => ['wall', 'cpu'].forEach((k) => series[k].push(t[k]));
  let last;
  let copies = 0;
  const reference = () => {
    const copy = path.join(dir, `copy-${copies++}.db`);
    copyFileSync(db, copy);
    if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${copy}-wal`);
    const w = timed(() => opencodeSessionUsage(copy, SESSION));
    if (JSON.stringify(w.out?.byModel) !== JSON.stringify(last.byModel)) throw new Error('the read of a turn and the whole read disagree');
    add(whole, w);
    rmSync(copy, { force: true });
    rmSync(`${copy}-wal`, { force: true });
  };
  for (let i = 0; i < TURNS; i++) {
    await grow(1);
    if (PAUSE > 0) await new Promise((r) => setTimeout(r, PAUSE));
    const t = timed(() => opencodeSessionUsage(db, SESSION));
    if (!t.out) throw new Error('no usage read');
    add(turn, t);
    spans.push([t.t0, t.t0 + t.wall]);
    last = t.out;
    if (INTERLEAVE) reference();
  }
  if (!INTERLEAVE) for (let i = 0; i < Math.min(TURNS, 10); i++) reference();
  const row = (name, s) => `| ${name} | ${['wall', 'cpu'].map((k) => `${q(s[k], 0.5).toFixed(2)} | ${q(s[k], 0.95).toFixed(2)}`).join(' | ')} |`;
  console.log(
    `opencode session of ${MESSAGES} messages, ${TURNS} turns, pause ${PAUSE} ms, references ${INTERLEAVE ? 'after each turn' : 'after the turns'}; first read of the session ${first.wall.toFixed(1)} ms; load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log('| read | p50 wall ms | p95 wall ms | p50 CPU ms | p95 CPU ms |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  console.log(row("a turn's read (what was read before kept)", turn));
  await new Promise((r) => setTimeout(r, 10));
  const gcIn = spans.map(([a, b]) => gc.within(a, b));
  gc.stop();
  console.log(row('reference: the whole session read', whole));
  const clean = turn.cpu.filter((_, i) => gcIn[i] === 0);
  const hit = turn.cpu.map((c, i) => [c, gcIn[i]]).filter(([, g]) => g > 0);
  console.log(
    `garbage collection inside a turn's read: in ${hit.length} of ${TURNS} turns (CPU ms / collection ms: ${hit.map(([c, g]) => `${c.toFixed(1)}/${g.toFixed(1)}`).join(', ') || '-'}); the other turns' CPU p95 ${clean.length ? q(clean, 0.95).toFixed(2) : '-'} ms, max ${clean.length ? Math.max(...clean).toFixed(2) : '-'} ms`,
  );
} finally {
  grower?.stdin.end();
  if (grower && grower.exitCode === null) await new Promise((r) => grower.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
