#!/usr/bin/env node
// Medians over several runs of scripts/bench-detect.mjs (their --json files): one row per N and
// method, each cell the median of that run's percentile, beside the work it took.
//
// Usage: node scripts/bench-detect-summary.mjs run1.json run2.json run3.json [--label after]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const li = args.indexOf('--label');
const label = li >= 0 ? args.splice(li, 2)[1] : '';
if (args.length === 0) {
  console.error('usage: bench-detect-summary.mjs FILE.json... [--label NAME]');
  process.exit(2);
}
const runs = args.map((f) => {
  try {
    return JSON.parse(readFileSync(f, 'utf8'));
  } catch (e) {
    console.error(`bench-detect-summary: cannot read ${f}: ${e.message}`);
    process.exit(1);
  }
});

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '-');
const range = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x));
  return s.length ? `${f0(Math.min(...s))}-${f0(Math.max(...s))}` : '-';
};

const ns = [...new Set(runs.flatMap((r) => r.results.map((x) => x.n)))].sort((a, b) => a - b);
const active = runs[0].opts.active;
console.log(
  `${label ? `${label}: ` : ''}${runs.length} runs (${runs.map((r) => r.build).join('; ')}), ${active > 0 ? `at most ${active} agents in a turn at once` : 'all agents busy at once'}`,
);
console.log('| N | method | all p50 | all p95 | all p99 | busy p99 | quiet p99 | missed busy / quiet | captures per status change | tmux CPU % | load |');
console.log('|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|');
for (const n of ns) {
  const rs = runs.map((r) => r.results.find((x) => x.n === n)).filter(Boolean);
  for (const [m, name] of [
    ['jaggers', 'jaggers'],
    ['floor', 'bare control client'],
    ['poller', '500 ms poller'],
  ]) {
    const cell = (series, q) => median(rs.map((x) => x.series[`${series}/${m}`]?.[q]));
    const missed = (series) => rs.map((x) => x.series[`${series}/${m}`]?.missed ?? '-').join(',');
    const perChange = m === 'jaggers' ? f1(median(rs.map((x) => x.captures / Math.max(1, x.statusChanges)))) : '';
    const cpu = m === 'jaggers' ? range(rs.map((x) => x.phaseCpu.tmuxServerPct)) : '';
    const load = m === 'jaggers' ? range(rs.map((x) => x.phaseCpu.loadavg)) : '';
    console.log(
      `| ${n} | ${name} | ${f1(cell('all', 'p50'))} | ${f1(cell('all', 'p95'))} | ${f1(cell('all', 'p99'))} | ${f1(cell('busy', 'p99'))} | ${f1(cell('quiet', 'p99'))} | ${missed('busy')} / ${missed('quiet')} | ${perChange} | ${cpu} | ${load} |`,
    );
  }
}
for (const n of ns) {
  const rs = runs.map((r) => r.results.find((x) => x.n === n)).filter(Boolean);
  const lag = rs.map((x) => x.fileLag?.p99).filter(Number.isFinite);
  const after = rs.map((x) => x.afterFile?.p99).filter(Number.isFinite);
  const idle = rs.flatMap((x) => (x.idleCpu ?? []).filter((c) => c.label === 'watcher only'));
  console.log(
    `N=${n}: captures/s ${range(rs.map((x) => x.captures / x.phaseSeconds))}; forks during the phase ${rs.map((x) => x.forks.spawnedByThisProcess).join(',')}; ` +
      `this process's CPU ${range(rs.map((x) => x.phaseCpu.processPct))} %; CPU stall ${range(rs.map((x) => x.phaseCpu.cpuStallPct))} %` +
      (lag.length ? `; agent's state file after its screen p99 ${f0(median(lag))} ms, jaggers after that file p99 ${f0(median(after))} ms` : '') +
      (idle.length
        ? `; idle: watcher ${idle.map((c) => c.processPct.toFixed(2)).join('/')} %, tmux ${idle.map((c) => c.tmuxServerPct.toFixed(2)).join('/')} %`
        : ''),
  );
}
