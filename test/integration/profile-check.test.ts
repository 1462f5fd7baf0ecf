// `jaggers profile check`: a profile's CLI (the fake agent) walked through idle, busy and done on a
// private tmux server; a profile whose busy rule never fires is reported as such; clear errors for an
// unknown profile and a missing command.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProfileCheckReport } from '../../src/commands/profile-check.js';
import { writeFakeProfile, writeProfile } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('profile check', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
  });
  afterEach(async () => rig.cleanup());

  const check = async (args: string[]) => {
    const r = await rig.run(['profile', 'check', ...args, '--json', '--timeout', '30']);
    return { code: r.code, stderr: r.stderr, report: r.stdout ? (JSON.parse(r.stdout) as ProfileCheckReport) : null };
  };

  it('a profile read by its screen rules: idle, busy and done each by its rule, screens saved with --capture', async () => {
    const file = await writeFakeProfile(rig.root, 'screens', ['--think-ms', '1500']);
    const p = JSON.parse(await readFile(file, 'utf8')) as { detect: Record<string, unknown> };
    delete p.detect.stateFile;
    delete p.detect.outputBusy;
    delete p.detect.hooks;
    await writeProfile(rig.root, 'screens', p);

    const { code, report } = await check(['screens', '--capture', 'shots']);
    expect(code, JSON.stringify(report, null, 2)).toBe(0);
    expect(report!.ok).toBe(true);
    expect(report!.seen).toEqual({ idle: 'input-box', busy: 'spinner', done: 'turn-summary' });
    expect(report!.version).toMatchObject({ installed: '1.0.0' });
    expect(report!.signals).toEqual(['screen (6 rules)']);
    const busy = report!.steps.find((s) => s.state === 'busy')!;
    expect(busy.lines.join('\n')).toMatch(/esc to cancel/);
    // Each step's screen is saved, and shows what the rule matched.
    const shots = path.join(rig.root, 'shots');
    const files = (await readdir(shots)).sort();
    expect(files).toEqual(report!.steps.map((s) => path.basename(s.screenFile!)).sort());
    expect(await readFile(busy.screenFile!, 'utf8')).toMatch(/esc to cancel/);
    // The private folder (its tmux server's socket and the work folder) is gone.
    expect(path.basename(path.dirname(report!.cwd))).toMatch(/^jaggers-check-/);
    await expect(readdir(path.dirname(report!.cwd))).rejects.toThrow(/ENOENT/);

    const text = await rig.run(['profile', 'check', 'screens', '--timeout', '30']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ {2}\+ *[\d.]+s {2}busy {10}rule spinner \(screen\) {2}\| .*esc to cancel/m);
    expect(text.stdout).toMatch(/idle seen \(input-box\), busy seen \(spinner\), done seen \(turn-summary\)\nok: /);
  });

  it('a busy rule that never fires: FAIL naming the rule; unknown profile and missing command', async () => {
    const file = await writeFakeProfile(rig.root, 'nobusy', ['--think-ms', '1500']);
    const p = JSON.parse(await readFile(file, 'utf8')) as {
      detect: { rules: { name: string; pattern: string }[]; stateFile?: string; outputBusy?: string[]; hooks?: string };
    };
    delete p.detect.hooks;
    delete p.detect.stateFile;
    delete p.detect.outputBusy;
    p.detect.rules.find((r) => r.name === 'spinner')!.pattern = 'NEVER-SHOWN';
    await writeProfile(rig.root, 'nobusy', p);
    const { code, report } = await check(['nobusy']);
    expect(code).toBe(1);
    expect(report!.seen.busy).toBeNull();
    expect(report!.problem).toBe('no busy state was seen after the prompt: no busy rule fired (rules: spinner /NEVER-SHOWN/)');

    const unknown = await rig.run(['profile', 'check', 'nosuch']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/unknown profile "nosuch": known profiles are .*demo/);

    await writeProfile(rig.root, 'gone', { command: 'no-such-cli-anywhere' });
    const gone = await rig.run(['profile', 'check', 'gone']);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toMatch(/FAIL: command "no-such-cli-anywhere" is not found on PATH/);
  });
});
