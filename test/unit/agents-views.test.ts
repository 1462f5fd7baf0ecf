// The agents as the API shows them (src/agents/views.ts) and answering the menu an agent waits on
// (src/agents/answer.ts), on a fake table, a fake watcher and a scripted pane with a menu.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { publicStatus, type TerminalStatus } from '../../machines/terminal.machine.js';
import { Answers, MOVE_SETTLE_MS } from '../../src/agents/answer.js';
import { AgentViews } from '../../src/agents/views.js';
import type { JaggersError } from '../../src/errors.js';
import type { StatusChange } from '../../src/panes/watcher.js';
import type { TerminalEntry } from '../../src/work/ports.js';
import { FakeAgents, FakeStore, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

afterEach(() => void vi.useRealTimers());

const T = 'jg-c0de';
const SESSION = '11111111-2222-3333-4444-555555555555';
const MENU = ['Working', '', ' Do you want to proceed?', ' ❯ 1. Yes', '   2. No', '', ' Esc to cancel'].join('\n');

const error = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: JaggersError) => `${e.code}: ${e.message}`,
  );

function viewsSetup() {
  const agents = new FakeAgents();
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { sessionId: SESSION }));
  const coder = agents.add({ agent: 'coder', terminalId: T, pid: 77 });
  const machines = new Map<string, TerminalStatus>([[coder.pane.paneId, 'settling']]);
  const listeners = new Set<(c: StatusChange) => void>();
  const screens = new Map<string, string>();
  let refreshes = 0;
  const stopping = new AbortController();
  const views = new AgentViews({
    table: {
      refresh: async () => void refreshes++,
      list: (task) => agents.list(task),
      get: (x, task, what, op) => agents.get(x, task, what, op),
      byPane: (p) => agents.entries.find((e) => e.pane.paneId === p),
    },
    watcher: {
      snapshot: (p) => {
        const m = machines.get(p);
        return m ? { machine: m, context: { since: 0, rule: 'spinner', lines: ['⠋ Working'], source: 'screen', turns: 3, exitStatus: null } } : undefined;
      },
      lastScreen: (p) => screens.get(p) ?? null,
      pane: (p) => (p === coder.pane.paneId ? { pid: 78 } : undefined),
      // As the watcher's: the public status (`settling` is busy).
      status: (p) => {
        const m = machines.get(p);
        return m && publicStatus(m);
      },
      onChange: (l) => (listeners.add(l), () => listeners.delete(l)),
    },
    data: () => store.data,
    io: { capture: async () => ['Some reply', '> type here  ', '', ''].join('\n') },
    stopping: stopping.signal,
    queue: (terminalId) => (terminalId === T ? [{ id: 'j-00000001', work: 'job', state: 'queued', waiting: 'coder is busy' }] : []),
  });
  /** The watcher reports a change of `e`'s state. */
  const change = (e: TerminalEntry, status: TerminalStatus) => {
    machines.set(e.pane.paneId, status);
    for (const l of [...listeners]) l({ pane: { paneId: e.pane.paneId, agent: e.pane.agent! }, status } as unknown as StatusChange);
  };
  return { agents, store, coder, machines, screens, views, change, stopping, refreshes: () => refreshes, listeners };
}

describe('agent views', () => {
  it("shows a pane's public state, what decided it, its live pid and its pinned session", async () => {
    const h = viewsSetup();
    const v = h.views.view(h.coder);
    expect(v).toMatchObject({
      agent: 'coder',
      terminalId: T,
      state: 'busy',
      rule: 'spinner',
      lines: ['⠋ Working'],
      source: 'screen',
      turns: 3,
      pid: 78,
      sessionId: SESSION,
      question: null,
      problem: null,
      since: new Date(0).toISOString(),
    });
    // What the machine waits for is said of its own state (settling), not the public one.
    expect(v.waitingFor).toBe('the screen to stay quiet for 0 ms before the turn counts as done');
  });

  it('an unwatched pane is exited when tmux says it is dead, else error; a broken profile says why', () => {
    const h = viewsSetup();
    const dead = h.agents.add({ agent: 'dead', terminalId: 'jg-dead', dead: true });
    const broken = h.agents.add({ agent: 'broken', terminalId: 'jg-b0', profile: null, problem: 'profiles/x.json: bad' });
    expect(h.views.view(dead)).toMatchObject({ state: 'exited', exitStatus: 1, sessionId: null, source: 'tmux' });
    expect(h.views.view(broken)).toMatchObject({
      state: 'error',
      rule: 'profile-invalid',
      lines: ['profiles/x.json: bad'],
      waitingFor: 'a valid profile: this pane is not watched',
    });
  });

  it('a waiting agent shows the question on its last screen', async () => {
    const h = viewsSetup();
    h.machines.set(h.coder.pane.paneId, 'waiting_input');
    h.screens.set(h.coder.pane.paneId, MENU);
    expect(h.views.view(h.coder)).toMatchObject({
      state: 'waiting_input',
      question: { text: 'Do you want to proceed?', choices: ['Yes', 'No'], selected: 0 },
      waitingFor: 'a person to answer on screen (jaggers attach coder)',
    });
  });

  it('terminals() reads tmux again unless told not to; terminal() adds a fresh reading; screen() ends in one newline', async () => {
    const h = viewsSetup();
    h.agents.add({ agent: 'coder', terminalId: 'jg-7a5c', task: 't-1' });
    expect((await h.views.terminals()).map((v) => v.terminalId)).toEqual([T, 'jg-7a5c']);
    expect((await h.views.terminals('t-1', { fresh: false })).map((v) => v.terminalId)).toEqual(['jg-7a5c']);
    expect(h.refreshes()).toBe(1);
    const d = await h.views.terminal('coder');
    expect(d.now).toMatchObject({ status: 'idle', rule: 'box', screenLines: ['Some reply', '> type here'] });
    // `why` shows the agent's queue, as the runner says it stands.
    expect(d.queue).toEqual([{ id: 'j-00000001', work: 'job', state: 'queued', waiting: 'coder is busy' }]);
    expect((await h.views.screen('coder', { ansi: false, history: 0 })).screen).toBe('Some reply\n> type here  \n');
    expect(await error(h.views.terminal('nobody'))).toBe('E_AGENT_UNKNOWN: unknown agent "nobody"');
  });

  it('waitFor(): at once when the agent is in one of the states, else at the change; E_TIMEOUT; E_SUPERVISOR_DOWN', async () => {
    const h = viewsSetup();
    expect((await h.views.waitFor('coder', ['busy'], 1000)).state).toBe('busy');
    const idle = h.views.waitFor('coder', ['idle', 'done'], 60_000);
    h.change(h.coder, 'waiting_input');
    h.change(h.coder, 'done');
    expect((await idle).state).toBe('done');
    expect(h.listeners.size).toBe(0);
    vi.useFakeTimers();
    const late = error(h.views.waitFor('coder', ['idle'], 5000));
    await vi.advanceTimersByTimeAsync(5000);
    expect(await late).toBe('E_TIMEOUT: coder is still done after 5000 ms (waited for idle)');
    const stopped = error(h.views.waitFor('coder', ['idle'], 5000));
    await vi.advanceTimersByTimeAsync(0);
    h.stopping.abort();
    expect(await stopped).toBe('E_SUPERVISOR_DOWN: the supervisor is stopping');
    expect(h.listeners.size).toBe(0);
  });
});

/** A pane with a menu: keys move its highlight or choose; Enter (or a digit, when `digits` choose) closes it. */
function answerSetup(o: { numbered: boolean; digitsChoose: boolean; selected?: number; lateHandler?: boolean }) {
  const agents = new FakeAgents();
  const coder = agents.add({ agent: 'coder', terminalId: T });
  const choices = ['Yes', 'Yes, always', 'No'];
  const menu = { open: true, selected: o.selected ?? 0, chosen: null as string | null };
  // An ink menu (lateHandler): a move is drawn at once, but its key handler has it only once time passes,
  // so an Enter right after the frame chooses the line the highlight left.
  let handled = menu.selected;
  const delays: number[] = [];
  let status = 'waiting_input';
  const screenListeners = new Set<(paneId: string, screen: string) => void>();
  const screen = () =>
    menu.open
      ? [
          'Working',
          '',
          ' Do you want to proceed?',
          ...choices.map((c, i) => `${i === menu.selected ? ' ❯ ' : '   '}${o.numbered ? `${i + 1}. ` : ''}${c}`),
          '',
          ' Esc to cancel',
        ].join('\n')
      : 'Working\n⠋ Working (esc to cancel)';
  const drawn = () => {
    for (const l of [...screenListeners]) l(coder.pane.paneId, screen());
  };
  const close = (i: number) => {
    menu.open = false;
    menu.chosen = choices[i]!;
    status = 'busy';
    drawn();
  };
  const sent: string[] = [];
  const answers = new Answers({
    table: { get: (x, task, what, op) => agents.get(x, task, what, op) },
    watcher: {
      status: () => status,
      onScreen: (l) => (screenListeners.add(l), () => screenListeners.delete(l)),
      // The menu went away, or did not: said at once (no time passes in these tests).
      waitFor: async () => {
        if (menu.open) throw new Error('still waiting');
      },
    },
    io: { capture: async () => screen() },
    keys: {
      literal: async (_p, text) => {
        sent.push(`literal ${text}`);
        const i = Number(text) - 1;
        if (o.digitsChoose) close(i);
        else {
          menu.selected = i;
          drawn();
        }
      },
      send: async (_p, keys) => {
        for (const k of keys) {
          sent.push(k);
          if (k === 'Down') menu.selected = Math.min(menu.selected + 1, choices.length - 1);
          else if (k === 'Up') menu.selected = Math.max(menu.selected - 1, 0);
          else if (k === 'Enter') close(o.lateHandler ? handled : menu.selected);
          if (!o.lateHandler) handled = menu.selected;
          drawn();
        }
      },
    },
    log: recordingLog(),
    delay: async (ms) => {
      delays.push(ms);
      handled = menu.selected;
    },
  });
  return { answers, menu, sent, delays, setStatus: (s: string) => (status = s) };
}

describe('answering a menu', () => {
  it('types the number of the choice where a digit chooses', async () => {
    const h = answerSetup({ numbered: true, digitsChoose: true });
    const r = await h.answers.answer('coder', { choice: 'always' });
    expect(r).toMatchObject({ chose: { number: 2, label: 'Yes, always' }, keys: ['2'], state: 'busy' });
    expect(h.menu.chosen).toBe('Yes, always');
    expect(h.sent).toEqual(['literal 2']);
  });

  it('where a digit only moves the highlight, checks it landed and presses Enter', async () => {
    const h = answerSetup({ numbered: true, digitsChoose: false });
    const r = await h.answers.answer('coder', { choice: '3' });
    expect(r.keys).toEqual(['3', 'Enter']);
    expect(h.menu.chosen).toBe('No');
  });

  it('moves the highlight of a menu without numbers with the arrows, then Enter', async () => {
    const h = answerSetup({ numbered: false, digitsChoose: false });
    const r = await h.answers.answer('coder', { choice: 'No' });
    expect(r.keys).toEqual(['Down', 'Down', 'Enter']);
    expect(h.menu.chosen).toBe('No');
  });

  it('gives a menu time to take the move before Enter: an ink menu draws the highlight before its key handler has it', async () => {
    // claude 2.1.330's trust dialog: "No, exit" first and highlighted, no numbers.
    const h = answerSetup({ numbered: false, digitsChoose: false, lateHandler: true });
    const r = await h.answers.answer('coder', { choice: 'always' });
    expect(r.keys).toEqual(['Down', 'Enter']);
    expect(h.delays).toEqual([MOVE_SETTLE_MS]);
    expect(h.menu.chosen).toBe('Yes, always');
  });

  it('refuses without pressing anything: not waiting, another question than expected, a choice not offered', async () => {
    const h = answerSetup({ numbered: true, digitsChoose: true });
    h.setStatus('busy');
    expect(await error(h.answers.answer('coder', { choice: '1' }))).toBe('E_NOT_WAITING: answer: coder is busy, not waiting for an answer');
    h.setStatus('waiting_input');
    expect(await error(h.answers.answer('coder', { choice: '1', expect: { text: 'Delete everything?', choices: ['Yes', 'No'] } }))).toMatch(
      /^E_SCREEN_CHANGED: answer: coder's screen changed: it now asks "Do you want to proceed\?" \(Yes \/ Yes, always \/ No\), not "Delete everything\?" \(Yes \/ No\); nothing was sent$/,
    );
    expect(await error(h.answers.answer('coder', { choice: '7' }))).toBe(
      'E_USAGE: answer: there is no choice 7: the menu offers 1. Yes, 2. Yes, always, 3. No',
    );
    expect(await error(h.answers.answer('nobody', { choice: '1' }))).toMatch(/^E_AGENT_UNKNOWN: answer: unknown agent "nobody"/);
    expect(h.sent).toEqual([]);
    expect(h.menu.open).toBe(true);
  });
});
