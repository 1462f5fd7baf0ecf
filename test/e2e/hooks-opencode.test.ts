// opencode's hook kit on the real CLI, offline against the stub: the plugin it installs passes the bus
// events to a stand-in bridge that records them; a plain turn and a turn with an approval, in order,
// and what `read` makes of each payload. JAGGERS_CAPTURE_HOOKS=1 rewrites test/fixtures/hooks/opencode-*.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { opencodeHooks } from '../../src/clis/opencode/hooks.js';
import type { HookInstallContext } from '../../src/clis/types.js';
import { cliSuite, CLIS } from './clis.js';
import { waitUntil } from './drive.js';
import { createHookCapture, latencyAfterStub, saveFixture, writeInstall, type HookCall } from './hook-capture.js';
import { createRig, type CliRig } from './rig.js';

const { version } = CLIS.opencode;

const statusOf = (c: HookCall): unknown => (c.payload as { properties?: { status?: { type?: unknown } } }).properties?.status?.type;

const suite = cliSuite('opencode', 'hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  let rig: CliRig | undefined;
  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
  });

  it('a turn and an approved tool turn: chat.message, session.status, permission.asked, session.idle with the reply', async () => {
    const r = (rig = await createRig('opencode'));
    // Offline for real: no npm registry (opencode installs its plugin package from there). Its HOME has
    // what a person who ran opencode once has (seedOpencodeConfigDir in cli-env.ts), else it waits ~75 s.
    r.env.npm_config_registry = 'http://127.0.0.1:9/';
    // jaggers' own config arrives through OPENCODE_CONFIG (its MCP server): it must still apply beside
    // the hook folder, and so must the person's ~/.config/opencode (the stub's provider and model).
    const userConfigFile = join(r.home, '.config', 'opencode', 'opencode.json');
    const userConfig = JSON.parse(readFileSync(userConfigFile, 'utf8')) as Record<string, unknown>;
    delete userConfig.permission;
    writeFileSync(userConfigFile, JSON.stringify(userConfig));
    const jaggersConfig = join(r.root, 'jaggers-opencode.json');
    writeFileSync(jaggersConfig, JSON.stringify({ permission: { bash: 'ask' } }));
    r.env.OPENCODE_CONFIG = jaggersConfig;

    const capture = createHookCapture(r.root);
    const ctx: HookInstallContext = capture.context({ dir: join(r.root, 'hooks', 'term-1'), cwd: r.cwd, version });
    const install = opencodeHooks.install(ctx);
    writeInstall(install);
    Object.assign(r.env, install.env);

    const started = Date.now();
    await r.start(install.args);
    await r.waitFor('idle', { timeoutMs: 60_000 });
    // A seeded folder starts as fast as no plugin at all (about 1-15 s here, by load); unseeded, 75 s.
    expect(Date.now() - started).toBeLessThan(45_000);
    await r.settle();
    const idles = (): HookCall[] => capture.calls().filter((c) => c.event === 'session.idle');

    await r.type('say hello');
    await r.waitFor('idle', { also: /stub reply to: say hello/ });
    await waitUntil(() => idles().length === 1, 'the first session.idle', 30_000);
    await r.settle();

    await r.type('Run the command that needs-approval');
    await r.waitFor('waiting', { timeoutMs: 45_000 });
    await waitUntil(() => capture.calls().some((c) => c.event === 'permission.asked'), 'permission.asked', 30_000);
    await r.settle(1_000);
    await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
    await r.waitFor('idle', { also: /stub: the command ran/ });
    await waitUntil(() => idles().length === 2, 'the second session.idle', 30_000);

    const calls = capture.calls();
    // Each turn: chat.message, session.status busy (the plugin passes on the first of a turn's several),
    // then session.idle; the approval turn has permission.asked in between, and busy again once answered.
    expect(calls.map((c) => (c.event === 'session.status' ? `status:${String(statusOf(c))}` : c.event))).toEqual([
      ...['chat.message', 'status:busy', 'session.idle'],
      ...['chat.message', 'status:busy', 'permission.asked', 'status:busy', 'session.idle'],
    ]);
    expect(calls.every((c) => c.argv.length === 1)).toBe(true);

    const sessionId = (calls[0]?.payload as { sessionID: string }).sessionID;
    expect(sessionId).toMatch(/^ses_/);
    const signals = calls.map((c) => opencodeHooks.read(c.event, c.payload));
    expect(signals[0]).toEqual([
      { kind: 'session', sessionId },
      { kind: 'turn-start', sessionId },
    ]);
    const ends = calls.flatMap((c, i) => (c.event === 'session.idle' ? signals[i] : []));
    expect(ends).toEqual([
      { kind: 'turn-end', sessionId, reply: 'stub reply to: say hello' },
      { kind: 'turn-end', sessionId, reply: 'stub: the command ran.' },
    ]);
    const asked = calls.findIndex((c) => c.event === 'permission.asked');
    expect(signals[asked]).toEqual([{ kind: 'waiting', sessionId, question: 'bash: touch approved.txt' }]);
    for (const [i, c] of calls.entries()) if (c.event === 'session.status') expect(signals[i]).toEqual([{ kind: 'turn-start', sessionId }]);

    const latencies = idles().map((c) => latencyAfterStub(r.stub.requests, c.atMs));
    console.log(`opencode ${version}: stub's last chunk to session.idle hook: ${latencies.map((ms) => ms?.toFixed(0)).join(', ')} ms`);
    // Each turn end's hook came after the stub's last chunk of a turn (its latency is printed, not asserted:
    // tests do not assert timings, and a loaded machine took one past 2 s).
    expect(latencies.every((ms) => ms !== undefined && ms >= 0)).toBe(true);

    // The kit's folder: opencode added a .gitignore and installed nothing.
    expect(readdirSync(join(ctx.dir, 'node_modules'))).toEqual(['.jaggers']);

    const idleCalls = idles();
    saveFixture(`opencode-${version}-chat.message`, calls[0]?.payload);
    saveFixture(`opencode-${version}-session.status-busy`, calls.find((c) => statusOf(c) === 'busy')?.payload);
    saveFixture(`opencode-${version}-session.idle-reply`, idleCalls[0]?.payload);
    saveFixture(`opencode-${version}-session.idle-after-tool`, idleCalls[1]?.payload);
    saveFixture(`opencode-${version}-permission.asked`, calls[asked]?.payload);
  }, 240_000);
});
