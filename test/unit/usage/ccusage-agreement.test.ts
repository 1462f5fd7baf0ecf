// `jaggers usage --json` agrees with ccusage to the token on the same claude and codex files (issue 30).
// The real records in test/fixtures/usage are put where each CLI writes them; two turns of each session are
// recorded as the supervisor records them (the session's records read at each turn's end, the file cut
// between the turns); then `jaggers usage --json` (no session running: it reads `.jaggers/`) and ccusage
// 18.0.11 (devDependencies `ccusage` and `@ccusage/codex`, run offline) report on the same files.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetFollowed } from '../../../src/clis/shared/jsonl-follow.js';
import { loadProfile } from '../../../src/profiles/load.js';
import { Registry } from '../../../src/sessions/registry.js';
import { usageSource } from '../../../src/usage/source.js';
import type { UsageView } from '../../../src/usage/report.js';
import { turnUsageEvents } from '../../../src/work/usage.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const FIX = path.join(ROOT, 'test', 'fixtures', 'usage');
const require = createRequire(import.meta.url);
const CCUSAGE = path.join(path.dirname(require.resolve('ccusage/package.json')), 'dist', 'index.js');
const CCUSAGE_CODEX = path.join(path.dirname(require.resolve('@ccusage/codex/package.json')), 'dist', 'index.js');

const CLAUDE_SESSION = '5e0a7a51-0000-4000-8000-00000000c1a0';
const CODEX_SESSION = '019ac0a0-0000-7000-8000-00000000c0de';

let dir: string;
let home: string;
let project: string;
const cwd = '/work/proj';

/** The fixture's lines, in two parts: up to the first turn's end, and the rest. */
function halves(name: string, firstTurnEndsAfter: RegExp): [string, string] {
  const lines = readFileSync(path.join(FIX, name), 'utf8').split('\n');
  const at = lines.findIndex((l) => firstTurnEndsAfter.test(l));
  return [lines.slice(0, at + 1).join('\n') + '\n', lines.slice(at + 1).join('\n')];
}

async function recordTurn(reg: Registry, agent: string, terminalId: string, profileName: string, jobId: string): Promise<void> {
  const { profile } = await loadProfile(profileName, path.join(project, '.jaggers'));
  await reg.update(async (d) => ({
    events: await turnUsageEvents(usageSource(), d, { job: d.jobs[jobId]!, terminalId, agent, profile, pid: null, env: { HOME: home }, sessionId: null }),
    result: null,
  }));
}

async function newJob(reg: Registry, jobId: string, agent: string, terminalId: string): Promise<void> {
  await reg.record({
    type: 'job-created',
    jobId,
    name: null,
    target: agent,
    kind: 'agent',
    terminalId,
    from: null,
    fromAgent: null,
    prompt: `.jaggers/jobs/${jobId}.md`,
    bytes: 1,
    timeoutMs: null,
    keep: false,
  });
}

let jaggers: UsageView;

const OLDER = [
  { agent: 'old-tool', session: '5e0a7a51-0000-4000-8000-00000000c1a1', fixture: 'claude-2.1.197-queued-prompt.jsonl' },
  { agent: 'old-esc', session: '5e0a7a51-0000-4000-8000-00000000c1a2', fixture: 'claude-2.1.197-interrupted.jsonl' },
];

beforeAll(async () => {
  forgetFollowed();
  dir = mkdtempSync(path.join(tmpdir(), 'jaggers-ccusage-'));
  home = path.join(dir, 'home');
  project = path.join(dir, 'project');
  mkdirSync(path.join(project, '.jaggers'), { recursive: true });
  writeFileSync(
    path.join(project, 'jaggers.json'),
    JSON.stringify({
      agents: [
        { name: 'cl', profile: 'claude' },
        { name: 'cx', profile: 'codex' },
      ],
    }),
  );
  const claudeFile = path.join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${CLAUDE_SESSION}.jsonl`);
  const codexFile = path.join(home, '.codex', 'sessions', '2026', '11', '26', `rollout-2026-11-26T12-45-15-${CODEX_SESSION}.jsonl`);
  mkdirSync(path.dirname(claudeFile), { recursive: true });
  mkdirSync(path.dirname(codexFile), { recursive: true });
  // Two more claude sessions, real transcripts of claude 2.1.197's TUI (test/fixtures/transcripts): a tool
  // call written as two entries without a request id, and an interrupted answer (a `<synthetic>` entry).
  const older = OLDER.map((o) => ({ ...o, file: path.join(path.dirname(claudeFile), `${o.session}.jsonl`) }));
  // The first turn ends with claude's second answer (after the tool call), codex's first token_count.
  const claude = halves('claude-2.1.330-two-turns.jsonl', /"output_tokens":910/);
  const codex = halves('codex-0.169.0-two-turns.jsonl', /"type":"token_count"/);

  const reg = new Registry(path.join(project, '.jaggers'));
  await reg.record(
    { type: 'terminal-created', terminalId: 't-cl', agent: 'cl', profile: 'claude', cwd },
    { type: 'session-pinned', terminalId: 't-cl', sessionId: CLAUDE_SESSION, how: 'pre-generated' },
    { type: 'terminal-created', terminalId: 't-cx', agent: 'cx', profile: 'codex', cwd },
    { type: 'session-pinned', terminalId: 't-cx', sessionId: CODEX_SESSION, how: 'discovered' },
  );
  writeFileSync(claudeFile, claude[0]);
  writeFileSync(codexFile, codex[0]);
  await newJob(reg, 'j-000000000001', 'cl', 't-cl');
  await newJob(reg, 'j-000000000002', 'cx', 't-cx');
  await recordTurn(reg, 'cl', 't-cl', 'claude', 'j-000000000001');
  await recordTurn(reg, 'cx', 't-cx', 'codex', 'j-000000000002');
  appendFileSync(claudeFile, claude[1]);
  appendFileSync(codexFile, codex[1]);
  await newJob(reg, 'j-000000000003', 'cl', 't-cl');
  await newJob(reg, 'j-000000000004', 'cx', 't-cx');
  await recordTurn(reg, 'cl', 't-cl', 'claude', 'j-000000000003');
  await recordTurn(reg, 'cx', 't-cx', 'codex', 'j-000000000004');
  for (const [i, o] of older.entries()) {
    writeFileSync(o.file, readFileSync(path.join(ROOT, 'test', 'fixtures', 'transcripts', o.fixture), 'utf8'));
    const t = `t-old${i}`;
    const job = `j-00000000010${i}`;
    await reg.record(
      { type: 'terminal-created', terminalId: t, agent: o.agent, profile: 'claude', cwd },
      { type: 'session-pinned', terminalId: t, sessionId: o.session, how: 'pre-generated' },
    );
    await newJob(reg, job, o.agent, t);
    await recordTurn(reg, o.agent, t, 'claude', job);
  }

  const env: NodeJS.ProcessEnv = { ...process.env, TMUX_TMPDIR: dir, JAGGERS_PROJECT: project };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const r = await execa('node', [path.join(ROOT, 'bin', 'jaggers.js'), 'usage', '--json', '--by', 'agent'], { cwd: project, env, extendEnv: false });
  jaggers = JSON.parse(r.stdout) as UsageView;
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (key: string) => jaggers.rows.find((r) => r.key === key)!;

describe('jaggers usage --json and ccusage on the same files', () => {
  it('claude: input, output, cache read and cache write agree with `ccusage session --json`', async () => {
    const r = await execa('node', [CCUSAGE, 'session', '--json', '--offline'], {
      env: { ...process.env, CLAUDE_CONFIG_DIR: path.join(home, '.claude') },
      extendEnv: false,
    });
    const cc = JSON.parse(r.stdout) as { totals: { inputTokens: number; outputTokens: number; cacheCreationTokens: number; cacheReadTokens: number } };
    // ccusage sums every session under the folder: the three claude agents' rows together.
    const rows = ['cl', ...OLDER.map((o) => o.agent)].map(row);
    const sum = (k: 'input' | 'output' | 'cacheRead' | 'cacheWrite') => rows.reduce((a, x) => a + x[k], 0);
    expect({ input: sum('input'), output: sum('output'), cacheRead: sum('cacheRead'), cacheWrite: sum('cacheWrite') }).toEqual({
      input: cc.totals.inputTokens,
      output: cc.totals.outputTokens,
      cacheRead: cc.totals.cacheReadTokens,
      cacheWrite: cc.totals.cacheCreationTokens,
    });
    for (const x of rows) expect(x.total).toBeGreaterThan(0);
  });

  it('codex: input (with its cached part), cached input and output agree with `@ccusage/codex session --json`', async () => {
    const r = await execa('node', [CCUSAGE_CODEX, 'session', '--json', '--offline'], {
      env: { ...process.env, CODEX_HOME: path.join(home, '.codex') },
      extendEnv: false,
    });
    const cc = JSON.parse(r.stdout) as { totals: { inputTokens: number; cachedInputTokens: number; outputTokens: number } };
    const mine = row('cx');
    // ccusage counts codex's input with its cached part in it, as codex does; jaggers' input is the rest.
    expect({ input: mine.input + mine.cacheRead, cached: mine.cacheRead, output: mine.output }).toEqual({
      input: cc.totals.inputTokens,
      cached: cc.totals.cachedInputTokens,
      output: cc.totals.outputTokens,
    });
    expect(mine.cacheWrite).toBe(0);
  });

  it('the two turns of each session were recorded apart, and sum to the session', () => {
    expect(jaggers.turns).toBe(4 + OLDER.length);
    expect(jaggers.total.total).toBe(jaggers.rows.reduce((a, x) => a + x.total, 0));
  });
});
