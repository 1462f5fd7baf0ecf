// copilot 1.0.102's hook kit: `read` on the payloads its hooks sent in a real run (test/fixtures/hooks,
// from test/e2e/hooks-copilot.test.ts) and on payloads of other shapes; `install`'s plugin folder, its
// hook commands run as copilot runs them (sh, the payload on stdin) against a stand-in bridge.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COPILOT_EVENTS, copilotHooks } from '../../../src/clis/copilot/hooks.js';
import type { HookInstallContext } from '../../../src/clis/types.js';
import { createHookCapture, type HookCapture } from '../../e2e/hook-capture.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'hooks', `copilot-1.0.102-${name}.json`), 'utf8')) as unknown;
const SESSION = '38b6e0b6-aff9-4fb7-bdc6-5c3e263948c8';
const TRANSCRIPT = `/tmp/jaggers-e2e-copilot-Ku11Z8/home-copilot/.copilot/session-state/${SESSION}/events.jsonl`;
const { read } = copilotHooks;

describe('copilot hooks: read, on real payloads', () => {
  it('sessionStart (at the first prompt): the session', () => {
    expect(read('sessionStart', fixture('sessionStart'))).toEqual([{ kind: 'session', sessionId: SESSION }]);
  });

  it('userPromptSubmitted: the turn start', () => {
    expect(read('userPromptSubmitted', fixture('userPromptSubmitted'))).toEqual([{ kind: 'turn-start', sessionId: SESSION }]);
  });

  it('agentStop: the turn end with the transcript path and no reply (the payload has none)', () => {
    expect(read('agentStop', fixture('agentStop'))).toEqual([{ kind: 'turn-end', sessionId: SESSION, transcriptPath: TRANSCRIPT }]);
    expect(read('agentStop', fixture('agentStop-after-tool'))).toEqual([{ kind: 'turn-end', sessionId: SESSION, transcriptPath: TRANSCRIPT }]);
  });

  it('permissionRequest and the permission_prompt notification: waiting, with the question', () => {
    expect(read('permissionRequest', fixture('permissionRequest'))).toEqual([{ kind: 'waiting', sessionId: SESSION, question: 'bash: touch approved.txt' }]);
    expect(read('notification', fixture('notification-permission_prompt'))).toEqual([
      { kind: 'waiting', sessionId: SESSION, question: 'Run command: touch approved.txt' },
    ]);
  });
});

describe('copilot hooks: read, defensively', () => {
  it('a payload that is not an object, or an event it does not know: nothing', () => {
    for (const payload of [null, undefined, 'agentStop', 42, [], false]) {
      for (const event of COPILOT_EVENTS) expect(read(event, payload)).toEqual([]);
    }
    expect(read('sessionEnd', fixture('agentStop'))).toEqual([]);
    expect(read('', {})).toEqual([]);
  });

  it('other notifications (a shell command done, the agent idle) say nothing', () => {
    const base = fixture('notification-permission_prompt') as Record<string, unknown>;
    expect(read('notification', { ...base, notification_type: 'shell_completed' })).toEqual([]);
    expect(read('notification', { ...base, notification_type: undefined })).toEqual([]);
  });

  it('missing or mistyped fields: the signal without them; a session start without an id: nothing', () => {
    expect(read('sessionStart', { sessionId: 12 })).toEqual([]);
    expect(read('sessionStart', { sessionId: 's', transcriptPath: '/t' })).toEqual([{ kind: 'session', sessionId: 's', transcriptPath: '/t' }]);
    expect(read('userPromptSubmitted', {})).toEqual([{ kind: 'turn-start' }]);
    expect(read('agentStop', { sessionId: '', transcriptPath: ['x'] })).toEqual([{ kind: 'turn-end' }]);
    expect(read('permissionRequest', { toolInput: 'touch' })).toEqual([{ kind: 'waiting' }]);
    expect(read('permissionRequest', { toolName: 'edit', toolInput: { command: 5 } })).toEqual([{ kind: 'waiting', question: 'edit' }]);
    expect(read('notification', { notification_type: 'permission_prompt', message: {} })).toEqual([{ kind: 'waiting' }]);
  });

  it('huge text: the question cut to 500 characters', () => {
    const big = 'y'.repeat(100_000);
    const [a] = read('permissionRequest', { toolName: 'bash', toolInput: { command: big } });
    const [b] = read('notification', { notification_type: 'permission_prompt', message: big });
    expect(a?.kind === 'waiting' && a.question?.length).toBe(500);
    expect(b?.kind === 'waiting' && b.question?.length).toBe(500);
  });
});

describe('copilot hooks: install', () => {
  let root: string;
  let capture: HookCapture;
  let ctx: HookInstallContext;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'jaggers-cp hooks-'));
    capture = createHookCapture(root);
    ctx = capture.context({ dir: path.join(root, 'hooks', 'term-1'), cwd: root, version: '1.0.102' });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a plugin folder passed with --plugin-dir: its manifest and hooks/hooks.json, nothing in the project', () => {
    const install = copilotHooks.install(ctx);
    expect(install.args).toEqual(['--plugin-dir', ctx.dir]);
    expect(install.env).toEqual({});
    expect(install.files.map((f) => path.relative(ctx.dir, f.path)).sort()).toEqual(['.plugin/plugin.json', 'hooks/hooks.json']);
    const manifest = JSON.parse(install.files[0]?.text ?? '') as { name: string };
    expect(manifest.name).toBe('jaggers-hooks');
  });

  it('each hook command, run by sh with the payload on stdin, calls the bridge with its event name and that payload', () => {
    const hooksJson = JSON.parse(copilotHooks.install(ctx).files.find((f) => f.path.endsWith('hooks.json'))?.text ?? '') as {
      version: number;
      hooks: Record<string, { type: string; bash: string; timeoutSec: number }[]>;
    };
    expect(hooksJson.version).toBe(1);
    expect(Object.keys(hooksJson.hooks)).toEqual([...COPILOT_EVENTS]);
    for (const event of COPILOT_EVENTS) {
      const [hook] = hooksJson.hooks[event] ?? [];
      expect(hook?.type).toBe('command');
      // The folder's name has a space in it: the command must quote it.
      const out = execFileSync('sh', ['-c', hook?.bash ?? ''], { input: JSON.stringify({ sessionId: 's', event }) });
      expect(out.toString()).toBe('');
    }
    expect(capture.calls().map((c) => [c.argv, c.payload])).toEqual(COPILOT_EVENTS.map((event) => [[event], { sessionId: 's', event }]));
  });
});
