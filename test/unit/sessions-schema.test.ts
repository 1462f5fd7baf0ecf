import { describe, expect, it } from 'vitest';
import { journalEventSchema, type JournalEvent } from '../../src/sessions/events.js';
import { applyEvent, applyEvents, emptyRegistry, registrySchema, type RegistryData } from '../../src/sessions/schema.js';
import { validate } from '../../src/sessions/validate.js';

const ts = '2025-11-21T10:00:00.000Z';
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const S3 = '33333333-3333-4333-8333-333333333333';

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

const setup: JournalEvent[] = [
  { ts, type: 'task-created', taskId: 't1', workflow: 'review' },
  { ts, type: 'terminal-created', terminalId: 'jg-aaaa0001', agent: 'claude', profile: 'claude', cwd: '/p', task: 't1' },
  { ts, type: 'session-pinned', terminalId: 'jg-aaaa0001', sessionId: S1, how: 'pre-generated' },
  { ts, type: 'task-agent', taskId: 't1', agent: 'claude', terminalId: 'jg-aaaa0001' },
];

function base(): RegistryData {
  return deepFreeze(applyEvents(emptyRegistry(), setup));
}

describe('applyEvent', () => {
  it('creates terminals and tasks with defaults, and links the task agent to the pinned session', () => {
    const data = base();
    expect(data.terminals['jg-aaaa0001']).toEqual({
      terminalId: 'jg-aaaa0001',
      agent: 'claude',
      profile: 'claude',
      cwd: '/p',
      task: 't1',
      sessionId: S1,
      sessionHistory: [],
      window: null,
      created: ts,
      lastState: null,
      turns: 0,
    });
    expect(data.tasks.t1).toMatchObject({
      id: 't1',
      workflow: 'review',
      status: 'created',
      created: ts,
      agents: { claude: { terminalId: 'jg-aaaa0001', sessionId: S1, turns: 0 } },
      definition: null,
      snapshot: null,
      history: [],
    });
  });

  it('defaults a missing task to null', () => {
    const data = applyEvent(emptyRegistry(), { ts, type: 'terminal-created', terminalId: 'jg-1', agent: 'gemini', profile: 'gemini', cwd: '/p' });
    expect(data.terminals['jg-1']?.task).toBeNull();
  });

  it('never changes its input', () => {
    const data = base();
    const next = applyEvent(data, { ts, type: 'terminal-window', terminalId: 'jg-aaaa0001', window: '@3' });
    expect(next.terminals['jg-aaaa0001']?.window).toBe('@3');
    expect(data.terminals['jg-aaaa0001']?.window).toBeNull();
    expect(next.tasks).toBe(data.tasks);
  });

  it('records window and state', () => {
    const data = applyEvents(base(), [
      { ts, type: 'terminal-window', terminalId: 'jg-aaaa0001', window: '@7' },
      { ts, type: 'terminal-state', terminalId: 'jg-aaaa0001', state: 'idle' },
      { ts, type: 'task-status', taskId: 't1', status: 'running' },
    ]);
    expect(data.terminals['jg-aaaa0001']).toMatchObject({ window: '@7', lastState: 'idle' });
    expect(data.tasks.t1?.status).toBe('running');
  });

  it('a fork moves the old id into the history and the task agent follows', () => {
    const data = applyEvents(base(), [
      { ts, type: 'session-forked', terminalId: 'jg-aaaa0001', from: S1, to: S2, reason: '/clear' },
      { ts, type: 'session-forked', terminalId: 'jg-aaaa0001', from: S2, to: S3, reason: '/clear' },
    ]);
    expect(data.terminals['jg-aaaa0001']).toMatchObject({ sessionId: S3, sessionHistory: [S1, S2] });
    expect(data.tasks.t1?.agents.claude?.sessionId).toBe(S3);
  });

  it('refuses a fork from a session the terminal is not on', () => {
    expect(() => applyEvent(base(), { ts, type: 'session-forked', terminalId: 'jg-aaaa0001', from: S2, to: S3, reason: 'x' })).toThrow(
      /session-forked.*jg-aaaa0001.*11111111.*not on "22222222/,
    );
  });

  it('re-pinning a different id keeps the old one in the history; the same id changes nothing', () => {
    const same = applyEvent(base(), { ts, type: 'session-pinned', terminalId: 'jg-aaaa0001', sessionId: S1, how: 'resumed' });
    expect(same.terminals['jg-aaaa0001']?.sessionHistory).toEqual([]);
    const other = applyEvent(base(), { ts, type: 'session-pinned', terminalId: 'jg-aaaa0001', sessionId: S2, how: 'discovered' });
    expect(other.terminals['jg-aaaa0001']).toMatchObject({ sessionId: S2, sessionHistory: [S1] });
    expect(other.tasks.t1?.agents.claude?.sessionId).toBe(S2);
  });

  it('counts replies, not prompts, in the task agent turns', () => {
    const turn = (n: number, direction: 'prompt' | 'reply', agent = 'claude'): JournalEvent => ({
      ts,
      type: 'turn',
      taskId: 't1',
      agent,
      terminalId: 'jg-aaaa0001',
      sessionId: S1,
      turn: n,
      handoverFile: null,
      direction,
    });
    const data = applyEvents(base(), [turn(1, 'prompt'), turn(1, 'reply'), turn(2, 'prompt'), turn(2, 'reply'), turn(3, 'reply', 'helper')]);
    expect(data.tasks.t1?.agents.claude?.turns).toBe(2);
    expect(data.tasks.t1?.agents.helper).toEqual({ terminalId: 'jg-aaaa0001', sessionId: S1, turns: 1 });
    // The terminal counts every reply in its current session, whatever the task: 0 means no conversation yet.
    expect(data.terminals['jg-aaaa0001']?.turns).toBe(3);
    const before = base();
    const untasked = applyEvent(before, { ...turn(1, 'reply'), taskId: null } as JournalEvent);
    expect(untasked.tasks).toBe(before.tasks);
    expect(untasked.terminals['jg-aaaa0001']?.turns).toBe(1);
    // A reply recorded under an older session id does not count for the current one; a new pin starts over.
    expect(applyEvent(before, { ...turn(1, 'reply'), sessionId: S2 } as JournalEvent).terminals['jg-aaaa0001']?.turns).toBe(0);
    const repinned = applyEvent(data, { ts, type: 'session-pinned', terminalId: 'jg-aaaa0001', sessionId: S2, how: 'discovered' });
    expect(repinned.terminals['jg-aaaa0001']?.turns).toBe(0);
    expect(applyEvent(data, { ts, type: 'session-pinned', terminalId: 'jg-aaaa0001', sessionId: S1, how: 'resumed' }).terminals['jg-aaaa0001']?.turns).toBe(3);
  });

  it.each<[string, JournalEvent, RegExp]>([
    ['unknown terminal', { ts, type: 'terminal-state', terminalId: 'jg-nope', state: 'idle' }, /unknown terminal "jg-nope"/],
    ['unknown task', { ts, type: 'task-status', taskId: 'nope', status: 'done' }, /unknown task "nope"/],
    ['duplicate task', { ts, type: 'task-created', taskId: 't1', workflow: 'x' }, /task "t1" already exists/],
    [
      'duplicate terminal',
      { ts, type: 'terminal-created', terminalId: 'jg-aaaa0001', agent: 'a', profile: 'a', cwd: '/' },
      /terminal "jg-aaaa0001" already exists/,
    ],
  ])('refuses %s with E_REGISTRY', (_name, event, message) => {
    let error: unknown;
    try {
      applyEvent(base(), event);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'E_REGISTRY' });
    expect(String(error)).toMatch(message);
  });
});

describe('validation messages', () => {
  it('name the file, the field and the value', () => {
    const data = JSON.parse(JSON.stringify(base())) as Record<string, unknown>;
    (data.terminals as Record<string, Record<string, unknown>>)['jg-aaaa0001']!.agent = 42;
    const result = validate(registrySchema, data, '/p/.jaggers/sessions.json');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain('/p/.jaggers/sessions.json: field `terminals.jg-aaaa0001.agent`');
      expect(result.message).toContain('got 42 (number)');
    }
  });

  it('reject a wrong version and a key that disagrees with its record', () => {
    expect(validate(registrySchema, { ...base(), version: 2 }, 'sessions.json')).toEqual({
      ok: false,
      message: 'sessions.json: field `version`: Invalid input: expected 1, got 2 (number)',
    });
    const misfiled = { ...base(), terminals: { 'jg-x': base().terminals['jg-aaaa0001'] } };
    expect(validate(registrySchema, misfiled, 'sessions.json')).toEqual({
      ok: false,
      message: 'sessions.json: field `terminals.jg-x.terminalId`: must equal its key "jg-x", got "jg-aaaa0001" (string)',
    });
  });

  it('name the event field for journal lines', () => {
    const result = validate(journalEventSchema, { ts, type: 'terminal-window', terminalId: 'jg-1', window: '3' }, 'events.jsonl line 9');
    expect(result).toEqual({
      ok: false,
      message: 'events.jsonl line 9: field `window`: must be a tmux window id like "@3", got "3" (string)',
    });
    const unknown = validate(journalEventSchema, { ts, type: 'party' }, 'events.jsonl line 2');
    expect(unknown.ok ? '' : unknown.message).toMatch(/^events.jsonl line 2: field `type`/);
  });
});
