// opencode 1.18.33's hook kit: `read` on the payloads its plugin sent in a real run (test/fixtures/hooks,
// from test/e2e/hooks-opencode.test.ts) and on payloads of other shapes; `install`'s folder; and the
// plugin itself, run in node on a recorded sequence of bus events with a stand-in bridge.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { opencodeHooks } from '../../../src/clis/opencode/hooks.js';
import type { HookInstallContext } from '../../../src/clis/types.js';
import { waitUntil } from '../../e2e/drive.js';
import { createHookCapture, writeInstall, type HookCapture } from '../../e2e/hook-capture.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'hooks', `opencode-1.18.33-${name}.json`), 'utf8')) as unknown;
const SESSION = 'ses_de9fb26feffeRJ4mHHfGw6LC5t';
const { read } = opencodeHooks;

describe('opencode hooks: read, on real payloads', () => {
  it('chat.message: the session and the turn start', () => {
    expect(read('chat.message', fixture('chat.message'))).toEqual([
      { kind: 'session', sessionId: SESSION },
      { kind: 'turn-start', sessionId: SESSION },
    ]);
  });

  it('session.status: busy is a turn start, idle says nothing (session.idle follows)', () => {
    expect(read('session.status', fixture('session.status-busy'))).toEqual([{ kind: 'turn-start', sessionId: SESSION }]);
    expect(read('session.status', fixture('session.status-idle'))).toEqual([]);
  });

  it('session.idle: the turn end with the last assistant message the plugin kept', () => {
    expect(read('session.idle', fixture('session.idle-reply'))).toEqual([{ kind: 'turn-end', sessionId: SESSION, reply: 'stub reply to: say hello' }]);
    expect(read('session.idle', fixture('session.idle-after-tool'))).toEqual([{ kind: 'turn-end', sessionId: SESSION, reply: 'stub: the command ran.' }]);
  });

  it('permission.asked: waiting, with the tool and its command', () => {
    expect(read('permission.asked', fixture('permission.asked'))).toEqual([{ kind: 'waiting', sessionId: SESSION, question: 'bash: touch approved.txt' }]);
  });
});

describe('opencode hooks: read, defensively', () => {
  it('a payload that is not an object, or an event it does not know: nothing', () => {
    for (const payload of [null, undefined, 'session.idle', 42, [], true]) {
      for (const event of ['chat.message', 'session.status', 'session.idle', 'permission.asked']) expect(read(event, payload)).toEqual([]);
    }
    expect(read('session.diff', fixture('session.idle-reply'))).toEqual([]);
    expect(read('', {})).toEqual([]);
  });

  it('missing or mistyped fields: the signal without them', () => {
    expect(read('chat.message', {})).toEqual([{ kind: 'turn-start' }]);
    expect(read('chat.message', { sessionID: 7 })).toEqual([{ kind: 'turn-start' }]);
    expect(read('session.idle', { type: 'session.idle' })).toEqual([{ kind: 'turn-end' }]);
    expect(read('session.idle', { properties: 'x', lastAssistantMessage: 3 })).toEqual([{ kind: 'turn-end' }]);
    // No text kept (a turn stopped before any): no reply rather than an empty one.
    expect(read('session.idle', { properties: { sessionID: 's' }, lastAssistantMessage: '' })).toEqual([{ kind: 'turn-end', sessionId: 's' }]);
    expect(read('session.status', { properties: { sessionID: 's', status: 'busy' } })).toEqual([]);
    expect(read('session.status', { properties: { status: { type: 'retry' } } })).toEqual([]);
    expect(read('permission.asked', { properties: { patterns: [1, null] } })).toEqual([{ kind: 'waiting' }]);
    expect(read('permission.asked', { properties: { permission: 'edit', patterns: 'x' } })).toEqual([{ kind: 'waiting', question: 'edit' }]);
  });

  it('huge text: the reply whole, the question cut to 500 characters', () => {
    const big = 'x'.repeat(200_000);
    expect(read('session.idle', { properties: { sessionID: 's' }, lastAssistantMessage: big })).toEqual([{ kind: 'turn-end', sessionId: 's', reply: big }]);
    const [waiting] = read('permission.asked', { properties: { permission: 'bash', patterns: [big] } });
    expect(waiting?.kind === 'waiting' && waiting.question?.length).toBe(500);
  });
});

describe('opencode hooks: install', () => {
  let root: string;
  let capture: HookCapture;
  let ctx: HookInstallContext;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'jaggers-oc-hooks-'));
    capture = createHookCapture(root);
    ctx = capture.context({ dir: path.join(root, 'hooks', 'term-1'), cwd: root, version: '1.18.33' });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a config folder of its own: the plugin, and what stops opencode installing @opencode-ai/plugin there', () => {
    const install = opencodeHooks.install(ctx);
    expect(install.args).toEqual([]);
    expect(install.env).toEqual({ OPENCODE_CONFIG_DIR: ctx.dir });
    expect(install.files.map((f) => path.relative(ctx.dir, f.path)).sort()).toEqual(['node_modules/.jaggers', 'package-lock.json', 'plugins/jaggers.js']);
    const lock = JSON.parse(install.files.find((f) => f.path.endsWith('package-lock.json'))?.text ?? '') as {
      packages: Record<string, { dependencies: unknown }>;
    };
    expect(lock.packages['']?.dependencies).toEqual({ '@opencode-ai/plugin': '1.18.33' });
    // An unknown version: opencode compares names only.
    const unknown = opencodeHooks.install({ ...ctx, version: null }).files.find((f) => f.path.endsWith('package-lock.json'))?.text;
    expect(unknown).toContain('"@opencode-ai/plugin": "*"');
    const plugin = install.files.find((f) => f.path.endsWith('jaggers.js'))?.text ?? '';
    expect(plugin).not.toMatch(/@opencode-ai\/plugin/);
    // Every export of a plugin module must be a plugin function.
    expect(plugin.match(/^export /gm)).toHaveLength(1);
  });

  it('the plugin passes on the right events, in order, one busy a run, the reply with the idle, none of a subagent session', async () => {
    const install = opencodeHooks.install(ctx);
    writeInstall(install);
    const mod = (await import(pathToFileURL(path.join(ctx.dir, 'plugins', 'jaggers.js')).href)) as Record<
      string,
      () => Promise<Record<string, (...a: unknown[]) => Promise<void>>>
    >;
    expect(Object.keys(mod)).toEqual(['JaggersHooks']);
    const hooks = await mod.JaggersHooks!();
    const bus = (type: string, properties: Record<string, unknown>): Promise<void> => hooks.event!({ event: { id: `evt_${type}`, type, properties } });
    const S = 'ses_main';
    const CHILD = 'ses_child';
    await bus('session.created', { sessionID: S, info: { id: S } });
    await hooks['chat.message']!(
      { sessionID: S, agent: 'build' },
      {
        message: { id: 'msg_u', role: 'user' },
        parts: [
          { type: 'text', text: 'say ' },
          { type: 'text', text: 'hello' },
          { type: 'text', text: '<file>', synthetic: true },
        ],
      },
    );
    await bus('session.status', { sessionID: S, status: { type: 'busy' } });
    await bus('message.updated', { sessionID: S, info: { id: 'msg_a1', role: 'assistant', sessionID: S } });
    await bus('message.part.updated', { sessionID: S, part: { id: 'p1', messageID: 'msg_a1', sessionID: S, type: 'text', text: '' } });
    await bus('message.part.delta', { sessionID: S, messageID: 'msg_a1', partID: 'p1', field: 'text', delta: 'calling' });
    // A subagent: its own session, idle before the main one.
    await bus('session.created', { sessionID: CHILD, info: { id: CHILD, parentID: S } });
    await hooks['chat.message']!({ sessionID: CHILD }, { parts: [{ type: 'text', text: 'sub task' }] });
    await bus('session.status', { sessionID: CHILD, status: { type: 'busy' } });
    await bus('session.idle', { sessionID: CHILD });
    await bus('session.status', { sessionID: S, status: { type: 'busy' } });
    await bus('permission.asked', { id: 'per_1', sessionID: S, permission: 'bash', patterns: ['touch a'] });
    await bus('session.diff', { sessionID: S, diff: [] });
    // Answered: busy again (passed on), then once per step (not).
    await bus('session.status', { sessionID: S, status: { type: 'busy' } });
    await bus('session.status', { sessionID: S, status: { type: 'busy' } });
    // The final message: its text streamed, then whole.
    await bus('message.updated', { sessionID: S, info: { id: 'msg_a2', role: 'assistant', sessionID: S } });
    await bus('message.part.updated', { sessionID: S, part: { id: 'p2', messageID: 'msg_a2', sessionID: S, type: 'text', text: '' } });
    await bus('message.part.delta', { sessionID: S, messageID: 'msg_a2', partID: 'p2', field: 'text', delta: 'done ' });
    await bus('message.part.updated', { sessionID: S, part: { id: 'p2', messageID: 'msg_a2', sessionID: S, type: 'text', text: 'done here.' } });
    await bus('message.part.updated', { sessionID: S, part: { id: 'p3', messageID: 'msg_a2', sessionID: S, type: 'tool', tool: 'bash' } });
    await bus('session.status', { sessionID: S, status: { type: 'busy' } });
    await bus('session.status', { sessionID: S, status: { type: 'idle' } });
    await bus('session.idle', { sessionID: S });

    // The calls go one at a time, in order: the last one there means all are.
    await waitUntil(() => capture.calls().some((c) => c.event === 'session.idle'), 'the session.idle call', 10_000);
    const calls = capture.calls();
    expect(calls.map((c) => c.argv)).toEqual([['chat.message'], ['session.status'], ['permission.asked'], ['session.status'], ['session.idle']]);
    expect(calls[0]?.payload).toEqual({ sessionID: S, agent: 'build', text: 'say hello' });
    expect(calls[4]?.payload).toEqual({ id: 'evt_session.idle', type: 'session.idle', properties: { sessionID: S }, lastAssistantMessage: 'done here.' });
    expect(calls.flatMap((c) => opencodeHooks.read(c.event, c.payload)).map((s) => s.kind)).toEqual([
      'session',
      'turn-start',
      'turn-start',
      'waiting',
      'turn-start',
      'turn-end',
    ]);
  });

  it('a bridge that cannot be started does not throw into opencode', async () => {
    const install = opencodeHooks.install({ ...ctx, bridge: [path.join(root, 'no-such-bridge')] });
    writeInstall(install);
    const mod = (await import(`${pathToFileURL(path.join(ctx.dir, 'plugins', 'jaggers.js')).href}?missing`)) as Record<
      string,
      () => Promise<Record<string, (...a: unknown[]) => Promise<void>>>
    >;
    const hooks = await mod.JaggersHooks!();
    await expect(hooks.event!({ event: { type: 'session.idle', properties: { sessionID: 's' } } })).resolves.toBeUndefined();
    await expect(hooks.event!({ event: null })).resolves.toBeUndefined();
    await expect(hooks['chat.message']!(undefined, undefined)).resolves.toBeUndefined();
  });
});
