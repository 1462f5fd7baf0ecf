// gemini's HookKit on the real CLI, offline against the stub: installed per process (a system-defaults
// settings file under the pane's hook folder, read by gemini only when root owns it and every folder
// above it), its calls in order, and what `read` makes of them. The folders live under root's own
// ~/.cache (not /tmp: everyone may write there, so gemini refuses the file, as the second test shows).
// JAGGERS_CAPTURE_HOOKS=1 rewrites test/fixtures/hooks/gemini-<version>-*.json from this run.

import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { geminiHooks, geminiInstaller, nodeProbe, whyNotSecure } from '../../src/clis/gemini/hooks.js';
import type { HookSignal } from '../../src/clis/types.js';
import { startArgs } from './cli-env.js';
import { CLIS, isChosen, isCliInstalled } from './clis.js';
import { createHookCapture, writeInstall } from './hook-capture.js';
import { runHookScenario } from './hook-scenario.js';
import { createRig, type CliRig } from './rig.js';

const required = process.env.JAGGERS_REQUIRE_REAL_CLIS === '1';
const { version } = CLIS.gemini;
const installed = isCliInstalled('gemini');
const root = process.getuid?.() === 0;

describe.skipIf(!isChosen('gemini') || (!installed && !required))(`gemini ${version} hooks${installed ? '' : ' (skipped: not installed)'}`, () => {
  let rig: CliRig | undefined;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it.skipIf(!root)(
    'calls the bridge at start, at each turn start and end and for an approval; read turns the calls into signals (needs root)',
    async () => {
      const base = join(homedir(), '.cache', 'jaggers');
      mkdirSync(base, { recursive: true, mode: 0o755 });
      const r = (rig = await createRig('gemini', { root: join(base, `e2e-hooks-gemini-${process.pid}`) }));
      const hookDir = join(r.cwd, '.jaggers', 'hooks', 'gemini-1');
      expect(whyNotSecure(hookDir, nodeProbe)).toBeNull();
      const run = await runHookScenario(r, geminiHooks, { hookDir, endEvent: 'AfterAgent', resumeInAnotherMinute: true });
      const ms = (xs: number[]): string => xs.map((n) => n.toFixed(1)).join(', ');
      console.log(`gemini ${version}: stub's last byte to the AfterAgent hook, ms: ${ms(run.latenciesMs)}; to its payload read: ${ms(run.payloadLatenciesMs)}`);

      const signals = run.calls.map((c) => ({ phase: c.phase, event: c.event, signals: geminiHooks.read(c.event, c.payload) }));
      const kinds = (phase: string): string[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals.map((x) => x.kind));
      const all = (phase: string): HookSignal[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals);

      for (const c of run.calls) expect(c.argv).toEqual([c.event]);
      expect(kinds('start')).toEqual(['session']);
      const started = all('start')[0];
      expect(started).toMatchObject({ kind: 'session', sessionId: run.sessionId, transcriptPath: expect.any(String) });
      expect(kinds('text')).toEqual(['turn-start', 'turn-end']);
      expect(all('text')[1]).toMatchObject({ kind: 'turn-end', sessionId: run.sessionId });
      expect(all('text')[1]).not.toHaveProperty('reply');
      // One AfterAgent at the real end of the tool turn; the approval as a ToolPermission notification.
      expect(kinds('tool')).toEqual(['turn-start', 'waiting', 'turn-end']);
      expect(kinds('resume')).toEqual(['session']);
      // On --resume, SessionStart's transcript_path names a new file: read gives no path then.
      expect(all('resume')[0]).toEqual({ kind: 'session', sessionId: run.sessionId });
      expect(kinds('resumed-text')).toEqual(['turn-start', 'turn-end']);
      // Resumed in another minute: SessionStart's transcript_path names a new file (the minute is in its
      // name), while AfterAgent still names the file the turns go to.
      const pathIn = (phase: string, event: string): unknown =>
        (run.calls.find((c) => c.phase === phase && c.event === event)?.payload as { transcript_path?: unknown })?.transcript_path;
      expect(pathIn('resume', 'SessionStart')).not.toBe(pathIn('start', 'SessionStart'));
      expect(all('resumed-text')[1]).toMatchObject({ kind: 'turn-end', transcriptPath: pathIn('start', 'SessionStart') });

      // The transcript the first SessionStart named holds the turns (the reply is read from there).
      const path = started?.kind === 'session' ? started.transcriptPath : undefined;
      expect(path !== undefined && existsSync(path)).toBe(true);
      expect(run.latenciesMs.every((n) => Number.isFinite(n) && n >= 0)).toBe(true);
      // No warning block, no trusted_hooks.json in gemini's home, nothing in the project but .jaggers/.
      expect(r.stub.requests.length).toBeGreaterThan(0);
      expect(readdirSync(join(r.home, '.gemini'))).not.toContain('trusted_hooks.json');
      expect(run.strayInCwd).toEqual([]);
    },
    240_000,
  );

  it('reads no settings file from a folder others may write (/tmp): gemini warns and no hook runs', async () => {
    const r = (rig = await createRig('gemini'));
    const hookDir = join(r.cwd, '.jaggers', 'hooks', 'gemini-1');
    expect(whyNotSecure(hookDir, nodeProbe)).toMatch(/gemini refuses|uid/);
    // The install gemini would take as root in a safe folder, written here anyway.
    const capture = createHookCapture(r.root);
    const trusting = geminiInstaller({ uid: () => 0, info: () => null });
    const install = trusting(capture.context({ dir: hookDir, cwd: r.cwd, version }));
    writeInstall(install);
    Object.assign(r.env, install.env);
    await r.start(startArgs('gemini', crypto.randomUUID()));
    const screen = await r.waitFor('idle', { timeoutMs: 45_000 });
    await r.type('Say hello without hooks');
    await r.waitFor('idle', { also: /stub reply to: Say hello without hooks/ });
    expect(capture.calls()).toEqual([]);
    expect(screen + (await r.settle())).toMatch(/Security Warning|insecure|writable by group or others/);
  }, 120_000);
});
