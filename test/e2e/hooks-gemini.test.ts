// gemini's HookKit on the real CLI, offline against the stub, as any user gets it: gemini runs with
// GEMINI_CLI_HOME naming an overlay home under the pane's hook folder (the person's settings.json with
// jaggers' hooks joined in, links to the rest of their ~/.gemini), in a project under /tmp. Its calls in
// order, what `read` makes of them, the session file in the person's own ~/.gemini/tmp and resumed from
// there, the person's own hook still run, and nothing of jaggers left in their ~/.gemini.
// JAGGERS_CAPTURE_HOOKS=1 rewrites test/fixtures/hooks/gemini-<version>-*.json (the payloads) and
// gemini-overlay-<version>.json (what the overlay held after the run) from this run.

import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { geminiHooks } from '../../src/clis/gemini/hooks.js';
import type { HookSignal } from '../../src/clis/types.js';
import { startArgs } from './cli-env.js';
import { cliSuite, CLIS } from './clis.js';
import { waitForScreen } from './drive.js';
import { createHookCapture } from './hook-capture.js';
import { runHookScenario } from './hook-scenario.js';
import { createRig, type CliRig } from './rig.js';

const { version } = CLIS.gemini;

/** Each entry of a folder: `link`, `file` or `dir` (a link not followed). */
function kinds(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => {
        const st = lstatSync(join(dir, n));
        return [n, st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file'];
      }),
  );
}

const suite = cliSuite('gemini', 'hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  let rig: CliRig | undefined;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it("calls the bridge at start, at each turn start and end and for an approval, in a project under /tmp; the session is in the person's ~/.gemini and resumes from there", async () => {
    const r = (rig = await createRig('gemini'));
    expect(r.cwd.startsWith('/tmp/')).toBe(true);
    // The person's own settings (from the rig) with a hook of their own, which must still run.
    const gemini = join(r.home, '.gemini');
    const settingsFile = join(gemini, 'settings.json');
    const ownHookOut = join(r.root, 'own-hook.json');
    const own = {
      ...JSON.parse(readFileSync(settingsFile, 'utf8')),
      hooks: { AfterAgent: [{ hooks: [{ type: 'command', name: 'mine', command: `cat > ${ownHookOut}` }] }] },
    };
    writeFileSync(settingsFile, JSON.stringify(own, null, 2));
    const theirs = readFileSync(settingsFile, 'utf8');
    expect(readdirSync(gemini)).toEqual(['settings.json']);

    const hookDir = join(r.cwd, '.jaggers', 'hooks', 'gemini-1');
    const overlay = join(hookDir, 'home');
    const run = await runHookScenario(r, geminiHooks, { hookDir, endEvent: 'AfterAgent', resumeInAnotherMinute: true });
    expect(r.env.GEMINI_CLI_HOME).toBe(overlay);
    const ms = (xs: number[]): string => xs.map((n) => n.toFixed(1)).join(', ');
    console.log(`gemini ${version}: stub's last byte to the AfterAgent hook, ms: ${ms(run.latenciesMs)}; to its payload read: ${ms(run.payloadLatenciesMs)}`);

    const signals = run.calls.map((c) => ({ phase: c.phase, event: c.event, signals: geminiHooks.read(c.event, c.payload) }));
    const kindsIn = (phase: string): string[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals.map((x) => x.kind));
    const all = (phase: string): HookSignal[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals);

    for (const c of run.calls) expect(c.argv).toEqual([c.event]);
    expect(kindsIn('start')).toEqual(['session']);
    const started = all('start')[0];
    expect(started).toMatchObject({ kind: 'session', sessionId: run.sessionId, transcriptPath: expect.any(String) });
    expect(kindsIn('text')).toEqual(['turn-start', 'turn-end']);
    expect(all('text')[1]).toMatchObject({ kind: 'turn-end', sessionId: run.sessionId });
    expect(all('text')[1]).not.toHaveProperty('reply');
    // One AfterAgent at the real end of the tool turn; the approval as a ToolPermission notification.
    expect(kindsIn('tool')).toEqual(['turn-start', 'waiting', 'turn-end']);
    expect(kindsIn('resume')).toEqual(['session']);
    // On --resume, SessionStart's transcript_path names a new file: read gives no path then.
    expect(all('resume')[0]).toEqual({ kind: 'session', sessionId: run.sessionId });
    expect(kindsIn('resumed-text')).toEqual(['turn-start', 'turn-end']);
    // Resumed in another minute: SessionStart's transcript_path names a new file (the minute is in its
    // name), while AfterAgent still names the file the turns go to.
    const pathIn = (phase: string, event: string): unknown =>
      (run.calls.find((c) => c.phase === phase && c.event === event)?.payload as { transcript_path?: unknown })?.transcript_path;
    expect(pathIn('resume', 'SessionStart')).not.toBe(pathIn('start', 'SessionStart'));
    expect(all('resumed-text')[1]).toMatchObject({ kind: 'turn-end', transcriptPath: pathIn('start', 'SessionStart') });
    expect(run.latenciesMs.every((n) => Number.isFinite(n) && n >= 0)).toBe(true);

    // The chat file: named through the overlay, it is the person's own, under their ~/.gemini/tmp.
    const transcript = started?.kind === 'session' ? started.transcriptPath! : '';
    expect(transcript.startsWith(join(overlay, '.gemini', 'tmp') + '/')).toBe(true);
    const real = realpathSync(transcript);
    expect(real.startsWith(join(realpathSync(gemini), 'tmp', 'work', 'chats') + '/')).toBe(true);
    expect(readFileSync(real, 'utf8')).toContain(run.sessionId);
    // The resumed turn went on in that conversation: the model got the turns before the resume.
    const after = r.stub.turns().find((q) => q.lastUserText === 'Say hello after the resume');
    expect(after?.userTexts).toEqual(expect.arrayContaining(['Say hello to the hooks', 'Say hello after the resume']));

    // The person's own AfterAgent hook ran beside jaggers'.
    expect(JSON.parse(readFileSync(ownHookOut, 'utf8'))).toMatchObject({ hook_event_name: 'AfterAgent', session_id: run.sessionId });
    // Their settings.json untouched, no trusted_hooks.json, nothing in the project but .jaggers/.
    expect(readFileSync(settingsFile, 'utf8')).toBe(theirs);
    const left = kinds(gemini);
    expect(left).not.toHaveProperty('trusted_hooks.json');
    // What gemini made in their ~/.gemini: what it makes without jaggers, less projects.json (written
    // to a temp file and renamed over the overlay's link: it stays in the overlay; the slug is also
    // kept in tmp/<slug>/.project_root, which gemini reads first).
    expect(left).toEqual({ history: 'dir', 'settings.json': 'file', 'state.json': 'file', tmp: 'dir' });
    const inOverlay = kinds(join(overlay, '.gemini'));
    expect(inOverlay).toMatchObject({ 'settings.json': 'file', 'projects.json': 'file', tmp: 'link', history: 'link', 'state.json': 'link' });
    expect(run.strayInCwd).toEqual([]);
    if (process.env.JAGGERS_CAPTURE_HOOKS === '1') {
      const dir = join(import.meta.dirname, '..', 'fixtures', 'hooks');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `gemini-overlay-${version}.json`), `${JSON.stringify({ personGeminiAfter: left, overlayGeminiAfter: inOverlay }, null, 2)}\n`);
    }
  }, 240_000);

  it("a settings.json of the person's that gemini refuses: jaggers installs nothing, and gemini itself refuses to start", async () => {
    const r = (rig = await createRig('gemini'));
    const settingsFile = join(r.home, '.gemini', 'settings.json');
    writeFileSync(settingsFile, '{"general": {,}}');
    const capture = createHookCapture(r.root);
    const install = geminiHooks.install(capture.context({ dir: join(r.cwd, '.jaggers', 'hooks', 'gemini-1'), cwd: r.cwd, version, env: r.env }));
    expect(install).toMatchObject({ args: [], env: {}, files: [] });
    expect(install.unavailable).toMatch(new RegExp(`^${settingsFile} is not valid JSON .*gemini refuses to start with it too$`));
    await r.start(startArgs('gemini', crypto.randomUUID()));
    // Its FatalConfigError (`Error in <file>: ...`, then this line; exit 52).
    await waitForScreen(r.tmux(), /Please fix the configuration file\(s\) and try again/, { timeoutMs: 45_000 });
    expect(capture.calls()).toEqual([]);
    expect(existsSync(join(r.cwd, '.jaggers'))).toBe(false);
  }, 120_000);
});
