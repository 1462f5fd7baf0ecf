// copilot's hook kit on the real CLI, offline against the stub: its plugin folder's hooks call a
// stand-in bridge that records them; a plain turn and a turn with an approval, in order, and what
// `read` makes of each payload. JAGGERS_CAPTURE_HOOKS=1 rewrites test/fixtures/hooks/copilot-*.

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copilotHooks } from '../../src/clis/copilot/hooks.js';
import type { HookInstallContext } from '../../src/clis/types.js';
import { cliSuite, CLIS } from './clis.js';
import { waitUntil } from './drive.js';
import { createHookCapture, latencyAfterStub, saveFixture, writeInstall, type HookCall } from './hook-capture.js';
import { createRig, type CliRig } from './rig.js';
import { SCREENS } from './screens.js';

const { version } = CLIS.copilot;

const suite = cliSuite('copilot', 'hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  let rig: CliRig | undefined;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it('a turn and an approved tool turn: sessionStart, userPromptSubmitted, permissionRequest, notification, agentStop', async () => {
    const r = (rig = await createRig('copilot'));
    const capture = createHookCapture(r.root);
    const ctx: HookInstallContext = capture.context({ dir: join(r.root, 'hooks', 'term-1'), cwd: r.cwd, version });
    const install = copilotHooks.install(ctx);
    writeInstall(install);
    Object.assign(r.env, install.env);
    const sessionId = randomUUID();

    await r.start(['--session-id', sessionId, ...install.args]);
    // The plugin folder adds no dialog: straight to the input box.
    const first = await r.waitFor('idle', { timeoutMs: 60_000 });
    expect(first).not.toMatch(SCREENS.copilot.waiting);
    await r.settle();
    expect(capture.calls()).toEqual([]); // sessionStart waits for the first prompt
    const stops = (): HookCall[] => capture.calls().filter((c) => c.event === 'agentStop');

    await r.type('say hello');
    await r.waitFor('idle', { also: /stub reply to: say hello/ });
    await waitUntil(() => stops().length === 1, 'the first agentStop', 30_000);
    await r.settle();

    await r.type('Run the command that needs-approval');
    await r.waitFor('waiting', { timeoutMs: 45_000 });
    await waitUntil(() => capture.calls().some((c) => c.event === 'notification'), 'the permission_prompt notification', 30_000);
    await r.settle(1_000);
    await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
    await r.waitFor('idle', { also: /stub: the command ran/ });
    await waitUntil(() => stops().length === 2, 'the second agentStop', 30_000);

    const calls = capture.calls();
    expect(calls.map((c) => c.event)).toEqual([
      ...['sessionStart', 'userPromptSubmitted', 'agentStop'],
      ...['userPromptSubmitted', 'permissionRequest', 'notification', 'agentStop'],
    ]);
    expect(calls.every((c) => c.argv.length === 1)).toBe(true);

    const signals = calls.map((c) => copilotHooks.read(c.event, c.payload));
    const transcriptPath = join(r.home, '.copilot', 'session-state', sessionId, 'events.jsonl');
    const question = 'bash: touch approved.txt';
    expect(signals).toEqual([
      [{ kind: 'session', sessionId }],
      [{ kind: 'turn-start', sessionId }],
      [{ kind: 'turn-end', sessionId, transcriptPath }],
      [{ kind: 'turn-start', sessionId }],
      [{ kind: 'waiting', sessionId, question }],
      [{ kind: 'waiting', sessionId, question: 'Run command: touch approved.txt' }],
      [{ kind: 'turn-end', sessionId, transcriptPath }],
    ]);

    const latencies = stops().map((c) => latencyAfterStub(r.stub.requests, c.atMs));
    console.log(`copilot ${version}: stub's last chunk to agentStop hook: ${latencies.map((ms) => ms?.toFixed(0)).join(', ')} ms`);
    // Each turn end's hook came after the stub's last chunk of a turn (its latency is printed, not asserted:
    // tests do not assert timings, and a loaded machine took one past 2 s).
    expect(latencies.every((ms) => ms !== undefined && ms >= 0)).toBe(true);

    const [stop1, stop2] = stops();
    saveFixture(`copilot-${version}-sessionStart`, calls[0]?.payload);
    saveFixture(`copilot-${version}-userPromptSubmitted`, calls[1]?.payload);
    saveFixture(`copilot-${version}-agentStop`, stop1?.payload);
    saveFixture(`copilot-${version}-agentStop-after-tool`, stop2?.payload);
    saveFixture(`copilot-${version}-permissionRequest`, calls.find((c) => c.event === 'permissionRequest')?.payload);
    saveFixture(`copilot-${version}-notification-permission_prompt`, calls.find((c) => c.event === 'notification')?.payload);
  }, 240_000);
});
