// qwen's HookKit: the settings file it installs, and what `read` makes of every payload qwen 0.24.4
// sent in test/e2e/hooks-qwen.test.ts (test/fixtures/hooks/qwen-*.json), and of payloads of other shapes.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { qwen } from '../../../src/clis/qwen/index.js';
import { QWEN_HOOK_EVENTS, qwenHooks } from '../../../src/clis/qwen/hooks.js';
import { HOOK_FIXTURES, hookFixture, kitContext } from '../../helpers/hook-fixtures.js';

const fixture = hookFixture;
const read = qwenHooks.read;
const V = 'qwen-0.24.4';
const ctx = kitContext('/p', '0.24.4', "sh /opt/jaggers/bin/jaggers-hook '/p/.jaggers/spool dir' t1");

describe('qwen hooks: install', () => {
  it('is the qwen folder kind `qwen`', () => {
    expect(qwen.hooks.qwen).toBe(qwenHooks);
  });

  it('points QWEN_CODE_SYSTEM_DEFAULTS_PATH at one settings file in the pane hook folder, with $version 4 and no flags', () => {
    const install = qwenHooks.install(ctx);
    expect(install.args).toEqual([]);
    expect(install.env).toEqual({ QWEN_CODE_SYSTEM_DEFAULTS_PATH: '/p/.jaggers/hooks/t1/qwen-system-defaults.json' });
    expect(install.files.map((f) => f.path)).toEqual(['/p/.jaggers/hooks/t1/qwen-system-defaults.json']);
    expect(install.unavailable).toBeUndefined();
    const settings = JSON.parse(install.files[0]!.text) as { $version: number; hooks: Record<string, unknown> };
    expect(settings.$version).toBe(4);
    expect(Object.keys(settings.hooks)).toEqual([...QWEN_HOOK_EVENTS]);
  });

  it('calls the bridge command with the event name appended, asynchronously, for each event', () => {
    const settings = JSON.parse(qwenHooks.install(ctx).files[0]!.text) as { hooks: Record<string, { hooks: Record<string, unknown>[] }[]> };
    for (const event of QWEN_HOOK_EVENTS) {
      const hooks = [{ type: 'command', name: 'jaggers', command: `${ctx.bridgeShell} ${event}`, async: true }];
      // Notification: permission prompts only (the idle_prompt one keeps its bridge waiting on stdin).
      expect(settings.hooks[event]).toEqual([event === 'Notification' ? { matcher: 'permission_prompt', hooks } : { hooks }]);
    }
  });
});

describe('qwen hooks: read, on qwen 0.24.4 payloads', () => {
  const start = fixture(`${V}-SessionStart-start`) as { session_id: string; transcript_path: string };
  const id = start.session_id;

  it('SessionStart (startup and resume): the session and its chat file', () => {
    expect(read('SessionStart', start)).toEqual([{ kind: 'session', sessionId: id, transcriptPath: start.transcript_path }]);
    expect(read('SessionStart', fixture(`${V}-SessionStart-resume`))).toEqual([{ kind: 'session', sessionId: id, transcriptPath: start.transcript_path }]);
  });

  it('UserPromptSubmit with the typed prompt starts a turn; the empty one after a tool result does not', () => {
    expect(read('UserPromptSubmit', fixture(`${V}-UserPromptSubmit-text`))).toEqual([{ kind: 'turn-start', sessionId: id }]);
    expect(read('UserPromptSubmit', fixture(`${V}-UserPromptSubmit-tool`))).toEqual([{ kind: 'turn-start', sessionId: id }]);
    expect(fixture(`${V}-UserPromptSubmit-tool-2`)).toMatchObject({ prompt: '' });
    expect(read('UserPromptSubmit', fixture(`${V}-UserPromptSubmit-tool-2`))).toEqual([]);
  });

  it('Stop ends the turn with last_assistant_message as the reply, exactly', () => {
    expect(read('Stop', fixture(`${V}-Stop-text`))).toEqual([
      { kind: 'turn-end', sessionId: id, reply: 'stub reply to: Say hello to the hooks', transcriptPath: start.transcript_path },
    ]);
    expect(read('Stop', fixture(`${V}-Stop-tool`))).toMatchObject([{ kind: 'turn-end', reply: 'stub: the command ran.' }]);
    expect(read('Stop', fixture(`${V}-Stop-resumed-text`))).toMatchObject([{ kind: 'turn-end', reply: 'stub reply to: Say hello after the resume' }]);
  });

  it('PermissionRequest and Notification permission_prompt: waiting, with what is asked', () => {
    expect(read('PermissionRequest', fixture(`${V}-PermissionRequest-tool`))).toEqual([
      { kind: 'waiting', sessionId: id, question: 'run_shell_command: touch approved.txt' },
    ]);
    expect(read('Notification', fixture(`${V}-Notification-tool`))).toEqual([
      { kind: 'waiting', sessionId: id, question: 'Qwen Code needs your permission to use run_shell_command' },
    ]);
  });

  it('Notification idle_prompt (after each turn) says nothing: Stop already ended the turn', () => {
    expect(fixture(`${V}-Notification-text`)).toMatchObject({ notification_type: 'idle_prompt' });
    expect(read('Notification', fixture(`${V}-Notification-text`))).toEqual([]);
  });

  it('every fixture reads without throwing, to signals naming the fixture session', () => {
    for (const name of readdirSync(HOOK_FIXTURES).filter((n) => n.startsWith(`${V}-`))) {
      const event = name.slice(V.length + 1).split('-')[0]!;
      for (const s of read(event, fixture(name.slice(0, -'.json'.length)))) expect(s.sessionId).toBe(id);
    }
  });
});

describe('qwen hooks: read, on payloads of other shapes', () => {
  it('gives [] for a payload that is not an object, and for events it does not know', () => {
    for (const p of [null, undefined, 'text', 42, [], ['a']]) expect(read('Stop', p)).toEqual([]);
    expect(read('PreToolUse', { session_id: 's' })).toEqual([]);
    expect(read('', {})).toEqual([]);
  });

  it('leaves out fields of the wrong type, never throws', () => {
    expect(read('Stop', { session_id: 42, last_assistant_message: { text: 'x' }, transcript_path: 7 })).toEqual([{ kind: 'turn-end' }]);
    expect(read('Stop', { last_assistant_message: '' })).toEqual([{ kind: 'turn-end', reply: '' }]);
    expect(read('SessionStart', { session_id: '' })).toEqual([]);
    expect(read('UserPromptSubmit', { session_id: 's', prompt: '   ' })).toEqual([]);
    expect(read('UserPromptSubmit', { session_id: 's', prompt: 5, submitted_prompt: 'typed' })).toEqual([{ kind: 'turn-start', sessionId: 's' }]);
    expect(read('PermissionRequest', { tool_name: 'edit', tool_input: 'not an object' })).toEqual([{ kind: 'waiting', question: 'edit' }]);
    expect(read('PermissionRequest', {})).toEqual([{ kind: 'waiting' }]);
    expect(read('Notification', { notification_type: ['permission_prompt'] })).toEqual([]);
  });

  it('keeps a huge reply whole', () => {
    const reply = 'x'.repeat(2_000_000);
    expect(read('Stop', { session_id: 's', last_assistant_message: reply })).toEqual([{ kind: 'turn-end', sessionId: 's', reply }]);
  });

  it('StopFailure (an API error ended the turn) ends it with no reply: its message is the error text', () => {
    expect(read('StopFailure', { session_id: 's', error: 'rate_limit', last_assistant_message: '[API Error: 429]' })).toEqual([
      { kind: 'turn-end', sessionId: 's' },
    ]);
  });
});
