#!/usr/bin/env node
// What reading a turn's usage costs the supervisor (issue 30: at most 5 ms a turn with the transcript of a
// long session, 5,000 lines). A claude transcript and a codex rollout are grown from the real records in
// test/fixtures/usage (each repetition of a fixture is one turn, its message and request ids made unique)
// to 5,000 lines; then, turn by turn, one more turn is appended and the turn's usage is recorded as the
// runner does it (src/work/usage.ts: the session's records read from where the last read stopped, less
// the registry's sum). Beside it, from the same run: the same file folded whole (a reader that keeps
// nothing; 10 times), and for claude the reply reader the supervisor already runs each turn
// (src/clis/claude/entries-cache.ts, one more turn appended each time). Prints p50 and p95 of the wall time
// and of the process's CPU time in it (on a loaded machine the wall time also holds the waits for a core:
// the CPU time is what the reading itself costs), and the load average; asserts nothing. Between two turns
// it waits `pause` ms, as a supervisor waits for an agent's turn (seconds): the read runs in a process woken
// from idle, as it does there; with 0 the turns run back to back in a process that never sleeps, whose
// reads the scheduler of a loaded machine preempts more often (BENCHMARKS.md, usage per turn).
// Usage: npm run build && node scripts/bench-usage.mjs [lines=5000] [turns=40] [pause=50]
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readClaudeEntries } from '../dist/src/clis/claude/entries-cache.js';
import { claudeUsageFold } from '../dist/src/clis/claude/usage.js';
import { codexUsageFold } from '../dist/src/clis/codex/usage.js';
import { foldBytes } from '../dist/src/clis/shared/jsonl-follow.js';
import { applyEvent, emptyRegistry } from '../dist/src/sessions/schema.js';
import { usageSource } from '../dist/src/usage/source.js';
import { turnUsageEvents } from '../dist/src/work/usage.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [LINES = 5000, TURNS = 40, PAUSE = 50] = process.argv.slice(2).map(Number);
const fixture = (name) =>
  readFileSync(path.join(repo, 'test/fixtures/usage', name), 'utf8')
    .split('\n')
    .filter(Boolean);
const pctl = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => `${x.toFixed(2).padStart(7)} ms`;

/** Turn `k` of the fixture: its lines with ids of their own (a message id and request id per turn). */
const turnOf = (lines, k) => lines.map((l) => l.replace(/"(msg|req)_stub([0-9a-z]+)"/g, `"$1_stub$2_${k}"`)).join('\n') + '\n';

const dir = mkdtempSync(path.join(os.tmpdir(), 'jaggers-bench-usage-'));
const ts = '2026-11-26T12:00:00.000Z';
try {
  const home = path.join(dir, 'home');
  const cwd = '/work/bench';
  const cases = [
    {
      cli: 'claude',
      lines: fixture('claude-2.1.330-two-turns.jsonl'),
      file: path.join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), 's-claude.jsonl'),
      session: 's-claude',
      fold: claudeUsageFold,
      reference: async (file) => readClaudeEntries(file),
      referenceName: 'reply reader (entries kept, new lines parsed)',
    },
    {
      cli: 'codex',
      lines: fixture('codex-0.169.0-two-turns.jsonl'),
      file: path.join(home, '.codex', 'sessions', '2026', '11', '26', 'rollout-2026-11-26T12-00-00-s-codex.jsonl'),
      session: 's-codex',
      fold: codexUsageFold,
    },
  ];
  const source = usageSource();
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
  console.log(
    `usage read per turn at ${LINES} lines, ${TURNS} turns each, ${PAUSE} ms between turns (node ${process.version}, ${os.cpus().length} cores, load ${load()})`,
  );
  for (const c of cases) {
    mkdirSync(path.dirname(c.file), { recursive: true });
    const perTurn = c.lines.length;
    let k = 0;
    const turns = [];
    while ((k + 1) * perTurn <= LINES) turns.push(turnOf(c.lines, k++));
    writeFileSync(c.file, turns.join(''));
    const profile = { session: { usage: c.cli } };
    let data = emptyRegistry();
    for (const e of [
      { type: 'terminal-created', terminalId: 't1', agent: 'a', profile: c.cli, cwd },
      { type: 'session-pinned', terminalId: 't1', sessionId: c.session, how: 'pre-generated' },
      {
        type: 'job-created',
        jobId: 'j-000000000001',
        name: null,
        target: 'a',
        kind: 'agent',
        terminalId: 't1',
        from: null,
        fromAgent: null,
        prompt: 'p',
        bytes: 1,
        timeoutMs: null,
        keep: false,
      },
    ])
      data = applyEvent(data, { ...e, ts });
    const turn = () => ({
      job: data.jobs['j-000000000001'],
      terminalId: 't1',
      agent: 'a',
      profile,
      pid: null,
      env: { HOME: home, CODEX_HOME: path.join(home, '.codex') },
      sessionId: null,
    });
    const record = async () => {
      const c0 = process.cpuUsage();
      const t = performance.now();
      const events = await turnUsageEvents(source, data, turn());
      const took = performance.now() - t;
      const c1 = process.cpuUsage(c0);
      for (const e of events) data = applyEvent(data, { ...e, ts });
      return { took, cpu: (c1.user + c1.system) / 1000, events };
    };
    // The first read (a supervisor that starts on a long session): the whole file, once.
    const cold = await record();
    if (c.reference) await c.reference(c.file);
    const warm = [];
    const cpu = [];
    const whole = [];
    const ref = [];
    let tokens = 0;
    // The turns alone first, then the references on the file as it ends: a reference's garbage (a whole
    // file's strings) is not collected in the middle of a turn's reading.
    for (let i = 0; i < TURNS; i++) {
      appendFileSync(c.file, turnOf(c.lines, k++));
      if (PAUSE > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE));
      const r = await record();
      warm.push(r.took);
      cpu.push(r.cpu);
      tokens += r.events.length;
    }
    for (let i = 0; i < Math.min(TURNS, 10); i++) {
      let t = performance.now();
      foldBytes(c.fold, { state: c.fold.init(), skipped: 0, lines: 0 }, readFileSync(c.file));
      whole.push(performance.now() - t);
      if (c.reference) {
        appendFileSync(c.file, turnOf(c.lines, k++));
        t = performance.now();
        await c.reference(c.file);
        ref.push(performance.now() - t);
      }
    }
    const size = readFileSync(c.file).length;
    const n = readFileSync(c.file, 'utf8').split('\n').length - 1;
    console.log(
      `${c.cli}: ${LINES} lines to start (${(size / 1024 / 1024).toFixed(1)} MB, ${n} lines at the end), ${perTurn} lines a turn, ${tokens}/${TURNS} turns with usage recorded`,
    );
    console.log(`  first read, whole file (a supervisor start)      ${ms(cold.took)}`);
    console.log(`  per turn: usage read + recorded (jaggers)   p50 ${ms(pctl(warm, 0.5))}   p95 ${ms(pctl(warm, 0.95))}   max ${ms(Math.max(...warm))}`);
    console.log(`  per turn: CPU time in it (jaggers)          p50 ${ms(pctl(cpu, 0.5))}   p95 ${ms(pctl(cpu, 0.95))}   max ${ms(Math.max(...cpu))}`);
    console.log(`  per turn: the whole file folded (reference) p50 ${ms(pctl(whole, 0.5))}   p95 ${ms(pctl(whole, 0.95))}`);
    if (ref.length) console.log(`  per turn: ${c.referenceName.padEnd(27)} p50 ${ms(pctl(ref, 0.5))}   p95 ${ms(pctl(ref, 0.95))}`);
  }
  console.log(`load at the end: ${load()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
