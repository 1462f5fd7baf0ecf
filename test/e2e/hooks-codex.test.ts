// codex's native hooks on the real CLI, offline against the stub model: the kit's install (src/clis/codex/
// hooks.ts) with a capture script standing in for jaggers' bridge (it records its argv, its stdin and
// when it ran), codex driven in a private tmux. The events fired, in order, and what the kit's `read`
// makes of each; the time from the stub's last chunk to the hook's call; nothing written to the codex
// home. With JAGGERS_CAPTURE_HOOKS=1 every payload seen is saved as
// test/fixtures/hooks/codex-<version>-<event>[-what].json (test/unit/clis/codex-hooks.test.ts reads them).

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexHooks, NOTIFY_EVENT } from '../../src/clis/codex/hooks.js';
import type { HookInstall } from '../../src/clis/types.js';
import { cliSuite, CLIS } from './clis.js';
import { waitUntil } from './drive.js';
import { createRig, type CliRig } from './rig.js';
import type { Reply } from './stub-server.js';
import { defaultScript } from './stub-script.js';

const { version } = CLIS.codex;
const capture = process.env.JAGGERS_CAPTURE_HOOKS === '1';
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hooks');
/** A fixed folder when capturing, so that the saved payloads' paths stay the same from one capture to the next. */
const CAPTURE_ROOT = '/tmp/jaggers-e2e-codex-capture';

/** One run of the capture script: what jaggers' bridge would have been given. */
interface Call {
  /** When it started (ms since the epoch, from `date +%s%N`). */
  at: number;
  /** The arguments after the bridge's own two (spool folder, terminal id): the event name, then codex's. */
  argv: string[];
  /** Its stdin, parsed (hooks), or the last argument parsed (notify). */
  payload: unknown;
  /** Its stdin as sent, or null when stdin was a terminal or /dev/null (notify). */
  stdin: string | null;
}

/** sh, as the bridge is: one file per call, named by the time it started; never reads a terminal. */
const CAPTURE_SCRIPT = `#!/bin/sh
t=$(date +%s%N)
f="$1/$t-$$"
printf '%s\\0' "$@" > "$f.argv.tmp"
if [ ! -t 0 ]; then cat > "$f.stdin"; fi
mv "$f.argv.tmp" "$f.argv"
`;

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function setUpCapture(r: CliRig): { bridge: string[]; calls: () => Call[] } {
  const dir = join(r.root, 'calls');
  mkdirSync(dir);
  const script = join(r.root, 'capture.sh');
  writeFileSync(script, CAPTURE_SCRIPT);
  chmodSync(script, 0o755);
  const calls = (): Call[] =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.argv'))
      .sort()
      .map((f) => {
        const base = f.slice(0, -'.argv'.length);
        const argv = readFileSync(join(dir, f), 'utf8').split('\0').slice(2, -1);
        const stdinFile = join(dir, `${base}.stdin`);
        const stdin = existsSync(stdinFile) ? readFileSync(stdinFile, 'utf8') : null;
        const raw = stdin !== null && stdin !== '' ? stdin : argv.at(-1)!;
        let payload: unknown = raw;
        try {
          payload = JSON.parse(raw);
        } catch {
          // not JSON: kept as text
        }
        return { at: Number(BigInt(base.split('-')[0]!) / 1000n) / 1000, argv, payload, stdin: stdin === '' ? null : stdin };
      });
  return { bridge: ['sh', script, dir, 'T1'], calls };
}

function install(bridge: string[], r: CliRig, v: string | null): HookInstall {
  return codexHooks.install({ bridge, bridgeShell: bridge.map(shq).join(' '), dir: join(r.root, 'hooks'), cwd: r.cwd, version: v });
}

/** A stub script that notes when it has written the whole answer to each turn request. */
function timedScript(r: CliRig, transform: (reply: Reply) => Reply = (x) => x): { lastChunkAt: () => number } {
  let at = 0;
  r.stub.setScript((req) => {
    const reply = transform(defaultScript(req, r.cwd));
    // An answer without delays is written in one go as this returns (the stub awaits nothing between
    // its chunks): its last chunk leaves now, give or take the stub's own microtask. A timer set here
    // would be late by as much as the test process's event loop is.
    if (reply.kind !== 'text' || !reply.delayMs) at = performance.timeOrigin + performance.now();
    return reply;
  });
  return { lastChunkAt: () => at };
}

const eventOf = (c: Call): string => c.argv[0] ?? '';

async function waitForCall(calls: () => Call[], event: string, n: number, timeoutMs = 30_000): Promise<Call> {
  await waitUntil(() => calls().filter((c) => eventOf(c) === event).length >= n, `codex's call number ${n} of ${event}`, timeoutMs);
  return calls().filter((c) => eventOf(c) === event)[n - 1]!;
}

function save(name: string, c: Call): void {
  if (!capture) return;
  mkdirSync(FIXTURES, { recursive: true });
  // Hooks: the payload exactly as codex wrote it on stdin. notify: the argv codex passed after its `notify` program.
  const text = c.stdin ?? `${JSON.stringify(c.argv, null, 2)}\n`;
  writeFileSync(join(FIXTURES, `codex-${version}-${name}.json`), text);
}

const latencies: string[] = [];

const suite = cliSuite('codex', 'native hooks');

describe.skipIf(suite.skip)(suite.title, () => {
  let rig: CliRig | undefined;

  afterEach(async () => {
    await rig?.dispose();
    rig = undefined;
    if (latencies.length > 0) console.log(`codex ${version} hook latency (stub's last chunk to the hook's call):\n  ${latencies.join('\n  ')}`);
    latencies.length = 0;
  });

  it('hooks on the command line only: session, turn start, waiting and turn end with the exact reply, in order', async () => {
    const r = (rig = await createRig('codex', capture ? { root: CAPTURE_ROOT } : {}));
    const { bridge, calls } = setUpCapture(r);
    const inst = install(bridge, r, version);
    expect(inst.env).toEqual({});
    expect(inst.files).toEqual([]);
    const config = join(r.env.CODEX_HOME!, 'config.toml');
    const timing = timedScript(r);

    await r.start(inst.args);
    // No "Hooks need review" dialog: the hooks are trusted by the command line's own hooks.state.
    await r.waitFor('idle', { timeoutMs: 45_000 });
    expect(await r.tmux().capture()).not.toMatch(/Hooks need review/);
    expect(calls()).toEqual([]); // SessionStart waits for the first prompt

    // Turn 1: a text answer.
    await r.type('say hello please');
    const stop1 = await waitForCall(calls, 'Stop', 1);
    latencies.push(`Stop (text turn): ${(stop1.at - timing.lastChunkAt()).toFixed(1)} ms`);
    await r.waitFor('idle', { also: /stub reply to: say hello please/ });
    await r.settle();

    // Turn 2: a command that needs approval, approved.
    await r.type('Run the command that needs-approval');
    const permission = await waitForCall(calls, 'PermissionRequest', 1);
    await r.waitFor('waiting', { timeoutMs: 30_000 });
    await r.settle(1_000);
    await r.tmux().run(['send-keys', '-t', 'e2e', 'Enter']);
    const stop2 = await waitForCall(calls, 'Stop', 2);
    latencies.push(`Stop (after a tool call): ${(stop2.at - timing.lastChunkAt()).toFixed(1)} ms`);
    await r.waitFor('idle', { also: /stub: the command ran\./ });
    await r.settle();

    const seen = calls();
    expect(seen.map(eventOf)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop', 'UserPromptSubmit', 'PermissionRequest', 'Stop']);
    const [start, prompt1, , prompt2] = seen;
    const sessionId = (start!.payload as { session_id: string }).session_id;
    const read = seen.map((c) => codexHooks.read(eventOf(c), c.payload));
    expect(read).toEqual([
      [{ kind: 'session', sessionId, transcriptPath: expect.stringContaining(sessionId) as string }],
      [{ kind: 'turn-start', sessionId }],
      [{ kind: 'turn-end', sessionId, reply: 'stub reply to: say hello please', transcriptPath: expect.stringContaining(sessionId) as string }],
      [{ kind: 'turn-start', sessionId }],
      [{ kind: 'waiting', sessionId, question: 'Bash: touch approved.txt' }],
      [{ kind: 'turn-end', sessionId, reply: 'stub: the command ran.', transcriptPath: expect.stringContaining(sessionId) as string }],
    ]);
    // SessionStart comes with the first prompt, just before its UserPromptSubmit.
    expect(prompt1!.at - start!.at).toBeLessThan(1_000);
    // Every hook's payload came on stdin.
    expect(seen.every((c) => c.stdin !== null)).toBe(true);

    // Nothing of the hooks written to the codex home: no trust hashes, no hooks.json.
    expect(readFileSync(config, 'utf8')).not.toMatch(/^\[hooks|trusted_hash/m);
    expect(existsSync(join(r.env.CODEX_HOME!, 'hooks.json'))).toBe(false);

    // Esc in a turn: UserPromptSubmit, then no end event at all (codex only logs its `Interrupt`).
    r.stub.setScript((req) => ({ ...(defaultScript(req, r.cwd) as Extract<Reply, { kind: 'text' }>), chunks: 20, delayMs: 300 }));
    await r.type('tell me a long story');
    await waitForCall(calls, 'UserPromptSubmit', 3);
    await r.waitFor('busy', { timeoutMs: 20_000 });
    await r.tmux().run(['send-keys', '-t', 'e2e', 'Escape']);
    const interrupted = await r.waitFor('idle', { also: /interrupted/i, timeoutMs: 20_000 });
    await r.settle(1_500);
    expect(calls().slice(seen.length).map(eventOf), interrupted).toEqual(['UserPromptSubmit']);

    // Resumed: SessionStart again, at the first prompt, with the same session id and source "resume".
    timedScript(r);
    await r.start([...inst.args, 'resume', sessionId]);
    await r.waitFor('idle', { timeoutMs: 45_000 });
    const before = calls().length;
    await r.type('say hello again');
    const stop3 = await waitForCall(calls, 'Stop', 3);
    const resumed = calls().slice(before);
    expect(resumed.map(eventOf)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop']);
    expect(resumed[0]!.payload).toMatchObject({ session_id: sessionId, source: 'resume' });
    expect(codexHooks.read('Stop', stop3.payload)).toMatchObject([{ kind: 'turn-end', sessionId, reply: 'stub reply to: say hello again' }]);

    save('SessionStart', start!);
    save('UserPromptSubmit', prompt1!);
    save('Stop', stop1);
    save('UserPromptSubmit-before-approval', prompt2!);
    save('PermissionRequest', permission);
    save('Stop-after-tool', stop2);
    save('UserPromptSubmit-interrupted', calls()[seen.length]!);
    save('SessionStart-resume', resumed[0]!);
  }, 180_000);

  it('a release before hooks gets notify: one call for the turn and one for the title thread, which read ignores', async () => {
    const r = (rig = await createRig('codex', capture ? { root: `${CAPTURE_ROOT}-notify` } : {}));
    const { bridge, calls } = setUpCapture(r);
    // The 0.169.0 binary run with what the kit gives an older release.
    const inst = install(bridge, r, '0.168.0');
    expect(inst.args).toEqual(['-c', `notify=${JSON.stringify([...bridge, NOTIFY_EVENT])}`]);
    const timing = timedScript(r);
    await r.start(inst.args);
    await r.waitFor('idle', { timeoutMs: 45_000 });

    await r.type('say hello please');
    await waitUntil(() => calls().length >= 2, 'two notify calls (the turn and its title thread)');
    await r.waitFor('idle', { also: /stub reply to: say hello please/ });
    await r.settle(1_500);
    const seen = calls();
    expect(seen.map(eventOf)).toEqual([NOTIFY_EVENT, NOTIFY_EVENT]);
    // notify's stdin is /dev/null: the payload is the last argument.
    expect(seen.every((c) => c.stdin === null && c.argv.length === 2)).toBe(true);
    const payloads = seen.map((c) => c.payload as { 'thread-id': string; 'last-assistant-message': string });
    const main = seen[payloads.findIndex((p) => p['last-assistant-message'] === 'stub reply to: say hello please')]!;
    const title = seen.find((c) => c !== main)!;
    const threadId = (main.payload as { 'thread-id': string })['thread-id'];
    expect((title.payload as { 'thread-id': string })['thread-id']).not.toBe(threadId);
    latencies.push(`notify (text turn): ${(main.at - timing.lastChunkAt()).toFixed(1)} ms`);
    expect(codexHooks.read(NOTIFY_EVENT, main.payload)).toEqual([{ kind: 'turn-end', sessionId: threadId, reply: 'stub reply to: say hello please' }]);
    expect(codexHooks.read(NOTIFY_EVENT, title.payload)).toEqual([]);

    save('notify', main);
    save('notify-title-thread', title);
  }, 120_000);
});
