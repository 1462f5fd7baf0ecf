// The canary's report: a screen no rule matches is named by CLI, version and state, with the rules
// that should have fired; screens that still match are counted. Also the report script itself.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { expectedStatus, findDrift, parseScreenName, renderDrift, type CapturedScreen } from '../../src/detect/drift.js';
import { parseProfile } from '../../src/profiles/load.js';
import { builtinProfilesDir, packageRoot } from '../../src/package-root.js';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures', 'screens');
const loadShipped = async (name: string) => {
  const file = path.join(builtinProfilesDir, `${name}.json`);
  return parseProfile(JSON.parse(await readFile(file, 'utf8')), file);
};
const UNKNOWN_SCREEN = ['Welcome to Claude Code v9.9.9', '', '  ▶ Type here, or / for commands', '  ⌁ turbo mode · tab for agents'].join('\n');

describe('parseScreenName and expectedStatus', () => {
  it('reads <cli>-<version>-<state>.txt, the CLI name may have dashes', () => {
    expect(parseScreenName('claude-2.1.330-idle.txt')).toEqual({ cli: 'claude', version: '2.1.330', state: 'idle' });
    expect(parseScreenName('fake-agent-1.0.0-trap-menu-in-scrollback.txt')).toEqual({ cli: 'fake-agent', version: '1.0.0', state: 'trap-menu-in-scrollback' });
    expect(parseScreenName('notes.txt')).toBeNull();
  });
  it('done where the profile has a rule for a finished turn, else idle', async () => {
    expect(expectedStatus(await loadShipped('claude'), 'done-after-tool')).toBe('done');
    expect(expectedStatus(await loadShipped('gemini'), 'done')).toBe('idle');
    expect(expectedStatus(await loadShipped('codex'), 'busy-streaming')).toBe('idle');
    expect(expectedStatus(await loadShipped('qwen'), 'waiting-trust')).toBe('waiting_input');
  });
});

describe('findDrift and renderDrift', () => {
  it('a screen no rule matches: the CLI, version, state, file, what it read as and which rules did not fire', async () => {
    const claude = await loadShipped('claude');
    const idle = await readFile(path.join(fixtures, 'claude-2.1.197-idle.txt'), 'utf8');
    const screens: CapturedScreen[] = [
      { cli: 'claude', version: '9.9.9', state: 'idle', file: 'claude-9.9.9-idle.txt', screen: UNKNOWN_SCREEN },
      { cli: 'claude', version: '9.9.9', state: 'busy', file: 'claude-9.9.9-busy.txt', screen: idle },
      { cli: 'claude', version: '2.1.197', state: 'idle', file: 'claude-2.1.197-idle.txt', screen: idle },
    ];
    const findings = findDrift(screens, claude);
    expect(findings.map((f) => [f.version, f.state, f.got, f.rule])).toEqual([
      ['9.9.9', 'idle', 'unknown', null],
      ['9.9.9', 'busy', 'idle', 'input-box'],
    ]);
    const report = renderDrift(screens, findings);
    expect(report).toContain('claude 9.9.9: 2 of 2 screens no longer match\n');
    expect(report).toContain('  idle (claude-9.9.9-idle.txt): reads as unknown, expected idle; no rule matched\n');
    expect(report).toMatch(/ {4}idle rules that did not fire: input-box \/.*shortcuts.*\/\n/);
    expect(report).toContain('    |   ⌁ turbo mode · tab for agents\n');
    expect(report).toMatch(
      / {2}busy \(claude-9\.9\.9-busy\.txt\): reads as idle, expected busy; rule input-box \(idle\) matched ".*"\n {4}busy rules that did not fire: spinner \/esc to interrupt\/\n/,
    );
    expect(report).toContain('claude 2.1.197: all 1 screens match\n');
  });
});

describe('scripts/canary-report.mjs', () => {
  let dir = '';
  afterEach(async () => rm(dir, { recursive: true, force: true }));
  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, [path.join(packageRoot, 'scripts', 'canary-report.mjs'), ...args]).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it('prints the drift and the failed e2e tests per CLI, and exits 1', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'jg-canary-'));
    await writeFile(path.join(dir, 'qwen-0.99.0-idle.txt'), UNKNOWN_SCREEN);
    await writeFile(path.join(dir, 'qwen-0.99.0-waiting.txt'), await readFile(path.join(fixtures, 'qwen-0.15.10-waiting.txt'), 'utf8'));
    const e2e = path.join(dir, 'e2e.json');
    await writeFile(
      e2e,
      JSON.stringify({
        testResults: [
          {
            name: 'test/e2e/jaggers-real.test.ts',
            assertionResults: [
              { fullName: 'jaggers on real CLIs qwen 0.99.0: idle after up', status: 'failed', failureMessages: ['Error: qwen never became idle\n  at x'] },
              { fullName: 'jaggers on real CLIs gemini 0.61.0: idle after up', status: 'passed', failureMessages: [] },
              { fullName: 'jaggers on real CLIs codex 0.169.0: idle after up', status: 'skipped', failureMessages: [] },
            ],
          },
        ],
      }),
    );
    const r = await run(['--screens', dir, '--e2e', e2e]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'qwen 0.99.0: 1 of 2 screens no longer match\n  idle (qwen-0.99.0-idle.txt): reads as unknown, expected idle; no rule matched\n',
    );
    expect(r.stdout).toContain('qwen e2e: 0 passed, 1 failed\n  FAIL jaggers on real CLIs qwen 0.99.0: idle after up: Error: qwen never became idle\n');
    expect(r.stdout).toContain('gemini e2e: 1 passed, 0 failed\n');
    // A CLI whose tests were all skipped (not in this run) gets no line.
    expect(r.stdout).not.toContain('codex e2e');
    expect(r.stdout).toMatch(/canary: something drifted/);
  });

  it('every screen matching: exit 0; no folder: exit 2 naming it', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'jg-canary-'));
    await writeFile(path.join(dir, 'codex-0.169.0-idle.txt'), await readFile(path.join(fixtures, 'codex-0.169.0-idle.txt'), 'utf8'));
    const ok = await run(['--screens', dir]);
    expect(ok.code, ok.stdout).toBe(0);
    expect(ok.stdout).toContain('codex 0.169.0: all 1 screens match\n');
    const missing = await run(['--screens', path.join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--screens ${path.join(dir, 'nope')}: no such folder`);
  });
});
