import { describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../src/sessions/events.js';
import { findTerminal, mergeTmuxTags, newSessionId, newTerminalId, pinnedSession, tmuxTagEvents } from '../../src/sessions/lookup.js';
import { applyEvents, emptyRegistry } from '../../src/sessions/schema.js';

const at = (m: number): string => `2025-11-21T10:${String(m).padStart(2, '0')}:00.000Z`;
const created = (terminalId: string, agent: string, task: string | null, m: number): JournalEvent => ({
  ts: at(m),
  type: 'terminal-created',
  terminalId,
  agent,
  profile: agent,
  cwd: '/p',
  task,
});

const data = applyEvents(emptyRegistry(), [
  created('jg-team-old', 'claude', null, 1),
  created('jg-team-new', 'claude', null, 5),
  created('jg-t1-a', 'claude', 't1', 2),
  created('jg-t1-b', 'claude', 't1', 9),
  created('jg-t2', 'claude', 't2', 3),
  { ts: at(4), type: 'task-created', taskId: 't2', workflow: 'w' },
  created('jg-t2-new', 'claude', 't2', 8),
  { ts: at(9), type: 'task-agent', taskId: 't2', agent: 'claude', terminalId: 'jg-t2' },
  { ts: at(9), type: 'session-pinned', terminalId: 'jg-t2', sessionId: 'sess-t2', how: 'pre-generated' },
]);

describe('findTerminal', () => {
  it.each([
    ['claude', null, 'jg-team-new'],
    ['claude', 't1', 'jg-t1-b'],
    ['claude', 't2', 'jg-t2'], // the task's own assignment wins over a newer terminal
    ['gemini', null, null],
    ['claude', 't9', null],
  ])('%s in %s -> %s', (agent, task, expected) => {
    expect(findTerminal(data, { agent, task })?.terminalId ?? null).toBe(expected);
  });

  it('never mixes tasks: a task without its own terminal gets none, not the team one', () => {
    expect(pinnedSession(data, { agent: 'claude', task: 't2' })).toBe('sess-t2');
    expect(pinnedSession(data, { agent: 'claude', task: 't3' })).toBeNull();
  });
});

describe('ids', () => {
  it('makes terminal ids jg- plus 8 hex digits and uuid session ids', () => {
    const ids = new Set(Array.from({ length: 50 }, newTerminalId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^jg-[0-9a-f]{8}$/);
    expect(newSessionId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('mergeTmuxTags', () => {
  const windows = [
    { terminalId: 'jg-team-new', agent: 'claude', profile: 'claude', window: '@4' },
    { terminalId: 'jg-lost', agent: 'codex', profile: 'codex', window: '@6', cwd: '/p', task: 't1' },
    { terminalId: 'jg-lost', agent: 'codex', profile: 'codex', window: '@6' },
  ];

  it('adds terminals only tmux knows, and updates moved windows', () => {
    const now = new Date('2025-11-21T11:00:00.000Z');
    const merged = mergeTmuxTags(data, windows, now);
    expect(merged.terminals['jg-lost']).toMatchObject({ agent: 'codex', window: '@6', cwd: '/p', task: 't1', sessionId: null, created: now.toISOString() });
    expect(merged.terminals['jg-team-new']?.window).toBe('@4');
    expect(Object.keys(merged.terminals)).toHaveLength(Object.keys(data.terminals).length + 1);
    expect(data.terminals['jg-lost']).toBeUndefined();
  });

  it('gives the same change as events to record, and none once merged', () => {
    const events = tmuxTagEvents(data, windows, at(30));
    expect(events.map((e) => `${e.type} ${'terminalId' in e ? e.terminalId : ''}`)).toEqual([
      'terminal-window jg-team-new',
      'terminal-created jg-lost',
      'terminal-window jg-lost',
    ]);
    expect(tmuxTagEvents(applyEvents(data, events), windows, at(31))).toEqual([]);
  });
});
