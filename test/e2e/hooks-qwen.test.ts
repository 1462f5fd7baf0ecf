// qwen's HookKit on the real CLI, offline against the stub: installed per process (a system-defaults
// settings file under the pane's hook folder), its calls in order, and what `read` makes of them.
// JAGGERS_CAPTURE_HOOKS=1 rewrites test/fixtures/hooks/qwen-<version>-*.json from this run.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { qwenHooks } from '../../src/clis/qwen/hooks.js';
import type { HookSignal } from '../../src/clis/types.js';
import { cliSuite, CLIS } from './clis.js';
import { runHookScenario } from './hook-scenario.js';
import { createRig, type CliRig } from './rig.js';

const { version } = CLIS.qwen;

const suite = cliSuite('qwen', 'hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  let rig: CliRig | undefined;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it('calls the bridge at start, at each turn start and end and for an approval; read turns the calls into signals', async () => {
    const r = (rig = await createRig('qwen'));
    const run = await runHookScenario(r, qwenHooks, { hookDir: join(r.cwd, '.jaggers', 'hooks', 'qwen-1'), endEvent: 'Stop' });
    const ms = (xs: number[]): string => xs.map((n) => n.toFixed(1)).join(', ');
    console.log(`qwen ${version}: stub's last byte to the Stop hook, ms: ${ms(run.latenciesMs)}; to its payload read: ${ms(run.payloadLatenciesMs)}`);

    const signals = run.calls.map((c) => ({ phase: c.phase, event: c.event, signals: qwenHooks.read(c.event, c.payload) }));
    const kinds = (phase: string): string[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals.map((x) => x.kind));
    const all = (phase: string): HookSignal[] => signals.filter((s) => s.phase === phase).flatMap((s) => s.signals);

    // The bridge gets the event name last and the payload on stdin.
    for (const c of run.calls) expect(c.argv).toEqual([c.event]);
    expect(kinds('start')).toEqual(['session']);
    expect(all('start')[0]).toMatchObject({ kind: 'session', sessionId: run.sessionId });
    expect(kinds('text')).toEqual(['turn-start', 'turn-end']);
    expect(all('text')[1]).toEqual({
      kind: 'turn-end',
      sessionId: run.sessionId,
      reply: 'stub reply to: Say hello to the hooks',
      transcriptPath: expect.any(String),
    });
    // The tool turn: one start (the empty UserPromptSubmit after the tool result gives nothing), waiting
    // (PermissionRequest, then Notification permission_prompt), one end with the last message.
    const tool = kinds('tool');
    expect(tool[0]).toBe('turn-start');
    expect(tool.filter((k) => k === 'turn-start')).toHaveLength(1);
    expect(tool.slice(1, -1).every((k) => k === 'waiting') && tool.includes('waiting')).toBe(true);
    expect(all('tool').at(-1)).toMatchObject({ kind: 'turn-end', reply: 'stub: the command ran.' });
    expect(run.calls.filter((c) => c.phase === 'tool' && c.event === 'UserPromptSubmit').length).toBeGreaterThan(1);
    expect(kinds('resume')).toEqual(['session']);
    expect(all('resume')[0]).toMatchObject({ sessionId: run.sessionId });
    expect(kinds('resumed-text')).toEqual(['turn-start', 'turn-end']);
    expect(all('resumed-text')[1]).toMatchObject({ reply: 'stub reply to: Say hello after the resume' });

    expect(run.latenciesMs.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true);
    // Nothing written into the project but .jaggers/ (and the file the stub's tool call touches).
    expect(run.strayInCwd).toEqual([]);
  }, 240_000);
});
