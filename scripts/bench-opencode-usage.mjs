#!/usr/bin/env node
// What reading a turn's usage from opencode's SQLite database costs the supervisor (issue 30: at most 5 ms
// a turn with a long session). The fixture's database (test/fixtures/usage/opencode-1.18.33-two-turns.db)
// is grown by SQLite itself (python3's sqlite3) to `messages` messages in its session (a prompt of 300
// bytes; an answer with two steps, each a 2 KB text part and a step-finish part); then, turn by turn, one
// more turn is added (not timed) and the session's usage read once, as the runner reads it at a turn's end
// (src/clis/opencode/usage.ts, with what it kept from the reads before). Beside it, from the same run: the
// same read of a copy of the database under another name (a reader that kept nothing: the whole session).
// Prints p50 and p95 of the wall time and of the process's CPU time in it, and the load average; asserts
// nothing. Without python3 and its sqlite3 module it says so and exits 0.
// Usage: npm run build && node scripts/bench-opencode-usage.mjs [messages=5000] [turns=40] [pause=50]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { opencodeSessionUsage } from '../dist/src/clis/opencode/usage.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [MESSAGES = 5000, TURNS = 40, PAUSE = 50] = process.argv.slice(2).map(Number);
if (spawnSync('python3', ['-c', 'import sqlite3'], { stdio: 'ignore' }).status !== 0) {
  console.log('bench-opencode-usage: skipped: no python3 with its sqlite3 module here (it grows the database)');
  process.exit(0);
}
const FIX = path.join(repo, 'test/fixtures/usage/opencode-1.18.33-two-turns');
const SESSION = readFileSync(`${FIX}.session`, 'utf8').trim();
const dir = mkdtempSync(path.join(os.tmpdir(), 'jaggers-bench-opencode-'));
const db = path.join(dir, 'opencode.db');
const GROW = `
import sqlite3, sys, json
db, session, turns = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = sqlite3.connect(db)
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
`;
const grow = (turns) => execFileSync('python3', ['-c', GROW, db, SESSION, String(turns)]);
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
  return { out, wall, cpu: (c.user + c.system) / 1000 };
};
try {
  copyFileSync(`${FIX}.db`, db);
  copyFileSync(`${FIX}.db-wal`, `${db}-wal`);
  grow(Math.max(0, Math.round((MESSAGES - 4) / 2)));
  const first = timed(() => opencodeSessionUsage(db, SESSION));
  const turn = { wall: [], cpu: [] };
  const whole = { wall: [], cpu: [] };
  for (let i = 0; i < TURNS; i++) {
    grow(1);
    if (PAUSE > 0) await new Promise((r) => setTimeout(r, PAUSE));
    const t = timed(() => opencodeSessionUsage(db, SESSION));
    if (!t.out) throw new Error('no usage read');
    turn.wall.push(t.wall);
    turn.cpu.push(t.cpu);
    const copy = path.join(dir, `copy-${i}.db`);
    copyFileSync(db, copy);
    if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${copy}-wal`);
    const w = timed(() => opencodeSessionUsage(copy, SESSION));
    if (JSON.stringify(w.out?.byModel) !== JSON.stringify(t.out.byModel)) throw new Error('the read of a turn and the whole read disagree');
    whole.wall.push(w.wall);
    whole.cpu.push(w.cpu);
    rmSync(copy, { force: true });
    rmSync(`${copy}-wal`, { force: true });
  }
  const row = (name, s) =>
    `| ${name} | ${q(s.wall, 0.5).toFixed(2)} | ${q(s.wall, 0.95).toFixed(2)} | ${q(s.cpu, 0.5).toFixed(2)} | ${q(s.cpu, 0.95).toFixed(2)} |`;
  console.log(
    `opencode session of ${MESSAGES} messages, ${TURNS} turns, pause ${PAUSE} ms; first read of the session ${first.wall.toFixed(1)} ms; load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log('| read | p50 wall ms | p95 wall ms | p50 CPU ms | p95 CPU ms |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  console.log(row("a turn's read (what was read before kept)", turn));
  console.log(row('reference: the whole session read', whole));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
