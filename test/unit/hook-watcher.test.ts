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

/** The same with a turn summary below the reply, as opencode draws it (`▣  Build · <model> · 5.9s`). */
const withSummary = ProfileSchema.parse({
  ...profile,
  detect: {
    ...profile.detect,
    rules: [...profile.detect.rules.slice(0, 2), { name: 'summary', status: 'done', pattern: '^▣ .* · \\d[\\d.]*s$', lines: 3 }, profile.detect.rules[2]],
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

async function setup(installed = true, prof = profile, files = noFiles) {
  const events = fakeControl();
  const cmd = fakeControl();
  opened.push(events, cmd);
  const clock = new FakeClock();
  const w = new PaneWatcher(events.client, { commands: cmd.client, clock, stateFiles: files, hookGraceMs: 3000, hooksInstalled: () => installed });
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
  /**
   * The pane prints (a redraw) and its screen reads `text` once captured: the look comes once the
   * output stopped for 150 ms, or for a second while a hook says busy (`afterMs` 1000).
   */
  const shows = async (text: string, afterMs = 150) => {
    events.output('%1', 'x');
    clock.advance(afterMs);
    await screen(text);
  };
  const pane: WatchedPane = { paneId: '%1', windowId: '@1', agent: 'a', profile: prof, pid: 7, terminalId: 'jg-1' };
  w.watch(pane);
  await screen(IDLE);
  const hook = (event: string, payload: unknown = { session_id: 's-1' }) => w.hookCall({ terminalId: 'jg-1', event, payload, ns: 0n, pid: 1, stale: false });
  const captures = () => cmd.written.filter((l) => l.startsWith('capture-pane')).length;
  const pauses = () => events.written.filter((l) => l.endsWith(":pause'")).length;
  const resumes = () => events.written.filter((l) => l.endsWith(":continue'")).length;
  return { w, clock, shows, hook, warnings, sessions, events, screen, captures, pane, pauses, resumes };
}

/** A prompt whose turn the screen alone sees, start (the look 150 ms after it) to end: no hook calls. */
async function turnOnScreenAlone(t: Awaited<ReturnType<typeof setup>>): Promise<void> {
  t.w.inputSent('%1');
  t.clock.advance(150);
  await t.screen(SPINNER);
  await t.shows(IDLE);
  t.clock.advance(300);
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

  it("a listener of the state change a hook's turn end made finds that end and its reply already recorded", async () => {
    const t = await setup();
    const seen: unknown[] = [];
    t.w.onChange((c) => {
      if (c.status === 'done') seen.push(t.w.hookEnd('%1', 0));
    });
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'the reply' });
    expect(seen).toEqual([{ turn: 1, event: 'Stop', reply: 'the reply' }]);
    // An end that closes no turn (none was open) is not kept.
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'again' });
    expect(t.w.hookEnd('%1', 1)).toBeNull();
  });

  it('screenBehind: after a turn end by a hook, the ms left of the grace until the screen reads quiet (a look asked for), 0 after', async () => {
    const t = await setup();
    expect(t.w.screenBehind('%1')).toBe(0);
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER);
    expect(t.w.screenBehind('%1')).toBe(0);
    t.hook('Stop', { session_id: 's-1' });
    t.clock.advance(1000);
    const before = t.captures();
    expect(t.w.screenBehind('%1')).toBe(2000);
    // The look it asked for: the screen still lags, so the wait goes on; once it reads quiet, no more.
    t.clock.advance(0);
    expect(t.captures()).toBe(before + 1);
    await t.screen(SPINNER);
    expect(t.w.screenBehind('%1')).toBe(2000);
    await t.shows(IDLE);
    expect(t.w.screenBehind('%1')).toBe(0);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    // A screen that never catches up is waited for no longer than the grace.
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1' });
    t.clock.advance(3000);
    expect(t.w.screenBehind('%1')).toBe(0);
  });

  it('trap: Esc after a turn start gives no end event; the quiet screen ends the turn once it held for the grace', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER, 1000);
    await t.shows(IDLE, 1000);
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
    await t.shows(MENU, 1000);
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

  it('a menu read just before the turn ended, then redrawn away unseen: the screen is read again before it can decide', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    t.hook('PermissionRequest', { session_id: 's-1' });
    await t.shows(MENU);
    expect(t.w.status('%1')).toBe('waiting_input');
    // Approved: output asks for a capture, the Stop comes while it is on its way, and it reads the menu
    // still drawn (held: the turn just ended). A second later the CLI redraws the menu away: no capture
    // for that (a pane idle by its hooks is looked at once its output stopped for the grace).
    const MENU_AFTER = `${MENU}\n(approved)`;
    t.events.output('%1', 'approved');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    await t.screen(MENU_AFTER);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(1000);
    t.events.output('%1', 'redrawn');
    // The grace after the turn end passes: the held menu is not applied from that old reading; the
    // screen is read again, and shows it gone.
    t.clock.advance(2000);
    await flush();
    expect(t.w.status('%1')).toBe('done');
    await t.screen(IDLE);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.captureReasons['stale-screen']).toBe(1);
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

  /** The pane prints `chunks` chunks 50 ms apart; a capture asked for meanwhile reads `text`. */
  const printer = (t: Awaited<ReturnType<typeof setup>>) => async (chunks: number, text: string) => {
    for (let i = 0; i < chunks; i++) {
      t.events.output('%1', `chunk ${i}`);
      await t.screen(text);
      t.clock.advance(50);
      await t.screen(text);
    }
  };

  it('while a hook decided the state, output asks for no capture of its own: one once it stopped for a second; idle by its hooks, one after the grace', async () => {
    const t = await setup();
    const prints = printer(t);
    t.hook('UserPromptSubmit');
    const atStart = t.captures();
    await prints(10, SPINNER);
    expect(t.captures()).toBe(atStart);
    // The turn's end drawn, its hook still on its way (a few hundred ms on a starved machine): no look yet.
    t.clock.advance(900);
    await t.screen(SPINNER);
    expect(t.captures()).toBe(atStart);
    t.clock.advance(50);
    await t.screen(SPINNER);
    expect(t.captures()).toBe(atStart + 1);
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    expect(t.w.status('%1')).toBe('done');
    // The last frames after the end: its turns start by a hook, so its screen is looked at once the
    // output has stopped for the grace (for an error or a menu no hook reports), not 150 ms after.
    await prints(4, IDLE);
    t.clock.advance(2900);
    await t.screen(IDLE);
    expect(t.captures()).toBe(atStart + 1);
    t.clock.advance(100);
    await t.screen(IDLE);
    expect(t.captures()).toBe(atStart + 2);
    expect(t.w.status('%1')).toBe('done');
    // The next prompt typed, submitted, and its turn started by the hook: no capture for any of it.
    await prints(3, `${IDLE}next`);
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    expect(t.w.status('%1')).toBe('busy');
    await prints(3, SPINNER);
    expect(t.captures()).toBe(atStart + 2);
  });

  it('an idle pane whose hooks have called (SessionStart): text typed into it asks for a look only after the grace', async () => {
    const t = await setup();
    t.hook('SessionStart');
    const before = t.captures();
    await printer(t)(3, `${IDLE}typed`);
    // The last chunk came 50 ms ago: 2,949 ms more and still no look; at 3 s after it, one.
    t.clock.advance(2899);
    await t.screen(`${IDLE}typed`);
    expect(t.captures()).toBe(before);
    t.clock.advance(51);
    await t.screen(`${IDLE}typed`);
    expect(t.captures()).toBe(before + 1);
    expect(t.w.status('%1')).toBe('idle');
  });

  it('a screen no rule knows (drawn in part) leaves the hook word standing: output still asks no capture of its own', async () => {
    const t = await setup();
    t.hook('UserPromptSubmit');
    t.events.output('%1', 'x');
    t.clock.advance(150);
    await t.screen('garbled half-drawn frame');
    expect(t.w.status('%1')).toBe('busy');
    const before = t.captures();
    await printer(t)(4, SPINNER);
    expect(t.captures()).toBe(before);
  });

  /** A turn started and ended by its hooks, then a prompt sent: the captures made until then. */
  const promptAfterATurn = (t: Awaited<ReturnType<typeof setup>>) => {
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    const before = t.captures();
    t.w.inputSent('%1');
    return before;
  };

  it('a prompt whose turn start hook is late: one look at the screen 150 ms after it decides busy', async () => {
    const t = await setup();
    const before = promptAfterATurn(t);
    t.events.output('%1', 'spinner');
    t.clock.advance(149);
    await t.screen(SPINNER);
    expect(t.captures()).toBe(before);
    t.clock.advance(1);
    await t.screen(SPINNER);
    expect(t.captures()).toBe(before + 1);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.snapshot('%1')?.context.rule).toMatch(/spinner/);
    // The hook's word is gone then (busy on screen after it): its output is read as it comes.
    await printer(t)(2, SPINNER);
    expect(t.captures()).toBeGreaterThan(before + 1);
  });

  it('a prompt that starts no turn (a command), no hook by the grace: the screen is read then, and the pane stays idle by its hooks', async () => {
    const t = await setup();
    const before = promptAfterATurn(t);
    // The 150 ms look reads the box emptied, nothing busy: the hook word still stands until the grace.
    t.clock.advance(150);
    await t.screen(`${IDLE}`);
    expect(t.captures()).toBe(before + 1);
    await printer(t)(2, `${IDLE}x`);
    expect(t.captures()).toBe(before + 1);
    // 3 s after the prompt (250 ms have passed).
    t.clock.advance(2749);
    await t.screen(`${IDLE}y`);
    expect(t.captures()).toBe(before + 1);
    t.clock.advance(1);
    await t.screen(`${IDLE}y`);
    expect(t.captures()).toBe(before + 2);
    expect(t.w.captureReasons['no-start-hook']).toBe(1);
    expect(t.w.status('%1')).toBe('done');
    // Still idle with hooks that work: typing asks for the late look only.
    await printer(t)(2, `${IDLE}z`);
    expect(t.captures()).toBe(before + 2);
  });

  it("a prompt whose Enter was lost, after a turn a hook ended: the last turn's summary still on screen is no new turn", async () => {
    const t = await setup(true, withSummary);
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER); // the last reading of the turn: no summary yet
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    expect(t.w.turns('%1')).toBe(1);
    // The summary drew after the hook; the screen was not read since, but delivery read it before typing.
    const SUMMARY = '▣ Build · Stub · 5.9s';
    t.w.inputSent('%1', `${SUMMARY}\n${IDLE}`);
    // The 150 ms look and the one at the end of the grace: the prompt still in the box, the old summary above.
    t.clock.advance(150);
    await t.screen(`${SUMMARY}\n${IDLE}Read the inbox [jg:0123456789abcdef]`);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(2850);
    await t.screen(`${SUMMARY}\n${IDLE}Read the inbox [jg:0123456789abcdef]`);
    t.clock.advance(1000);
    expect(t.w.captureReasons['no-start-hook']).toBe(1);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    // Enter again: the turn runs, and it is the second.
    t.w.inputSent('%1', `${SUMMARY}\n${IDLE}Read the inbox [jg:0123456789abcdef]`);
    t.hook('UserPromptSubmit');
    expect(t.w.status('%1')).toBe('busy');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r2' });
    expect(t.w.turns('%1')).toBe(2);
  });

  it('a prompt whose turn start hook comes within 150 ms: no look at the screen at all', async () => {
    const t = await setup();
    const before = promptAfterATurn(t);
    t.clock.advance(100);
    t.hook('UserPromptSubmit');
    // Printing on past the 150 ms: no capture (the hook's word stands while output comes).
    await printer(t)(4, SPINNER);
    expect(t.captures()).toBe(before);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.captureReasons['start-look'] ?? 0).toBe(0);
  });

  it('a pane whose hooks only end turns (no turn start seen): after the screen caught up, every output is read again', async () => {
    const t = await setup();
    const prints = printer(t);
    await t.shows(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    // The screen catches up (reads quiet): the hook's word is gone, as no hook will start the next turn.
    await prints(2, IDLE);
    t.clock.advance(200);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    const caughtUp = t.captures();
    await prints(3, `${IDLE}next`);
    expect(t.captures()).toBe(caughtUp + 3);
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

  it('a call that comes before its pane is watched (SessionStart at launch) is kept and applied once it is; one 10 s old is not', async () => {
    const t = await setup();
    const call = (terminalId: string, sessionId: string) =>
      t.w.hookCall({ terminalId, event: 'SessionStart', payload: { session_id: sessionId }, ns: 0n, pid: 1, stale: false });
    expect(call('jg-2', 'early-2')).toMatch(/no watched pane has terminal id jg-2 \(yet\): kept 10 s for its pane/);
    expect(call('jg-3', 'early-3')).toMatch(/kept 10 s/);
    t.clock.advance(5000);
    t.w.watch({ ...t.pane, paneId: '%2', windowId: '@2', terminalId: 'jg-2' });
    expect(t.sessions).toEqual(['early-2']);
    t.clock.advance(5001);
    t.w.watch({ ...t.pane, paneId: '%3', windowId: '@3', terminalId: 'jg-3' });
    expect(t.sessions).toEqual(['early-2']);
    // Bounded: a terminal that never comes keeps at most 16 calls.
    for (let i = 0; i < 16; i++) call('jg-never', `s${i}`);
    expect(call('jg-never', 's16')).toMatch(/16 of its calls wait already/);
  });

  it('stale calls (left from before the start) give their session and nothing else', async () => {
    const t = await setup();
    t.w.hookCall({ terminalId: 'jg-1', event: 'UserPromptSubmit', payload: { session_id: 'old' }, ns: 0n, pid: 1, stale: true });
    expect(t.w.status('%1')).toBe('idle');
    expect(t.sessions).toEqual(['old']);
    expect(t.w.hookCall({ terminalId: 'jg-9', event: 'Stop', payload: {}, ns: 0n, pid: 1, stale: false })).toMatch(/no watched pane has terminal id jg-9/);
    expect(t.w.hookView('%1')).toMatchObject({ kind: 'fake-agent', calls: 0 });
  });

  it('hooks that never fire: the first turn is seen by the look 150 ms after its prompt, ends normally and warns once; later turns are read at once', async () => {
    const t = await setup();
    t.w.inputSent('%1');
    // Its turns are expected to start by a hook: the spinner alone asks for no capture, but the screen
    // has a look 150 ms after the prompt when no hook came by then.
    t.events.output('%1', 'x');
    t.clock.advance(100);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('idle');
    t.clock.advance(50);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    await t.shows(IDLE);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]).toMatch(/no fake-agent hook event came during turn 1 of a/);
    expect(t.w.hooksExpected('%1')).toBe(false);
    expect(t.w.hookView('%1')?.warning).toBe(t.warnings[0]);
    t.w.inputSent('%1');
    await t.shows(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    await t.shows(`${IDLE} `);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.warnings).toHaveLength(1);
  });

  it('hooks late, not gone: a call after the warning takes it back, and the hooks decide again', async () => {
    const t = await setup();
    const back: string[] = [];
    t.w.onHooksBack((_p, m) => back.push(m));
    // A turn the screen saw whole before its calls came (a starved machine): warned.
    await turnOnScreenAlone(t);
    expect([t.w.status('%1'), t.warnings.length, t.w.hooksExpected('%1')]).toEqual(['done', 1, false]);
    // Its calls land now: stale-free, so the hooks work.
    t.hook('UserPromptSubmit');
    expect(back).toEqual([t.warnings[0]]);
    expect(t.w.hooksExpected('%1')).toBe(true);
    expect(t.w.hookView('%1')?.warning ?? null).toBeNull();
    t.hook('Stop');
    expect(t.w.status('%1')).toBe('done');
    // The next turn is the hooks' again: started and ended by them, the spinner alone asks for no capture.
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    expect(t.w.snapshot('%1')?.context).toMatchObject({ rule: 'hook UserPromptSubmit', source: 'hook' });
    const before = t.captures();
    t.events.output('%1', 'x');
    t.clock.advance(100);
    expect(t.captures()).toBe(before);
    t.hook('Stop');
    expect(t.w.snapshot('%1')?.context).toMatchObject({ rule: 'hook Stop', source: 'hook' });
    expect(t.warnings).toHaveLength(1);
    expect(back).toHaveLength(1);
  });

  it("a late chunk of the turn's spinner, after the hook's end and the screen caught up, opens no turn (seen at 100 agents)", async () => {
    // The profile's outputBusy names the spinner: such output says busy without a capture.
    const spinning = ProfileSchema.parse({ ...profile, detect: { ...profile.detect, outputBusy: ['esc to cancel'] } });
    const t = await setup(true, spinning);
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    await t.shows(SPINNER);
    t.hook('Stop');
    expect(t.w.status('%1')).toBe('done');
    // The screen caught up (read quiet): the word is confirmed.
    await t.shows(IDLE);
    t.clock.advance(3500);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    // tmux delivers the last spinner frame's bytes on the output connection only now (seen 370 ms late
    // there, while captures on the other connection were current): stale, not a new turn.
    t.events.output('%1', SPINNER);
    t.clock.advance(400);
    await t.screen(IDLE);
    t.clock.advance(3500);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    expect(t.warnings).toEqual([]);
    // A real next turn still starts by its hook.
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    expect(t.w.status('%1')).toBe('busy');
  });

  it('busy on screen again after the screen caught up with the turn end, no hook start: a turn only once it stayed busy for the grace (opencode under load)', async () => {
    const t = await setup();
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    // The screen caught up (its look once the output stopped for the grace).
    await t.shows(IDLE, 3000);
    expect(t.w.status('%1')).toBe('done');
    // The CLI draws its busy footer again (opencode 1.18.33 did for 2.9 s on a loaded machine): held.
    await t.shows(SPINNER, 3000);
    expect(t.w.status('%1')).toBe('done');
    // Quiet again before the grace ended: the screen is read once more at its end, and no turn counted.
    t.events.output('%1', 'x');
    t.clock.advance(2999);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(1);
    await t.screen(IDLE);
    t.clock.advance(5000);
    await t.screen(IDLE);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(1);
    // A prompt jaggers typed is its own evidence: its busy screen decides at once (the look 150 ms after).
    t.w.inputSent('%1');
    t.clock.advance(150);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r2' });
    await t.shows(IDLE, 3000);
    expect(t.w.turns('%1')).toBe(2);
    // Busy that stays busy for the grace with no hook (a turn its hooks did not start): the screen opens it then.
    await t.shows(SPINNER, 3000);
    t.clock.advance(2999);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(1);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.snapshot('%1')?.context.source).toBe('screen');
  });

  it('a prompt typed while the screen still read busy (its footer stale after the turn end): that busy is no turn start; the hook starts the turn, counted once', async () => {
    const t = await setup();
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r' });
    expect(t.w.turns('%1')).toBe(1);
    // Delivery waited the grace for the screen to catch up; it still read busy, and the prompt went in.
    t.w.inputSent('%1', SPINNER);
    t.clock.advance(150);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('done');
    // The CLI redraws, quiet (it has not taken the prompt up yet): no turn either.
    await t.shows(IDLE, 3000);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(10_000);
    await t.screen(IDLE);
    expect(t.w.turns('%1')).toBe(1);
    // Its start hook, seconds late: the one turn of this prompt.
    t.hook('UserPromptSubmit');
    expect(t.w.status('%1')).toBe('busy');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'r2' });
    expect(t.w.turns('%1')).toBe(2);
    expect(t.warnings).toEqual([]);
    // The same with hooks that do not come: a busy screen that stays busy for the grace is the turn.
    t.w.inputSent('%1', SPINNER);
    t.clock.advance(150);
    await t.screen(SPINNER);
    t.clock.advance(2999);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(1);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.turns('%1')).toBe(2);
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

/** The same profile with a CLI state file (the fake agent's, as the demo profile has it). */
const filed = ProfileSchema.parse({ ...profile, detect: { ...profile.detect, stateFile: 'fake-agent' } });

/** A state file the test writes (`writes`: inotify tells), its readings counted. */
function stateFile() {
  const f = { status: 'idle' as 'busy' | 'idle', reads: 0, changed: null as ((name: string | null) => void) | null };
  const ports: StateFilePorts = {
    homeOf: async () => '/h',
    read: async () => {
      f.reads++;
      return { classification: { status: f.status, rule: `state-file ${f.status}`, lines: [] }, sessionId: null };
    },
    watchFolder: (_dir, onChange) => {
      f.changed = onChange;
      return { close() {} };
    },
  };
  const writes = async (status: 'busy' | 'idle') => {
    f.status = status;
    f.changed?.('7.json');
    await flush();
  };
  return { f, ports, writes };
}

/** A pane with a state file whose hooks called (SessionStart) and started a turn on a prompt; the file says busy. */
async function hookedTurn() {
  const sf = stateFile();
  const t = await setup(true, filed, sf.ports);
  t.hook('SessionStart');
  t.w.inputSent('%1');
  t.hook('UserPromptSubmit');
  await sf.writes('busy');
  return { sf, t };
}

describe("a pane whose hooks decide: its state file's changes are left to them", () => {
  it("a turn its hooks start: its file's busy is not read; after their turn end, the file's idle catches the screen up and resumes the output", async () => {
    const sf = stateFile();
    const t = await setup(true, filed, sf.ports);
    t.hook('SessionStart');
    const reads = sf.f.reads;
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    expect(t.pauses(), "the hook's turn start pauses the busy pane's output").toBe(1);
    await sf.writes('busy');
    expect(t.w.status('%1')).toBe('busy');
    expect(sf.f.reads, 'a change the turn start explains: not read').toBe(reads);
    // The turn end reads what was left unread (busy still): the screen has not caught up, the output stays paused.
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await flush();
    expect(t.w.status('%1')).toBe('done');
    expect(sf.f.reads).toBe(reads + 1);
    expect(t.w.screenBehind('%1')).toBeGreaterThan(0);
    expect(t.resumes()).toBe(0);
    // The file's idle, read as it comes: the screen caught up, and the output resumed (one look at it).
    await sf.writes('idle');
    expect(sf.f.reads).toBe(reads + 2);
    expect(t.w.screenBehind('%1')).toBe(0);
    expect(t.resumes()).toBe(1);
    await t.screen(IDLE);
    expect(sf.f.reads, 'the look finds the file as last read: not read again').toBe(reads + 2);
    expect(t.w.status('%1')).toBe('done');
    // The next turn's busy: not read again.
    t.w.inputSent('%1');
    t.hook('UserPromptSubmit');
    await sf.writes('busy');
    expect(sf.f.reads).toBe(reads + 2);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.pauses()).toBe(2);
  });

  it("the file's idle come before the hook's turn end (left unread): read at that end, so the screen has caught up with no look", async () => {
    const { sf, t } = await hookedTurn();
    await t.shows(SPINNER);
    const reads = sf.f.reads;
    await sf.writes('idle');
    expect(sf.f.reads).toBe(reads);
    const looks = t.captures();
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await flush();
    expect(sf.f.reads).toBe(reads + 1);
    expect(t.w.screenBehind('%1')).toBe(0);
    expect(t.captures(), 'only the look the resumed output asks for, not answered yet').toBe(looks + 1);
  });

  it('a turn too fast for any look (busy and idle both left unread): the file read at the end says idle as before, and still catches the screen up', async () => {
    const { sf, t } = await hookedTurn();
    const reads = sf.f.reads;
    await sf.writes('idle');
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await flush();
    expect(sf.f.reads).toBe(reads + 1);
    expect(t.w.screenBehind('%1')).toBe(0);
  });

  it("the turn's idle written while the file is read at the hook's end (its inotify event after): that reading, which took in the busy left unread, catches the screen up", async () => {
    const { sf, t } = await hookedTurn();
    // Idle on disk, its change not told yet: the reading at the end says idle, as the last one did.
    sf.f.status = 'idle';
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await flush();
    expect(t.w.screenBehind('%1')).toBe(0);
    await sf.writes('idle');
    expect(t.w.screenBehind('%1')).toBe(0);
    expect(t.w.status('%1')).toBe('done');
  });

  it('Esc after a turn start (no end event), the file going idle after the last look: read one grace later, the turn ends as if read at once', async () => {
    const { sf, t } = await hookedTurn();
    await t.shows(SPINNER);
    const reads = sf.f.reads;
    await sf.writes('idle');
    expect(sf.f.reads).toBe(reads);
    t.clock.advance(2999);
    await flush();
    expect(t.w.status('%1')).toBe('busy');
    t.clock.advance(1);
    await flush();
    // Read now, quiet since the change: past the grace, it goes through (settling, then done).
    expect(sf.f.reads).toBe(reads + 1);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.snapshot('%1')?.context.rule).toMatch(/no hook end event after UserPromptSubmit within 3000 ms/);
  });

  it('a quiet file that goes busy again within the grace (no hook): the grace ends on the file read then, and the turn goes on', async () => {
    const { sf, t } = await hookedTurn();
    await t.shows(SPINNER, 1000);
    // Quiet on screen and in the file (read with the look): the grace runs from here.
    await sf.writes('idle');
    await t.shows(IDLE, 1000);
    t.clock.advance(2900);
    await sf.writes('busy');
    const reads = sf.f.reads;
    t.clock.advance(100);
    await flush();
    expect(sf.f.reads).toBe(reads + 1);
    t.clock.advance(1000);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.turns('%1')).toBe(0);
    // The hook's word still stands: nothing went through (a stale quiet reading would have, then the file's busy).
    expect(t.w.snapshot('%1')?.context).toMatchObject({ rule: 'hook UserPromptSubmit', source: 'hook' });
  });

  it('the hooks stop deciding (a turn end no start hook came before: a CLI that reports only ends): what they left unread is read at once', async () => {
    const sf = stateFile();
    const t = await setup(true, filed, sf.ports);
    t.hook('SessionStart');
    t.w.inputSent('%1');
    const reads = sf.f.reads;
    await sf.writes('busy');
    t.clock.advance(100);
    await flush();
    expect(sf.f.reads).toBe(reads);
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await flush();
    expect(sf.f.reads).toBe(reads + 1);
    // From then on the file is read as it changes.
    await sf.writes('idle');
    expect(sf.f.reads).toBe(reads + 2);
  });

  it('hooks that stop firing after a turn they ran: the look 150 ms after the prompt reads the busy left unread; then each change is read', async () => {
    const { sf, t } = await hookedTurn();
    t.hook('Stop', { session_id: 's-1', last_assistant_message: 'ok' });
    await sf.writes('idle');
    expect(t.w.turns('%1')).toBe(1);
    // The next prompt's turn: no hook comes.
    t.w.inputSent('%1');
    await sf.writes('busy');
    t.clock.advance(149);
    await flush();
    expect(t.w.status('%1')).toBe('done');
    t.clock.advance(1);
    await t.screen(SPINNER);
    expect(t.w.status('%1')).toBe('busy');
    expect(t.w.snapshot('%1')?.context.source).toBe('state-file');
    // The file decides from here, read at once.
    const reads = sf.f.reads;
    await sf.writes('idle');
    expect(sf.f.reads).toBe(reads + 1);
    t.clock.advance(300);
    expect(t.w.status('%1')).toBe('done');
    expect(t.w.turns('%1')).toBe(2);
    expect(t.warnings).toHaveLength(1);
    await sf.writes('busy');
    expect(t.w.status('%1')).toBe('busy');
  });
});
