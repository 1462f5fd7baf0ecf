// The dashboard page's own logic, without a browser: events change the model and name the cards to
// redraw; a card says the state in words, the time in it, the work it runs and what waits behind it.
import { describe, expect, it } from 'vitest';
import type { JobView, TerminalView } from '../../src/api/types.js';
import { cardView, formatDuration, jobLabel, workOf } from '../../web/card.js';
import { agentKey, applyEvent, emptyModel, parseFrame, setJobs, setTerminals, type Model } from '../../web/model.js';
import { terminalView } from '../helpers/terminal-view.js';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

const term = (agent: string, over: Partial<TerminalView> = {}): TerminalView =>
  terminalView(agent, { terminalId: `t-${agent}`, pid: 1, since: iso(0), ...over });

function job(id: string, over: Partial<JobView> = {}): JobView {
  return {
    id,
    name: null,
    target: 'ag',
    kind: 'agent',
    terminalId: 't-ag',
    agent: 'ag',
    window: null,
    from: null,
    fromAgent: null,
    prompt: 'write the tests\nand more',
    bytes: 10,
    timeoutMs: null,
    keep: false,
    created: iso(0),
    state: 'queued',
    reason: 'recorded',
    updated: iso(0),
    nonce: null,
    artifact: null,
    reply: null,
    turn: null,
    pid: null,
    task: null,
    workflow: null,
    cause: null,
    work: 'job',
    headless: false,
    seq: 0,
    code: null,
    worktree: null,
    history: [],
    attach: null,
    waiting: null,
    ...over,
  } as JobView;
}

function model(terminals: TerminalView[], jobs: JobView[] = []): Model {
  const m = emptyModel();
  setTerminals(m, terminals);
  setJobs(m, jobs);
  return m;
}

describe('web page model', () => {
  it('a state event changes the card at once and asks for the list (question, waitingFor) again', () => {
    const m = model([term('ag'), term('other')]);
    const fx = applyEvent(m, {
      id: 1,
      type: 'state',
      at: iso(5000),
      data: { agent: 'ag', terminalId: 't-ag', task: null, pane: '%1', state: 'busy', rule: 'spinner', turns: 1, since: iso(4000) },
    });
    expect([...fx.cards]).toEqual(['ag']);
    // What it waits for now may lag; a question may not (below).
    expect(fx.terminals).toBe('later');
    expect(m.terminals.get('ag')).toMatchObject({ state: 'busy', since: iso(4000), rule: 'spinner', turns: 1 });
    expect(m.terminals.get('other')!.state).toBe('idle');
    const v = cardView(m, m.terminals.get('ag')!, T0 + 16_000);
    expect(v).toMatchObject({ state: 'busy', word: 'busy', elapsed: '12 s' });
  });

  it('an event for an agent the page does not know yet reads the agents again', () => {
    const m = model([term('ag')]);
    const fx = applyEvent(m, { id: 1, type: 'state', at: iso(0), data: { agent: 'new', terminalId: 't-new', task: null, state: 'starting', since: iso(0) } });
    expect(fx.cards.size).toBe(0);
    expect(fx.terminals).toBe('soon');
  });

  it("a task's window is its own card (agent+task), found by its terminal id", () => {
    const m = model([term('ag'), term('ag', { task: 'T1', terminalId: 't-ag-T1' })]);
    expect([...m.terminals.keys()]).toEqual(['ag', 'ag+T1']);
    const fx = applyEvent(m, { id: 2, type: 'state', at: iso(0), data: { agent: 'ag', terminalId: 't-ag-T1', task: 'T1', state: 'busy', since: iso(0) } });
    expect([...fx.cards]).toEqual(['ag+T1']);
    expect(m.terminals.get('ag')!.state).toBe('idle');
  });

  it('a list read before an event does not undo it: the newer state stays', () => {
    const m = model([term('ag')]);
    applyEvent(m, { id: 1, type: 'state', at: iso(2000), data: { agent: 'ag', terminalId: 't-ag', state: 'busy', since: iso(2000) } });
    setTerminals(m, [term('ag', { state: 'idle', since: iso(0), waitingFor: 'a prompt' })]);
    expect(m.terminals.get('ag')).toMatchObject({ state: 'busy', since: iso(2000), waitingFor: 'a prompt' });
    setTerminals(m, [term('ag', { state: 'done', since: iso(3000) })]);
    expect(m.terminals.get('ag')!.state).toBe('done');
  });

  it('a waiting agent shows its question; leaving the state drops it', () => {
    const question = { text: 'Allow execution?', choices: ['Allow once', 'Deny'], selected: 0 };
    const m = model([term('ag', { state: 'waiting_input', question })]);
    expect(cardView(m, m.terminals.get('ag')!, T0).question).toEqual(question);
    expect(cardView(m, m.terminals.get('ag')!, T0).word).toBe('waiting for you');
    expect(
      applyEvent(m, { id: 0, type: 'state', at: iso(0), data: { agent: 'ag', terminalId: 't-ag', state: 'waiting_input', since: iso(0) } }).terminals,
    ).toBe('soon');
    applyEvent(m, { id: 1, type: 'state', at: iso(1), data: { agent: 'ag', terminalId: 't-ag', state: 'busy', since: iso(1) } });
    expect(cardView(m, m.terminals.get('ag')!, T0).question).toBeNull();
  });

  it('job events: the job changes, its agent card is redrawn, the list is read again', () => {
    const m = model([term('ag')], [job('j-1', { state: 'queued' })]);
    const fx = applyEvent(m, {
      id: 3,
      type: 'job',
      at: iso(10),
      data: { id: 'j-1', name: null, state: 'running', reason: 'delivered', agent: 'ag', terminalId: 't-ag' },
    });
    expect(m.jobs.get('j-1')).toMatchObject({ state: 'running', reason: 'delivered', updated: iso(10) });
    expect([...fx.cards]).toEqual(['ag']);
    expect(fx.jobs).toBe('later');
    const added = applyEvent(m, {
      id: 4,
      type: 'job',
      at: iso(11),
      data: { id: 'j-2', name: null, state: 'queued', reason: 'recorded', agent: 'ag', terminalId: 't-ag' },
    });
    expect(added.jobs).toBe('soon');
  });

  it('messages, pins, tasks and gaps ask for what they change', () => {
    const m = model([term('ag')]);
    expect([...applyEvent(m, { id: 1, type: 'message', at: iso(0), data: { id: 'm-1', to: 't-ag', toAgent: 'ag', state: 'pending' } }).inbox]).toEqual(['ag']);
    const pin = applyEvent(m, { id: 2, type: 'pin', at: iso(0), data: { agent: 'ag', terminalId: 't-ag', sessionId: 'abc-123', how: 'discovered' } });
    expect([...pin.cards]).toEqual(['ag']);
    expect(m.terminals.get('ag')!.sessionId).toBe('abc-123');
    expect(applyEvent(m, { id: 3, type: 'task', at: iso(0), data: { id: 'T1' } }).tasks).toBe(true);
    expect(applyEvent(m, { id: 4, type: 'gap', at: iso(0), data: { from: 1, to: 2 } }).reload).toBe(true);
    expect(applyEvent(m, { id: 5, type: 'notice', at: iso(0), data: { kind: 'x' } })).toMatchObject({ reload: false, terminals: false, jobs: false });
  });

  it('the card: the running item first, the queued ones behind it in order, pending messages', () => {
    const jobs = [
      job('j-3', { state: 'queued', seq: 3, name: 'third', waiting: 'ag is busy' }),
      job('j-1', { state: 'done', seq: 1 }),
      job('j-2', { state: 'running', seq: 2, prompt: 'fix the bug' }),
      job('j-9', { state: 'queued', seq: 9, terminalId: 't-other' }),
      job('j-4', { state: 'queued', seq: 4, work: 'turn', prompt: 'review it' }),
    ];
    const w = workOf(jobs, 't-ag');
    expect(w.current).toMatchObject({ id: 'j-2', label: 'fix the bug', state: 'running' });
    expect(w.behind.map((b) => [b.id, b.label, b.note])).toEqual([
      ['j-3', 'third', 'ag is busy'],
      ['j-4', 'turn: review it', null],
    ]);
    const m = model([term('ag', { sessionId: 's-1' })], jobs);
    m.pending.set('ag', 2);
    m.worktrees = [{ name: 'ag', path: '/p/.jaggers/worktrees/ag', branch: 'jaggers/ag', agent: 'ag', job: null }];
    expect(cardView(m, m.terminals.get('ag')!, T0)).toMatchObject({
      pendingMessages: 2,
      sessionId: 's-1',
      worktree: { name: 'ag', branch: 'jaggers/ag' },
    });
  });

  it('words and numbers as a person reads them', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(59_999)).toBe('59 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(3_725_000)).toBe('1 h 2 min');
    expect(formatDuration(-1)).toBe('');
    expect(jobLabel({ name: null, prompt: `\n${'x'.repeat(100)}`, work: 'job' })).toBe(`${'x'.repeat(79)}…`);
    expect(jobLabel({ name: null, prompt: '.jaggers/jobs/j-1.md', work: 'send' })).toBe('send');
    expect(agentKey({ agent: 'a', task: null })).toBe('a');
  });

  it('SSE frames as the supervisor writes them', () => {
    expect(parseFrame('state', '17', '{"at":"2026-11-26T12:00:00.000Z","data":{"agent":"a"}}')).toEqual({
      id: 17,
      type: 'state',
      at: '2026-11-26T12:00:00.000Z',
      data: { agent: 'a' },
    });
    expect(parseFrame('state', '', 'not json')).toBeNull();
    expect(parseFrame('state', '', '{"at":"x","data":null}')).toBeNull();
  });
});
