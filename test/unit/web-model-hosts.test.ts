// The dashboard's hosts (docs/web.md, docs/hosts.md), without a browser: the hosts' agents join the
// model keyed `agent@host` after this machine's, their state events (from `GET /v1/hosts/events`) move
// their cards, a host whose connection drops loses its agents' cards for a card of its own, and a name
// on two machines is two cards; their routes go through the local supervisor's host routes.
import { describe, expect, it } from 'vitest';
import type { HostAgentsView, TerminalView } from '../../src/api/types.js';
import { cardView } from '../../web/card.js';
import { agentKey, apiName, applyEvent, emptyModel, setHosts, setTerminals, splitKey, terminalPath } from '../../web/model.js';
import { terminalView } from '../helpers/terminal-view.js';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

const term = (agent: string, over: Partial<TerminalView> = {}): TerminalView =>
  terminalView(agent, { terminalId: `t-${agent}`, pid: 1, since: iso(0), ...over });

const up = (host: string, agents: TerminalView[]): HostAgentsView => ({
  host,
  ssh: `me@${host}`,
  state: 'connected',
  detail: 'connected',
  agents: agents.map((t) => ({ ...t, host })),
  names: agents.map((t) => t.agent),
  problem: null,
});
const down = (host: string, names: string[]): HostAgentsView => ({
  host,
  ssh: `me@${host}`,
  state: 'retrying',
  detail: 'retrying in 4 s (the connection dropped)',
  agents: null,
  names,
  problem: 'the connection is retrying in 4 s (the connection dropped)',
});

describe("the dashboard's hosts", () => {
  it('keys a host agent agent@host and routes it through the host routes; a local key stays as it was', () => {
    expect(agentKey({ agent: 'far', task: null, host: 'box' })).toBe('far@box');
    expect(agentKey({ agent: 'w', task: 't-1' })).toBe('w+t-1');
    expect(splitKey('far@box')).toEqual({ agent: 'far', host: 'box' });
    expect(terminalPath('far@box')).toBe('/v1/hosts/box/terminals/far');
    expect(terminalPath('w+t-1')).toBe('/v1/terminals/w%2Bt-1');
  });

  it("a host agent's card shows its work recorded here (far@box) and its worktree made on its host; the forms name it as the API takes it", () => {
    const m = emptyModel();
    setTerminals(m, [term('far')]);
    setHosts(m, [up('box', [term('far', { terminalId: 't-far-there' })])]);
    m.jobs.set('j-1', { id: 'j-1', target: 'far', agent: 'far', terminalId: 'far@box', host: 'box', state: 'running', seq: 1, name: 'remote one' } as never);
    m.jobs.set('j-2', { id: 'j-2', target: 'far', agent: 'far', terminalId: 't-far', state: 'queued', seq: 2, name: 'local one' } as never);
    m.worktrees = [
      { name: 'far', path: '/there/far', branch: 'jaggers/far', agent: 'far', job: null, host: 'box' },
      { name: 'far', path: '/here/far', branch: 'jaggers/far', agent: 'far', job: null },
    ];
    const there = cardView(m, m.terminals.get('far@box')!, T0);
    expect(there.current).toMatchObject({ id: 'j-1', label: 'remote one', state: 'running' });
    expect(there.behind).toEqual([]);
    expect(there.worktree).toEqual({ name: 'far', branch: 'jaggers/far', path: '/there/far' });
    const here = cardView(m, m.terminals.get('far')!, T0);
    expect(here.current).toBeNull();
    expect(here.behind.map((b) => b.id)).toEqual(['j-2']);
    expect(here.worktree?.path).toBe('/here/far');
    expect(apiName('far@box')).toBe('far');
    expect(apiName('w+t-1')).toBe('w+t-1');
  });

  it('lists the hosts’ agents after this machine’s (a name on both is two cards), keeps them through a fresh local list, and a host down as a host', () => {
    const m = emptyModel();
    setTerminals(m, [term('near')]);
    setHosts(m, [up('box', [term('far', { terminalId: 't-far' }), term('near', { terminalId: 't-near2' })]), down('gpu', ['trainer'])]);
    expect([...m.terminals.keys()]).toEqual(['near', 'far@box', 'near@box']);
    setTerminals(m, [term('near'), term('other')]);
    expect([...m.terminals.keys()]).toEqual(['near', 'other', 'far@box', 'near@box']);
    expect(cardView(m, m.terminals.get('far@box')!, T0)).toMatchObject({ key: 'far@box', agent: 'far', host: 'box', worktree: null });
    expect(cardView(m, m.terminals.get('near')!, T0).host).toBeNull();
    expect(m.hosts.get('gpu')).toEqual({
      host: 'gpu',
      state: 'retrying',
      detail: 'retrying in 4 s (the connection dropped)',
      names: ['trainer'],
      problem: 'the connection is retrying in 4 s (the connection dropped)',
    });
  });

  it('a host agent’s state event moves its card only; a local event with its agent’s name moves the local one', () => {
    const m = emptyModel();
    setTerminals(m, [term('near')]);
    setHosts(m, [up('box', [term('near', { terminalId: 't-near2' })])]);
    const fx = applyEvent(m, {
      id: null,
      type: 'host-state',
      at: iso(5),
      data: { host: 'box', agent: 'near', terminalId: 't-near2', task: null, state: 'busy', since: iso(5) },
    });
    expect([...fx.cards]).toEqual(['near@box']);
    expect([m.terminals.get('near')!.state, m.terminals.get('near@box')!.state]).toEqual(['idle', 'busy']);
    const local = applyEvent(m, { id: 7, type: 'state', at: iso(6), data: { agent: 'near', terminalId: 't-near', task: null, state: 'busy', since: iso(6) } });
    expect([...local.cards]).toEqual(['near']);
    // An agent the model does not have yet: the hosts' list is read again.
    expect(applyEvent(m, { id: null, type: 'host-state', at: iso(7), data: { host: 'box', agent: 'new', task: null, state: 'idle' } }).hosts).toBe(true);
    // A waiting agent's question comes with the list.
    expect(applyEvent(m, { id: null, type: 'host-state', at: iso(8), data: { host: 'box', agent: 'near', task: null, state: 'waiting_input' } }).hosts).toBe(
      true,
    );
  });

  it('a host’s connection dropping takes its agents’ cards for its own card; back up, the hosts’ list is read again', () => {
    const m = emptyModel();
    setHosts(m, [up('box', [term('far')])]);
    const lost = applyEvent(m, { id: null, type: 'host', at: iso(1), data: { host: 'box', state: 'lost', detail: 'lost (ssh exited 255)' } });
    expect(lost).toMatchObject({ hosts: true, hostCards: new Set(['box']) });
    expect([...m.terminals.keys()]).toEqual([]);
    expect(m.hosts.get('box')).toMatchObject({ state: 'lost', names: ['far'], problem: 'the connection is lost (ssh exited 255)' });
    // The same state said again: nothing to read.
    expect(applyEvent(m, { id: null, type: 'host', at: iso(2), data: { host: 'box', state: 'lost', detail: 'lost (ssh exited 255)' } }).hosts).toBe(false);
    expect(applyEvent(m, { id: null, type: 'host', at: iso(3), data: { host: 'box', state: 'connected', detail: 'connected' } }).hosts).toBe(true);
    expect(applyEvent(m, { id: null, type: 'host-hello', at: iso(4), data: { host: 'box' } }).hosts).toBe(true);
    setHosts(m, [up('box', [term('far')])]);
    expect(m.hosts.get('box')!.problem).toBeNull();
    expect([...m.terminals.keys()]).toEqual(['far@box']);
  });
});
