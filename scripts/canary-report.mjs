#!/usr/bin/env node
// The canary's report: screens captured from each CLI (<cli>-<version>-<state>.txt in a folder) read
// with jaggers' shipped profile for that CLI, and, when given, the real-CLI suite's vitest JSON
// results grouped by CLI. Prints per CLI what no longer matches: which rule, which screen.
//
//   node scripts/canary-report.mjs --screens DIR [--e2e results.json] [--profiles DIR]
//
// Exits 0 when every screen reads as its state and no test failed, 1 when something drifted, 2 on
// bad arguments. Needs `npm run build` (it uses dist/).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const fail = (msg) => {
  console.error(`canary-report: ${msg}`);
  process.exit(2);
};

const screensDir = opt('--screens');
const e2eFile = opt('--e2e');
const profilesDir = opt('--profiles') ?? join(root, 'profiles');
if (!screensDir) fail('--screens DIR is required (a folder of <cli>-<version>-<state>.txt screens)');
if (!existsSync(screensDir)) fail(`--screens ${screensDir}: no such folder`);
if (!existsSync(join(root, 'dist', 'src', 'detect', 'drift.js'))) fail('dist/ is missing: run npm run build first');

const { findDrift, parseScreenName, renderDrift } = await import(join(root, 'dist', 'src', 'detect', 'drift.js'));
const { parseProfile } = await import(join(root, 'dist', 'src', 'profiles', 'load.js'));

const screens = [];
const skipped = [];
for (const file of readdirSync(screensDir).sort()) {
  if (!file.endsWith('.txt')) continue;
  const name = parseScreenName(file);
  if (!name) skipped.push(`${file} (not named <cli>-<version>-<state>.txt)`);
  else screens.push({ ...name, file, screen: readFileSync(join(screensDir, file), 'utf8') });
}

let drifted = false;
const byCli = new Map();
for (const s of screens) byCli.set(s.cli, [...(byCli.get(s.cli) ?? []), s]);
const out = [];
for (const [cli, list] of byCli) {
  const file = join(profilesDir, `${cli}.json`);
  if (!existsSync(file)) {
    out.push(`${cli}: no profile ${file} to check ${list.length} screens against`);
    drifted = true;
    continue;
  }
  let profile;
  try {
    profile = parseProfile(JSON.parse(readFileSync(file, 'utf8')), file);
  } catch (e) {
    out.push(`${cli}: profile ${file} does not load: ${e.message}`);
    drifted = true;
    continue;
  }
  const findings = findDrift(list, profile);
  if (findings.length) drifted = true;
  out.push(renderDrift(list, findings).trimEnd());
}
if (screens.length === 0) out.push(`no screens in ${screensDir}`);
for (const s of skipped) out.push(`skipped ${s}`);

if (e2eFile) {
  if (!existsSync(e2eFile)) {
    out.push(`e2e: no results at ${e2eFile} (the suite did not run to its end)`);
    drifted = true;
  } else {
    const results = JSON.parse(readFileSync(e2eFile, 'utf8'));
    const tests = (results.testResults ?? []).flatMap((f) => (f.assertionResults ?? []).map((t) => ({ ...t, file: f.name })));
    const clis = new Set([...byCli.keys(), 'claude', 'qwen', 'gemini', 'codex', 'opencode', 'copilot']);
    for (const cli of clis) {
      const mine = tests.filter((t) => new RegExp(`\\b${cli}\\b`).test(t.fullName ?? t.title));
      if (mine.length === 0) continue;
      const failed = mine.filter((t) => t.status === 'failed');
      const passed = mine.filter((t) => t.status === 'passed').length;
      if (passed + failed.length === 0) continue; // all skipped: a CLI this run was not for
      out.push(`${cli} e2e: ${passed} passed, ${failed.length} failed`);
      for (const t of failed) out.push(`  FAIL ${t.fullName}: ${String(t.failureMessages?.[0] ?? '').split('\n')[0]}`);
      if (failed.length) drifted = true;
    }
    const other = tests.filter((t) => t.status === 'failed' && ![...clis].some((c) => new RegExp(`\\b${c}\\b`).test(t.fullName ?? '')));
    for (const t of other) {
      out.push(`  FAIL ${t.fullName}: ${String(t.failureMessages?.[0] ?? '').split('\n')[0]}`);
      drifted = true;
    }
  }
}

console.log(out.join('\n'));
console.log(drifted ? 'canary: something drifted (see above)' : 'canary: every screen and test still matches');
process.exitCode = drifted ? 1 : 0;
