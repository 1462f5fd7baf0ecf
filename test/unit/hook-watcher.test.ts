// Hook signals in the composed PaneWatcher (issue 27), on scripted tmux connections and a simulated
// clock: a hook decides busy, done and waiting before the state file and the screen; the screen still
// catches what no hook reports (a menu; Esc or a denial with no end event, after the grace); a pane
// whose hooks stay silent falls back to the screen with one warning.
import { afterEach, describe, expect, it } from 'vitest';
import type { StateFilePorts } from '../../src/panes/state-files.js';
import { PaneWatcher, type WatchedPane } from '../../src/panes/watcher.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

const flush = () => new Promise<void>((r) => setImmediate(r));
const IDLE = '> ';
const SPINNER = '⠋ Working (esc to cancel)';
const MENU = 'Allow execution of [Shell]?';

const profile = ProfileSchema.parse({
  name: 'p',
  command: 'c',
  detect: {
    hooks: 'fake-agent',
    settleMs: 300,
    rules: [
      { name: 'menu', status: 'waiting_input', pattern: 'Allow execution', lines: 3 },
      { name: 'spinner', status: 'busy', pattern: 'esc to cancel', lines: 3 },
      { name: 'box', status: 'idle', pattern: '^>', lines: 2 },
    ],
  },
});

const opened: FakeControl[] = [];
const watchers: PaneWatcher[] = [];
afterEach(async () => {
  for (const w of watchers.splice(0)) w.stop();
  for (const t of opened.splice(0)) await t.close();
});

const noFiles: StateFilePorts = {
  homeOf: async () => '/h',
  read: async () => ({ classification: null, sessionId: null }),
  watchFolder: () => ({ close() {} }),
};

async function setup(installed = true) {
  const events = fakeControl();
  const cmd = fakeControl();
  opened.push(events, cmd);
  const clock = new FakeClock();
  const w = new PaneWatcher(events.client, { commands: cmd.client, clock, stateFiles: noFiles, hookGraceMs: 3000, hooksInstalled: () => installed });
  watchers.push(w);
  const warnings: string[] = [];
  w.onHookWarning((_p, m) => warnings.push(m));
  const sessions: string[] = [];
  w.onSession((_p, s) => sessions.push(s));
  let answered = 0;
  const screen = async (text: string) => {
    while (answered < cmd.written.length) {
      answered++;
      cmd.reply([text]);
    }
    await flush();
  };
  /** The pane prints (a redraw) and its screen reads `text` once captured. */
  const shows = async (text: string) => {
    events.output('%1', 'x');
    clock.advance(150);
    await screen(text);
  };
  const pane: WatchedPane = { paneId: '%1', windowId: '@1', agent: 'a', profile, pid: 7, terminalId: 'jg-1' };
  w.watch(pane);
  await screen(IDLE);
  const hook = (event: string, payload: unknown = { session_id: 's-1' }) => w.hookCall({ terminalId: 'jg-1', event, payload, ns: 0n, pid: 1, stale: false });
  const captures = () => cmd.written.filter((l) => l.startsWith('capture-pane')).length;
  return { w, clock, shows, hook, warnings, sessions, events, screen, captures };
}

describe('hook signals in the pane watcher', () => {
  it('turn start and turn end decide busy and done at once, named `hook <event>`; the lagging screen changes neither', async () => {
    const t = await setup();
    expect(t.w.status('%1')).toBe('idle');
    expect(t.hook('UserPromptSubmit')).toBeNull();
    expect(t.w.snapshot('%1')?.context).toMatchObject({ rule: 'hook UserPromptSubmit', source: 'hook' });
    expect(t.w.status('%1')).toBe('busy');
    // The screen has not drawn the spinner yet: a quiet screen within the grace holds nothing.
    await t.shows(IDLE);
    expect(t.w.snapshot('%1')?.machine).toBe('busy');
    expect(t.w.snapshot('%1')?.context.source).toBe('hook');
    await t.shows(SPINNER);
    expect(t.w.snapshot('%1')?.context.rule).toBe('hook UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'the reply' });
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    expect(t.w.snapshot('%1')?.context).toMatchObject({ rule: 'hook Stop', source: 'hook' });
    expect(t.w.hookEnd('%1', 0)).toMatchObject({ turn: 1, event: 'Stop', reply: 'the reply' });
    expect(t.w.hookEnd('%1', 1)).toBeNull();
    // The spinner still on screen after the end is the screen lagging: no second turn.
    await t.shows(SPINNER);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    await t.shows(IDLE);
    expect(t.w.status('%1')).toBe('done');
    expect(t.sessions).toEqual(['s-1']);
    expect(t.warnings).toEqual([]);
  });

  it('trap: Esc after a turn start gives no end event; the quiet screen ends the turn once it held for the grace', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER);
    await t.shows(IDLE);
    t.clock.advance(2999);
    expect(t.w.status('%1')).toBe('busy');
    t.clock.advance(1);
    // Settling on the screen's word, then done: the hook's busy did not stick.
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.snapshot('%1')?.context.source).toBe('screen');
    expect(t.w.snapshot('%1')?.context.rule).toMatch(/^box \(no hook end event after UserPromptSubmit within 3000 ms\)/);
  });

  it('a menu on screen wins over a hook busy; a permission request says waiting, and a denial (no end event) ends on the screen', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    await t.shows(MENU);
    expect(t.w.status('%1')).toBe('waiting_input');
    expect(t.w.snapshot('%1')?.context.source).toBe('screen');
    await t.shows(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    t.hook('PermissionRequest', { session_id: 's-1', message: 'Allow?' });
    // The CLI still shows its busy footer before it draws the menu (opencode, copilot): the screen
    // lags, and waiting_input waits for the menu and its question.
    await t.shows(`${SPINNER} `);
    expect(t.w.status('%1')).toBe('busy');
    await t.shows(MENU);
    expect(t.w.status('%1')).toBe('waiting_input');
    expect(t.w.snapshot('%1')?.context.source).toBe('screen');
    // Denied once the menu was seen: the screen goes quiet, no Stop comes; the screen decides.
    await t.shows(IDLE);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
  });

  it('a permission request whose menu never shows: the hook decides once the grace is over, the screen after that', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER);
    t.hook('PermissionRequest', { session_id: 's-1' });
    await t.shows(`${SPINNER} `); // 150 ms after the hook
    t.clock.advance(2849);
    expect(t.w.status('%1')).toBe('busy');
    // No menu the profile knows: the hook's word decides.
    t.clock.advance(1);
    expect(t.w.status('%1')).toBe('waiting_input');
    expect(t.w.snapshot('%1')?.context.rule).toBe('hook PermissionRequest');
    // From then on the screen decides: the work goes on (approved elsewhere).
    await t.shows(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
  });

  it('while a hook decided the state, output asks for no capture of its own: one once it stops; after the screen caught up, every output is read again', async () => {
    const t = await setup();
    /** The pane prints `chunks` chunks 50 ms apart; a capture asked for meanwhile reads `text`. */
    const prints = async (chunks: number, text: string) => {
      for (let i = 0; i < chunks; i++) {
        t.events.output('%1', `chunk ${i}`);
        await t.screen(text);
        t.clock.advance(50);
        await t.screen(text);
      }
    };
    t.hook('UserPromptSubmit');
    const atStart = t.captures();
    await prints(10, SPINNER);
    expect(t.captures()).toBe(atStart);
    t.clock.advance(100);
    await t.screen(SPINNER);
    expect(t.captures()).toBe(atStart + 1);
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    // The last frames after the end: one capture once they stop, which sees the screen caught up.
    await prints(4, IDLE);
    expect(t.captures()).toBe(atStart + 1);
    t.clock.advance(100);
    await t.screen(IDLE);
    expect(t.captures()).toBe(atStart + 2);
    expect(t.w.status('%1')).toBe('done');
    // No hook word now (the screen caught up): output is read as it comes (the next prompt typed).
    await prints(3, `${IDLE}next`);
    expect(t.captures()).toBe(atStart + 5);
  });

  it("a status change a bridge call decided carries the call's start (hookFiredAt, from its ns); one the screen decided does not", async () => {
    const t = await setup();
    const changes: { status: string; hookFiredAt?: number }[] = [];
    t.w.onChange((c) => changes.push({ status: c.status, ...(c.hookFiredAt !== undefined ? { hookFiredAt: c.hookFiredAt } : {}) }));
    t.w.hookCall({ terminalId: 'jg-1', event: 'UserPromptSubmit', payload: { session_id: 's-1' }, ns: 1_700_000_000_123_456_789n, pid: 1, stale: false });
    t.w.hookSignal('jg-1', { kind: 'turn-end' }, 'Stop');
    t.w.inputSent('%1');
    await t.shows(SPINNER);
    expect(changes).toEqual([{ status: 'busy', hookFiredAt: 1_700_000_000_123.456 }, { status: 'done' }, { status: 'busy' }]);
  });

  it('stale calls (left from before the start) give their session and nothing else', async () => {
    const t = await setup();
    t.w.hookCall({ terminalId: 'jg-1', event: 'UserPromptSubmit', payload: { session_id: 'old' }, ns: 0n, pid: 1, stale: true });
    expect(t.w.status('%1')).toBe('idle');
    expect(t.sessions).toEqual(['old']);
    expect(t.w.hookCall({ terminalId: 'jg-9', event: 'Stop', payload: {}, ns: 0n, pid: 1, stale: false })).toMatch(/no watched pane has terminal id jg-9/);
    expect(t.w.hookView('%1')).toMatchObject({ kind: 'fake-agent', calls: 0 });
  });

  it('hooks that never fire: a turn seen on the screen alone ends normally and warns once', async () => {
    const t = await setup();
    for (const n of [1, 2]) {
      t.w.inputSent('%1');
      await t.shows(SPINNER);
      expect(t.w.status('%1')).toBe('busy');
      await t.shows(n === 1 ? IDLE : `${IDLE} `);
      t.clock.advance(300);
      expect(t.w.status('%1')).toBe('done');
    }
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]).toMatch(/no fake-agent hook event came during turn 1 of a/);
    expect(t.w.hooksExpected('%1')).toBe(false);
    expect(t.w.hookView('%1')?.warning).toBe(t.warnings[0]);
  });

  it('no warning for a pane whose hooks were turned off at its start', async () => {
    const t = await setup(false);
    t.w.inputSent('%1');
    await t.shows(SPINNER);
    await t.shows(IDLE);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.warnings).toEqual([]);
    expect(t.w.hookView('%1')).toMatchObject({ installed: false });
  });
});
