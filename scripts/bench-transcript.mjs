#!/usr/bin/env node
// Reading a long claude transcript for a turn's end: the whole file parsed (as before) beside the
// entries kept and only the new lines parsed (src/clis/claude/entries-cache.ts), after one more
// exchange is appended. Prints medians; asserts nothing.
// Usage: npm run build && node scripts/bench-transcript.mjs [entries=10000] [runs=9]
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readClaudeEntries } from '../dist/src/clis/claude/entries-cache.js';
import { parseClaudeTranscript } from '../dist/src/clis/claude/entries.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [ENTRIES = 10_000, RUNS = 9] = process.argv.slice(2).map(Number);
const sample = readFileSync(path.join(repo, 'test/fixtures/transcripts/claude-2.1.197-simple.jsonl'), 'utf8');
const lines = sample.split('\n').filter(Boolean);
const dir = mkdtempSync(path.join(os.tmpdir(), 'jaggers-bench-transcript-'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  const body = Array.from({ length: ENTRIES }, (_, i) => lines[i % lines.length]).join('\n') + '\n';
  const whole = [];
  const kept = [];
  for (let r = 0; r < RUNS; r++) {
    const file = path.join(dir, `s${r}.jsonl`);
    writeFileSync(file, body);
    await readClaudeEntries(file); // the entries so far, kept
    appendFileSync(file, lines.slice(0, 4).join('\n') + '\n');
    let t = performance.now();
    parseClaudeTranscript(readFileSync(file, 'utf8'));
    whole.push(performance.now() - t);
    t = performance.now();
    await readClaudeEntries(file);
    kept.push(performance.now() - t);
  }
  const mb = (Buffer.byteLength(body) / 1024 / 1024).toFixed(1);
  console.log(`claude transcript of ${ENTRIES} entries (${mb} MB), one more exchange appended, ${RUNS} runs`);
  console.log(`  whole file read and parsed (before)     p50 ${median(whole).toFixed(1).padStart(7)} ms`);
  console.log(`  kept entries + the new lines (now)      p50 ${median(kept).toFixed(1).padStart(7)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
