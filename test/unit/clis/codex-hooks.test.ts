// codex's hook kit (src/clis/codex/hooks.ts): what it adds to codex's command line, and what it reads
// in the payloads codex 0.169.0 really sent (test/fixtures/hooks/codex-0.169.0-*.json, saved by
// test/e2e/hooks-codex.test.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexHookHash, codexHooks, NOTIFY_EVENT } from '../../../src/clis/codex/hooks.js';
import type { HookInstallContext } from '../../../src/clis/types.js';

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'hooks');
const fixtureText = (name: string): string => readFileSync(join(FIXTURES, `codex-0.169.0-${name}.json`), 'utf8');
const fixture = (name: string): Record<string, unknown> => JSON.parse(fixtureText(name)) as Record<string, unknown>;
/** An argv-style fixture: the arguments codex added after its notify program (the event name, then the payload). */
const argvFixture = (name: string): [string, string] => JSON.parse(fixtureText(name)) as [string, string];

const SESSION = '01a215f1-4d1e-7f31-9c32-4995f1628f3f';
const TRANSCRIPT = `/tmp/jaggers-e2e-codex-capture/home-codex/.codex/sessions/2026/11/26/rollout-2026-11-26T03-41-05-${SESSION}.jsonl`;

describe('codex hooks: read on the payloads codex 0.169.0 sent', () => {
  const read = codexHooks.read;

  it('SessionStart gives the session (the thread id) and its rollout file, at start and on resume', () => {
    expect(read('SessionStart', fixture('SessionStart'))).toEqual([{ kind: 'session', sessionId: SESSION, transcriptPath: TRANSCRIPT }]);
    expect(read('SessionStart', fixture('SessionStart-resume'))).toEqual([{ kind: 'session', sessionId: SESSION, transcriptPath: TRANSCRIPT }]);
  });

  it('UserPromptSubmit starts a turn', () => {
    for (const name of ['UserPromptSubmit', 'UserPromptSubmit-before-approval', 'UserPromptSubmit-interrupted']) {
      expect(read('UserPromptSubmit', fixture(name))).toEqual([{ kind: 'turn-start', sessionId: SESSION }]);
    }
  });

  it('PermissionRequest waits for a person, naming the tool and its command', () => {
    expect(read('PermissionRequest', fixture('PermissionRequest'))).toEqual([{ kind: 'waiting', sessionId: SESSION, question: 'Bash: touch approved.txt' }]);
  });

  it('Stop ends the turn with the reply exactly as the stub sent it', () => {
    expect(read('Stop', fixture('Stop'))).toEqual([
      { kind: 'turn-end', sessionId: SESSION, reply: 'stub reply to: say hello please', transcriptPath: TRANSCRIPT },
    ]);
    expect(read('Stop', fixture('Stop-after-tool'))).toEqual([
      { kind: 'turn-end', sessionId: SESSION, reply: 'stub: the command ran.', transcriptPath: TRANSCRIPT },
    ]);
  });

  it("notify's agent-turn-complete ends the thread's turn, whether the payload comes parsed or as text", () => {
    const [event, payload] = argvFixture('notify');
    expect(event).toBe(NOTIFY_EVENT);
    const expected = [{ kind: 'turn-end', sessionId: '01a215f1-7b93-79c0-8835-06f426d9ae3b', reply: 'stub reply to: say hello please' }];
    expect(read(event, JSON.parse(payload))).toEqual(expected);
    expect(read(event, payload)).toEqual(expected);
  });

  it("notify for codex's title thread (another thread id, a JSON title as its answer) is ignored", () => {
    const [event, payload] = argvFixture('notify-title-thread');
    expect(read(event, JSON.parse(payload))).toEqual([]);
    expect(read(event, payload)).toEqual([]);
  });
});

describe('codex hooks: read is defensive', () => {
  const read = codexHooks.read;
  const events = ['SessionStart', 'UserPromptSubmit', 'PermissionRequest', 'Stop', NOTIFY_EVENT, 'PreToolUse', ''];

  it('a payload that is not an object gives nothing and never throws', () => {
    for (const event of events) {
      for (const payload of [undefined, null, 42, true, 'not json', '[1,2]', '"text"', [], [{ session_id: 'x' }]]) {
        expect(read(event, payload), `${event} ${JSON.stringify(payload)}`).toEqual([]);
      }
    }
  });

  it('an event it has no use for gives nothing', () => {
    expect(read('PreToolUse', fixture('PermissionRequest'))).toEqual([]);
    expect(read('SessionEnd', fixture('SessionStart'))).toEqual([]);
    expect(read('stop', fixture('Stop'))).toEqual([]);
  });

  it('fields of the wrong type or missing are left out', () => {
    expect(read('SessionStart', { session_id: 42 })).toEqual([]);
    expect(read('SessionStart', { session_id: '' })).toEqual([]);
    expect(read('SessionStart', { session_id: 's', transcript_path: ['x'] })).toEqual([{ kind: 'session', sessionId: 's' }]);
    expect(read('UserPromptSubmit', {})).toEqual([{ kind: 'turn-start' }]);
    expect(read('UserPromptSubmit', { session_id: null })).toEqual([{ kind: 'turn-start' }]);
    expect(read('PermissionRequest', {})).toEqual([{ kind: 'waiting' }]);
    expect(read('PermissionRequest', { tool_name: 'Bash', tool_input: 'rm -rf /' })).toEqual([{ kind: 'waiting', question: 'Bash' }]);
    expect(read('PermissionRequest', { tool_input: { command: ['ls'] } })).toEqual([{ kind: 'waiting' }]);
    expect(read('Stop', { session_id: 's', last_assistant_message: null })).toEqual([{ kind: 'turn-end', sessionId: 's' }]);
    expect(read('Stop', { last_assistant_message: { text: 'x' } })).toEqual([{ kind: 'turn-end' }]);
    expect(read(NOTIFY_EVENT, { type: 'agent-turn-complete' })).toEqual([{ kind: 'turn-end' }]);
    expect(read(NOTIFY_EVENT, { type: 'approval-requested', 'thread-id': 't' })).toEqual([]);
    expect(read(NOTIFY_EVENT, '{"type":"agent-turn-complete"')).toEqual([]);
  });

  it('the reply is kept exactly: blank, surrounding space, several paragraphs, huge', () => {
    for (const reply of ['', '  padded  \n', 'one\n\ntwo\n\n```\ncode\n```', 'x'.repeat(5_000_000)]) {
      expect(read('Stop', { ...fixture('Stop'), last_assistant_message: reply })[0]).toMatchObject({ kind: 'turn-end', reply });
    }
  });

  it('a reply that is JSON but not a bare title still ends the turn', () => {
    for (const reply of ['{"title":"x","body":"y"}', '{"title":1}', '{"title":"x"', '["title"]']) {
      expect(read(NOTIFY_EVENT, { type: 'agent-turn-complete', 'thread-id': 't', 'last-assistant-message': reply })).toEqual([
        { kind: 'turn-end', sessionId: 't', reply },
      ]);
    }
  });
});

describe('codex hooks: install', () => {
  const bridge = ['sh', '/opt/jaggers/bin/jaggers-hook', '/p/.jaggers/spool', 'T 1'];
  const ctx = (version: string | null, bridgeShell = `'sh' '/opt/jaggers/bin/jaggers-hook' '/p/.jaggers/spool' 'T 1'`): HookInstallContext => ({
    bridge,
    bridgeShell,
    dir: '/p/.jaggers/hooks/T1',
    cwd: '/p',
    version,
  });
  /** The `-c` values, by the key before `=`. */
  const overrides = (args: string[]): Map<string, string> => {
    const out = new Map<string, string>();
    for (let i = 0; i < args.length; i++) {
      if (args[i] !== '-c') continue;
      const kv = args[++i]!;
      out.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
    }
    return out;
  };
  const EVENTS = { SessionStart: 'session_start', UserPromptSubmit: 'user_prompt_submit', PermissionRequest: 'permission_request', Stop: 'stop' };

  it('0.169.0: one -c hooks.<Event> per event calling the bridge with the event name, trusted by -c hooks.state; nothing else', () => {
    const inst = codexHooks.install(ctx('0.169.0'));
    expect(inst.env).toEqual({});
    expect(inst.files).toEqual([]);
    // Only -c pairs: no --dangerously-bypass-hook-trust (it would run the user's own unreviewed hooks too), no notify.
    expect(inst.args.filter((_, i) => i % 2 === 0).every((a) => a === '-c')).toBe(true);
    const c = overrides(inst.args);
    expect([...c.keys()]).toEqual([...Object.keys(EVENTS).map((e) => `hooks.${e}`), 'hooks.state']);
    const state = c.get('hooks.state')!;
    for (const [event, key] of Object.entries(EVENTS)) {
      const m = /^\[\{hooks=\[\{type="command",command=("(?:[^"\\]|\\.)*"),timeout=(\d+)\}\]\}\]$/.exec(c.get(`hooks.${event}`)!);
      expect(m, event).not.toBeNull();
      const command = JSON.parse(m![1]!) as string;
      expect(command).toBe(`'sh' '/opt/jaggers/bin/jaggers-hook' '/p/.jaggers/spool' 'T 1' ${event}`);
      expect(state).toContain(`"/<session-flags>/config.toml:${key}:0:0"={trusted_hash="${codexHookHash(key, command, Number(m![2]))}"}`);
    }
  });

  it('the trust hash is the one codex 0.169.0 itself wrote into config.toml on "Trust all and continue"', () => {
    // Hooks installed as above with the capture script's argv as the bridge; codex's own [hooks.state] entries.
    const cmd = (e: string) => `'sh' '/tmp/jaggers-e2e-codex-uUNrn2/capture.sh' '/tmp/jaggers-e2e-codex-uUNrn2/calls' 'T1' ${e}`;
    expect(codexHookHash('stop', cmd('Stop'), 600)).toBe('sha256:647f12317b41e28f2f1d8e1ecb1e976fe4826ee4ac072f4a46c1f7ecca69e9a1');
    expect(codexHookHash('permission_request', cmd('PermissionRequest'), 600)).toBe('sha256:d132a143d1ba522c49b38175936c6a8b3e8ac01a64865d16f9ad032ed6e1bfcb');
    expect(codexHookHash('session_start', cmd('SessionStart'), 600)).toBe('sha256:a94bb85c65e69a9408ae8fbc20b646c0c1ebae790ebdbbd6116814c9c5aba6c8');
    expect(codexHookHash('user_prompt_submit', cmd('UserPromptSubmit'), 600)).toBe('sha256:31a444ee320654efb612031af30e54552c1544df036700a565291535cba163a6');
  });

  it('a bridge path with quotes, backslashes, a newline or DEL stays one TOML string, hashed as codex reads it', () => {
    const shell = `'sh' '/a "b"\\c\n\x7f/jaggers-hook'`;
    const c = overrides(codexHooks.install(ctx('0.169.0', shell)).args);
    const value = c.get('hooks.Stop')!;
    expect(value).not.toMatch(/[\n\x7f]/);
    const literal = /command=("(?:[^"\\]|\\.)*")/.exec(value)![1]!;
    const command = JSON.parse(literal) as string;
    expect(command).toBe(`${shell} Stop`);
    expect(c.get('hooks.state')).toContain(codexHookHash('stop', command, 5));
  });

  it('beside the MCP overrides (-c mcp_servers.jaggers.*) no key is set twice', () => {
    const keys = [...overrides(codexHooks.install(ctx('0.169.0')).args).keys()];
    expect(keys.some((k) => k.startsWith('mcp_servers') || k === 'notify')).toBe(false);
  });

  it('a release before 0.169.0 gets notify with the bridge argv and the event name (codex appends the payload)', () => {
    for (const v of ['0.168.0', '0.99.5', '0.1.2503']) {
      expect(codexHooks.install(ctx(v))).toEqual({ args: ['-c', `notify=${JSON.stringify([...bridge, NOTIFY_EVENT])}`], env: {}, files: [] });
    }
  });

  it('0.169.0 and later, or a version unknown, get the hooks', () => {
    for (const v of ['0.169.0', '0.169.1-alpha.2', '0.170.0', '1.0.0', null, 'not a version']) {
      expect(overrides(codexHooks.install(ctx(v)).args).has('hooks.Stop'), String(v)).toBe(true);
    }
  });
});
