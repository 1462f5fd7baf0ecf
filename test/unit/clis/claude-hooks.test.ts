// claude's HookKit: the `--settings` file it installs, and what it reads from the payloads claude
// 2.1.197 and 2.1.330 really sent (test/fixtures/hooks/claude-*, from test/e2e/hooks-claude.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { claude } from '../../../src/clis/claude/index.js';
import { claudeHooks, SETTINGS_FILE } from '../../../src/clis/claude/hooks.js';
import type { HookInstallContext, HookSignal } from '../../../src/clis/types.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/hooks');
const VERSIONS = ['2.1.197', '2.1.330'];
type Payload = Record<string, unknown>;

const fixture = (version: string, name: string): Payload => JSON.parse(readFileSync(path.join(FIXTURES, `claude-${version}-${name}.json`), 'utf8')) as Payload;
/** The event a fixture's name starts with (`Stop-after-tool` -> `Stop`). */
const eventOf = (name: string): string => name.split('-')[0] ?? '';
const read = (name: string, p: unknown): HookSignal[] => claudeHooks.read(eventOf(name), p);

/** What each saved payload must read as. */
const EXPECTED: Record<string, (p: Payload) => HookSignal[]> = {
  'SessionStart-startup': (p) => [{ kind: 'session', sessionId: p.session_id as string, transcriptPath: p.transcript_path as string }],
  'SessionStart-resume': (p) => [{ kind: 'session', sessionId: p.session_id as string, transcriptPath: p.transcript_path as string }],
  UserPromptSubmit: (p) => [{ kind: 'turn-start', sessionId: p.session_id as string }],
  'UserPromptSubmit-background-agent': (p) => [{ kind: 'turn-start', sessionId: p.session_id as string }],
  // The finished background agent handed back to the model: no person's prompt, no new turn.
  'UserPromptSubmit-task-notification': () => [],
  Stop: (p) => [
    {
      kind: 'turn-end',
      sessionId: p.session_id as string,
      reply: 'stub reply to: Say hello number 1 for the hooks test',
      transcriptPath: p.transcript_path as string,
    },
  ],
  'Stop-after-tool': (p) => [
    { kind: 'turn-end', sessionId: p.session_id as string, reply: 'stub: the command ran.', transcriptPath: p.transcript_path as string },
  ],
  // A subagent still runs in the background and will wake the session: the turn goes on.
  'Stop-background-agent-launched': () => [],
  'Stop-background-agent-finished': (p) => [
    { kind: 'turn-end', sessionId: p.session_id as string, reply: 'stub: the background agent finished.', transcriptPath: p.transcript_path as string },
  ],
  'PermissionRequest-bash': (p) => [{ kind: 'waiting', sessionId: p.session_id as string, question: 'Bash: touch approved.txt' }],
  'Notification-permission_prompt': (p) => [{ kind: 'waiting', sessionId: p.session_id as string, question: 'Claude needs your permission' }],
};

const saved = readdirSync(FIXTURES)
  .map((f) => /^claude-(\d+\.\d+\.\d+)-(.+)\.json$/.exec(f))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ version: m[1] as string, name: m[2] as string }));

const ctx: HookInstallContext = {
  bridge: ['sh', '/opt/jaggers/bin/jaggers-hook', '/p/.jaggers/hooks/spool', 'claude-1'],
  bridgeShell: "sh '/opt/jaggers/bin/jaggers-hook' '/p/.jaggers/hooks/spool' 'claude-1'",
  dir: '/p/.jaggers/hooks/claude-1',
  cwd: '/p',
  version: '2.1.330',
};

describe('claude hooks: install', () => {
  it('is the `claude` kind of the claude folder', () => {
    expect(claude.hooks.claude).toBe(claudeHooks);
  });

  it('passes one settings file of its own, under the pane folder, with `--settings`; no environment', () => {
    const inst = claudeHooks.install(ctx);
    const file = path.join(ctx.dir, SETTINGS_FILE);
    expect(inst.args).toEqual(['--settings', file]);
    expect(inst.env).toEqual({});
    expect(inst.files.map((f) => f.path)).toEqual([file]);
  });

  it('hooks the six events to the bridge, the event name appended, and nothing else in the file', () => {
    const [f] = claudeHooks.install(ctx).files;
    const settings = JSON.parse(f?.text ?? '') as { hooks: Record<string, { matcher?: string; hooks: unknown[] }[]> };
    expect(Object.keys(settings)).toEqual(['hooks']);
    expect(Object.keys(settings.hooks)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop', 'PermissionRequest', 'Notification', 'PreToolUse']);
    for (const [event, groups] of Object.entries(settings.hooks)) {
      expect(groups).toHaveLength(1);
      expect(groups[0]?.hooks).toEqual([{ type: 'command', command: `${ctx.bridgeShell} ${event}`, timeout: 10 }]);
    }
    expect(settings.hooks.SessionStart?.[0]?.matcher).toBeUndefined();
    expect(settings.hooks.PermissionRequest?.[0]?.matcher).toBeUndefined();
    expect(settings.hooks.Notification?.[0]?.matcher).toBe('permission_prompt|elicitation_dialog');
    expect(settings.hooks.PreToolUse?.[0]?.matcher).toBeUndefined();
  });

  it('is the same for either release (both were checked)', () => {
    expect(claudeHooks.install({ ...ctx, version: '2.1.197' })).toEqual(claudeHooks.install({ ...ctx, version: null }));
  });
});

describe('claude hooks: read, on the payloads claude sent', () => {
  it('has payloads of both releases, and an expectation for each', () => {
    for (const v of VERSIONS)
      expect(
        saved
          .filter((s) => s.version === v)
          .map((s) => s.name)
          .sort(),
      ).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const { version, name } of saved) {
    it(`${version} ${name}`, () => {
      const p = fixture(version, name);
      const expected = EXPECTED[name];
      expect(expected, `an expectation for ${name}`).toBeDefined();
      expect(read(name, p)).toEqual(expected?.(p));
    });
  }

  it.each(VERSIONS)('%s: a background agent is one turn: one turn-start, one turn-end with the last reply', (version) => {
    const calls = [
      'UserPromptSubmit-background-agent',
      'Stop-background-agent-launched',
      'UserPromptSubmit-task-notification',
      'Stop-background-agent-finished',
    ];
    const signals = calls.flatMap((name) => read(name, fixture(version, name)));
    expect(signals.map((s) => s.kind)).toEqual(['turn-start', 'turn-end']);
    expect(signals[1]).toMatchObject({ reply: 'stub: the background agent finished.' });
  });

  it('gives the reply exactly, however long, with its white space', () => {
    const reply = `  line one\n\n${'x'.repeat(1_000_000)}\n`;
    expect(claudeHooks.read('Stop', { ...fixture('2.1.330', 'Stop'), last_assistant_message: reply })[0]).toMatchObject({ kind: 'turn-end', reply });
    expect(claudeHooks.read('Stop', { last_assistant_message: '' })).toEqual([{ kind: 'turn-end', reply: '' }]);
  });
});

describe('claude hooks: PreToolUse, for the watchdog', () => {
  it('gives the tool and its input (the loop check compares them), bounded', () => {
    const p = { session_id: 's-1', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test', description: 'run the tests' } };
    expect(claudeHooks.read('PreToolUse', p)).toEqual([
      { kind: 'tool', sessionId: 's-1', tool: 'Bash', input: '{"command":"npm test","description":"run the tests"}' },
    ]);
    const long = claudeHooks.read('PreToolUse', { tool_name: 'Write', tool_input: { content: 'x'.repeat(10_000) } })[0];
    expect(long && 'input' in long ? long.input.length : 0).toBe(2000);
  });
});

describe('claude hooks: read, defensively', () => {
  it('an unknown event, or one jaggers has no use for, says nothing', () => {
    // A PreToolUse without a tool name (here a Stop payload) says nothing.
    expect(claudeHooks.read('PreToolUse', fixture('2.1.330', 'Stop'))).toEqual([]);
    expect(claudeHooks.read('', {})).toEqual([]);
    expect(claudeHooks.read('Notification', { notification_type: 'idle_prompt', message: 'Claude is waiting for your input' })).toEqual([]);
  });

  it.each([null, undefined, 'not json', 42, [], ['Stop']])('a payload that is no object (%j): the event alone, no ids', (payload) => {
    expect(claudeHooks.read('SessionStart', payload)).toEqual([]);
    expect(claudeHooks.read('UserPromptSubmit', payload)).toEqual([{ kind: 'turn-start' }]);
    expect(claudeHooks.read('Stop', payload)).toEqual([{ kind: 'turn-end' }]);
    expect(claudeHooks.read('PermissionRequest', payload)).toEqual([{ kind: 'waiting' }]);
    expect(claudeHooks.read('Notification', payload)).toEqual([]);
  });

  it('fields of the wrong type are left out', () => {
    const odd = {
      session_id: 42,
      transcript_path: ['x'],
      last_assistant_message: { text: 'hi' },
      background_tasks: 'subagent',
      tool_name: 7,
      tool_input: null,
      prompt: 3,
    };
    expect(claudeHooks.read('SessionStart', odd)).toEqual([]);
    expect(claudeHooks.read('UserPromptSubmit', odd)).toEqual([{ kind: 'turn-start' }]);
    expect(claudeHooks.read('Stop', odd)).toEqual([{ kind: 'turn-end' }]);
    expect(claudeHooks.read('PermissionRequest', odd)).toEqual([{ kind: 'waiting' }]);
    expect(claudeHooks.read('Stop', { session_id: '', background_tasks: [null, 3, { type: 7 }] })).toEqual([{ kind: 'turn-end' }]);
  });

  it('never throws on a payload cut short, or on any field dropped or nulled', () => {
    for (const { version, name } of saved) {
      const p = fixture(version, name);
      const text = JSON.stringify(p);
      for (let i = 0; i < text.length; i += 97) expect(() => read(name, text.slice(0, i))).not.toThrow();
      for (const key of Object.keys(p)) {
        expect(() => read(name, { ...p, [key]: undefined })).not.toThrow();
        expect(() => read(name, { ...p, [key]: null })).not.toThrow();
      }
    }
  });
});

describe('claude hooks: prompts no person typed, work still in the background', () => {
  const base = { session_id: 's-1' };
  it('a prompt claude injects (`source` other than user or sdk, or a task notification) starts no turn', () => {
    expect(claudeHooks.read('UserPromptSubmit', { ...base, prompt: 'hi', source: 'system' })).toEqual([]);
    expect(claudeHooks.read('UserPromptSubmit', { ...base, prompt: 'hi', source: 'loop_wakeup' })).toEqual([]);
    expect(claudeHooks.read('UserPromptSubmit', { ...base, prompt: '\n<task-notification>\n<task-id>a</task-id>' })).toEqual([]);
    expect(claudeHooks.read('UserPromptSubmit', { ...base, prompt: 'hi', source: 'user' })).toEqual([{ kind: 'turn-start', sessionId: 's-1' }]);
    expect(claudeHooks.read('UserPromptSubmit', { ...base, prompt: 'explain <task-notification>' })).toEqual([{ kind: 'turn-start', sessionId: 's-1' }]);
  });

  it('a Stop while a subagent or workflow runs in the background is no end; a background shell or monitor does not hold the turn', () => {
    const task = (type: string) => ({ id: 't1', type, status: 'running', description: 'd' });
    expect(claudeHooks.read('Stop', { ...base, background_tasks: [task('subagent')] })).toEqual([]);
    expect(claudeHooks.read('Stop', { ...base, background_tasks: [task('shell'), task('workflow')] })).toEqual([]);
    expect(claudeHooks.read('Stop', { ...base, last_assistant_message: 'ok', background_tasks: [task('shell'), task('monitor')] })).toEqual([
      { kind: 'turn-end', sessionId: 's-1', reply: 'ok' },
    ]);
    expect(claudeHooks.read('Stop', { ...base, last_assistant_message: 'ok', background_tasks: [] })).toEqual([
      { kind: 'turn-end', sessionId: 's-1', reply: 'ok' },
    ]);
  });
});

describe('claude hooks: what a person is asked', () => {
  it('names the tool and what it would do, or the question put, on one bounded line', () => {
    const ask = (tool_input: unknown, tool_name: unknown = 'Bash') => claudeHooks.read('PermissionRequest', { tool_name, tool_input });
    expect(ask({ file_path: '/p/a.ts', content: 'x' }, 'Write')).toEqual([{ kind: 'waiting', question: 'Write: /p/a.ts' }]);
    expect(ask({}, 'mcp__jaggers__handoff')).toEqual([{ kind: 'waiting', question: 'mcp__jaggers__handoff' }]);
    expect(ask({ command: 'printf a\n\nb' })).toEqual([{ kind: 'waiting', question: 'Bash: printf a b' }]);
    // AskUserQuestion's input shape (from claude's tool schema, not seen offline: the stub never asks).
    expect(ask({ questions: [{ question: 'Which database?', header: 'DB', options: [] }] }, 'AskUserQuestion')).toEqual([
      { kind: 'waiting', question: 'Which database?' },
    ]);
    const long = ask({ command: 'y'.repeat(5_000) })[0];
    expect(long?.kind === 'waiting' ? long.question?.length : 0).toBe(300);
    expect(claudeHooks.read('PermissionRequest', { tool_input: null })).toEqual([{ kind: 'waiting' }]);
  });

  it('an MCP server asking the person (elicitation) is waiting too', () => {
    expect(claudeHooks.read('Notification', { session_id: 's', notification_type: 'elicitation_dialog', message: 'Pick one' })).toEqual([
      { kind: 'waiting', sessionId: 's', question: 'Pick one' },
    ]);
  });
});
