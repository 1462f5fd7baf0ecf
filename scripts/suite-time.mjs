#!/usr/bin/env node
// Where the test suite's time goes, from the output of a run (`.ci/run > log`, or `npm test`): vitest's
// own wall time, each project's worker time (the sum of its files, hooks included) and the files that
// cost most. Worker time over the run's 2 workers is about the wall time a project takes on this
// 2-core machine, where the real-CLI projects are bound by CPU (docs/testing.md).
//
//   node scripts/suite-time.mjs LOG [TOP]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/suite-time.mjs LOG [TOP]');
  process.exit(2);
}
const top = Number(topArg ?? 12);
const text = readFileSync(file, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
// A file's line in vitest's default reporter: ` ✓  core  test/unit/x.test.ts (3 tests) 120ms`.
const FILE = /^ [✓×↓❯] +(\S+) +(test\/\S+\.test\.ts) \((.*?)\)(?: (\d+)ms)?$/gm;
const files = [...text.matchAll(FILE)].map((m) => ({ project: m[1], path: m[2], tests: m[3], ms: Number(m[4] ?? 0) }));
if (files.length === 0) {
  console.error(`${file}: no file lines of vitest's default reporter`);
  process.exit(1);
}
const duration = /^ +Duration +([\d.]+)s/m.exec(text)?.[1];
const result = /^\d+ passed, \d+ failed.*$/m.exec(text)?.[0];
console.log(`vitest wall: ${duration ?? '?'} s${result ? `; ${result}` : ''}`);
const byProject = new Map();
for (const f of files) byProject.set(f.project, (byProject.get(f.project) ?? 0) + f.ms);
for (const [p, ms] of byProject)
  console.log(`  ${p.padEnd(11)} ${(ms / 1000).toFixed(0).padStart(5)} worker-s in ${files.filter((f) => f.project === p).length} files`);
console.log(`the ${top} costliest files:`);
for (const f of [...files].sort((a, b) => b.ms - a.ms).slice(0, top))
  console.log(`  ${(f.ms / 1000).toFixed(0).padStart(5)} s  ${f.project.padEnd(11)} ${f.path} (${f.tests})`);
