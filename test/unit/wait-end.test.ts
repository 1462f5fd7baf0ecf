// The end of a turn when the CLI keeps a transcript: its finished reply ends the wait, but not while the
// screen still reads busy (copilot 1.0.102 writes the end before its footer stops saying `Working`, and
// a turn confirmed then was followed by that busy screen, counted as a second turn).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Classification } from '../../src/detect/classify.js';
import type { PaneIO } from '../../src/delivery/ports.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import type { TurnWatch } from '../../src/turns/ports.js';
import { RECENT_LINES } from '../../src/delivery/evidence.js';
import { EMPTY_REPLY_GRACE_MS, screenSinceEcho, waitForTurnEnd } from '../../src/turns/wait-end.js';
import { replyFromScreen, screenTurnEnd } from '../../src/handover/reply.js';
import { packageRoot } from '../../src/package-root.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** One pane whose screen reading the test sets, and tells the wait about as a new screen would. */
function fakeWatch(machine = 'busy'): { watch: TurnWatch; show(status: Classification['status']): void } {
  let screen: Classification = { status: 'busy', rule: 'spinner', lines: [] };
  const screens = new Set<(paneId: string, screen: string) => void>();
  const watch: TurnWatch = {
    status: () => machine,
    onChange: () => () => {},
    onScreen: (l) => {
      screens.add(l);
      return () => screens.delete(l);
    },
    inputSent: () => {},
    turns: () => 0,
    confirmTurn: () => {},
    snapshot: () => ({ status: 'busy', context: { since: 0, rule: null, lines: [] }, screen }),
  };
  return {
    watch,
    show(status) {
      screen = { status, rule: status, lines: [] };
      for (const l of screens) l('%1', '');
    },
  };
}

/** A pane whose machine has closed the turn (`done`, its screen read as a turn summary); `extra` adds to it. */
function settledWatch(extra: Partial<TurnWatch> = {}): TurnWatch {
  return {
    ...fakeWatch('done').watch,
    turns: () => 1,
    snapshot: () => ({ status: 'done', context: { since: 0, rule: null, lines: [] }, screen: { status: 'done', rule: 'turn-summary', lines: [] } }),
    ...extra,
  };
}

const io: PaneIO = { capture: async () => '', leaveMode: async () => {}, paste: async () => {}, sendKeys: async () => {} };
const spec = (readTranscript: () => Promise<{ text: string; finished: boolean }>) => ({
  paneId: '%1',
  agent: 'copilot',
  profile: ProfileSchema.parse({ name: 'copilot', command: 'copilot', session: { transcript: 'copilot' } }),
  nonce: 'n1',
  turnsBefore: 0,
  timeoutMs: 60_000,
  artifact: 'turn_1.md',
  readTranscript,
  label: 'handoff',
});

/** A wait on a pane whose transcript has the finished reply while its screen reads busy; `ended()` says whether it is over. */
function finishedWhileBusy() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  const f = fakeWatch();
  let over = false;
  const end = waitForTurnEnd(
    f.watch,
    io,
    spec(async () => ({ text: 'the answer', finished: true })),
  ).then((e) => {
    over = true;
    return e;
  });
  return { f, end, ended: () => over };
}

describe('waitForTurnEnd with a transcript', () => {
  afterEach(() => vi.useRealTimers());

  it('a finished reply waits for the screen to leave busy, then ends the turn by the transcript', async () => {
    const { f, end, ended } = finishedWhileBusy();
    await vi.advanceTimersByTimeAsync(1000);
    expect(ended(), 'still busy on screen: not over yet').toBe(false);
    f.show('idle');
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'the answer' });
  });

  it('a screen that stays busy holds the reply 3 s at most', async () => {
    const { end, ended } = finishedWhileBusy();
    await vi.advanceTimersByTimeAsync(2900);
    expect(ended()).toBe(false);
    await vi.advanceTimersByTimeAsync(300);
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'the answer' });
  });

  it("a finished reply ends the turn at once when the pane's machine already says done (its state file did), whatever the last screen read", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const f = fakeWatch('done');
    let over = false;
    const end = waitForTurnEnd(
      f.watch,
      io,
      spec(async () => ({ text: 'the answer', finished: true })),
    ).then((e) => ((over = true), e));
    await vi.advanceTimersByTimeAsync(50);
    expect(over).toBe(true);
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'the answer' });
  });

  it('an unfinished reply does not end the turn, busy or not', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const f = fakeWatch();
    let ended = false;
    void waitForTurnEnd(
      f.watch,
      io,
      spec(async () => ({ text: 'so far', finished: false })),
    ).then(
      () => (ended = true),
      () => (ended = true),
    );
    f.show('idle');
    await vi.advanceTimersByTimeAsync(5000);
    expect(ended).toBe(false);
  });
});

describe('screenSinceEcho: the screen a turn end is read from', () => {
  const demo = ProfileSchema.parse(JSON.parse(readFileSync(path.join(packageRoot, 'profiles', 'demo.json'), 'utf8')));
  /** A pane of 10 rows over `lines` of history; records the history each capture asked for. */
  function pane(lines: string[]) {
    const asked: number[] = [];
    const paneIo: PaneIO = {
      ...io,
      capture: async (_id, o) => {
        asked.push(o?.history ?? 0);
        return lines.slice(-((o?.history ?? 0) + 10)).join('\n');
      },
    };
    return { io: paneIo, asked };
  }
  const filler = (n: number, what: string) => Array.from({ length: n }, (_, i) => `${what} ${i}`);
  const input = ['', '> ', '  ? for shortcuts'];

  it('an echo among the recent lines: one capture of them, read as the whole history would be', async () => {
    const lines = [...filler(2000, 'old turn'), '> do it [jg:n1]', ' ✦ done it', ...filler(20, 'reply'), ...input];
    const p = pane(lines);
    const screen = await screenSinceEcho(p.io, '%1', 'n1', demo);
    expect(p.asked).toEqual([RECENT_LINES]);
    expect(replyFromScreen(screen!, 'n1', demo)).toBe(replyFromScreen(lines.join('\n'), 'n1', demo));
    expect(screenTurnEnd(screen!, 'n1', demo)).toEqual(screenTurnEnd(lines.join('\n'), 'n1', demo));
  });

  it('an echo further up than the recent lines (a long reply): the whole history is read', async () => {
    const lines = [...filler(100, 'old turn'), '> do it [jg:n1]', ' ✦ done it', ...filler(RECENT_LINES + 50, 'reply'), ...input];
    const p = pane(lines);
    const screen = await screenSinceEcho(p.io, '%1', 'n1', demo);
    expect(p.asked).toEqual([RECENT_LINES, 3000]);
    expect(replyFromScreen(screen!, 'n1', demo)).toContain('reply 0\n');
    expect(screenTurnEnd(screen!, 'n1', demo).echo).toBe(true);
  });

  it('the prompt still in the input box only: the whole history is looked at, not the box', async () => {
    const lines = [...filler(500, 'old turn'), '', '> do it [jg:n1]', '  ? for shortcuts'];
    const p = pane(lines);
    await screenSinceEcho(p.io, '%1', 'n1', demo);
    expect(p.asked).toEqual([RECENT_LINES, 3000]);
  });

  it('a pane gone: null, and no second capture', async () => {
    const asked: number[] = [];
    const gone: PaneIO = { ...io, capture: async (_id, o) => (asked.push(o?.history ?? 0), Promise.reject(new Error('no pane'))) };
    expect(await screenSinceEcho(gone, '%1', 'n1', demo)).toBeNull();
    expect(asked).toEqual([RECENT_LINES]);
  });
});

describe('waitForTurnEnd on a pane whose hooks fire', () => {
  afterEach(() => vi.useRealTimers());
  const demo = ProfileSchema.parse(JSON.parse(readFileSync(path.join(packageRoot, 'profiles', 'demo.json'), 'utf8')));
  const screen = ['> do it [jg:n1]', ' ✦ done it', '', ' ✻ Worked for 0s', '', '╭────╮', '│ >  │', '╰────╯', ' ? for shortcuts'].join('\n');

  /** A settled turn whose screen shows its end; the hook's turn end (with its reply) comes at `hookAtMs`, or never. */
  function settledTurn(hookAtMs: number | null) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const started = performance.now();
    const watch = settledWatch({
      hooksExpected: () => true,
      hookEnd: () => (hookAtMs !== null && performance.now() - started >= hookAtMs ? { turn: 1, event: 'session.idle', reply: 'done it' } : null),
    });
    const paneIo: PaneIO = { ...io, capture: async () => screen };
    return waitForTurnEnd(watch, paneIo, { ...spec(async () => ({ text: '', finished: false })), readTranscript: null, profile: demo });
  }

  it("a screen that settled first waits a moment for the hook's turn end, and takes its reply", async () => {
    const end = settledTurn(400);
    await vi.advanceTimersByTimeAsync(600);
    await expect(end).resolves.toEqual({ by: 'hook', reply: 'done it', event: 'session.idle' });
  });

  it('no hook end within 1.5 s: the screen ends the turn', async () => {
    const end = settledTurn(null);
    await vi.advanceTimersByTimeAsync(2000);
    await expect(end).resolves.toMatchObject({ by: 'screen' });
  });

  it('while the machine holds the turn busy, the screen is not read: the hook ends it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let machine = 'busy';
    let hook: { turn: number; event: string; reply: string } | null = null;
    const changes = new Set<(c: { pane: { paneId: string } }) => void>();
    const f = fakeWatch();
    const watch: TurnWatch = {
      ...f.watch,
      status: () => machine as 'busy',
      onChange: (l) => (changes.add(l as never), () => changes.delete(l as never)),
      turns: () => (hook ? 1 : 0),
      snapshot: () => ({
        status: machine as 'busy',
        context: { since: 0, rule: null, lines: [] },
        screen: { status: 'done', rule: 'turn-summary', lines: [] },
      }),
      hooksExpected: () => true,
      hookEnd: () => hook,
    };
    let captures = 0;
    const paneIo: PaneIO = { ...io, capture: async () => (captures++, screen) };
    const end = waitForTurnEnd(watch, paneIo, { ...spec(async () => ({ text: '', finished: false })), readTranscript: null, profile: demo });
    f.show('done');
    await vi.advanceTimersByTimeAsync(2500);
    expect(captures, 'the screen shows an end the hooks have not reported: not read').toBe(0);
    machine = 'done';
    hook = { turn: 1, event: 'Stop', reply: 'done it' };
    for (const l of changes) l({ pane: { paneId: '%1' } });
    await expect(end).resolves.toEqual({ by: 'hook', reply: 'done it', event: 'Stop' });
    expect(captures).toBe(0);
  });
});

describe('waitForTurnEnd on a pane whose hooks fire, with a transcript', () => {
  afterEach(() => vi.useRealTimers());

  /** A pane whose machine, hook end and transcript the test sets; `tell()` is a change of its state. */
  function hookedPane() {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = { machine: 'done', turns: 0, hook: null as { turn: number; event: string; reply?: string } | null, reads: 0, finished: false };
    const changes = new Set<(c: { pane: { paneId: string } }) => void>();
    const f = fakeWatch();
    const watch: TurnWatch = {
      ...f.watch,
      status: () => p.machine as 'busy',
      onChange: (l) => (changes.add(l as never), () => changes.delete(l as never)),
      turns: () => p.turns,
      snapshot: () => ({ status: p.machine as 'busy', context: { since: 0, rule: null, lines: [] }, screen: { status: 'busy', rule: 'spinner', lines: [] } }),
      hooksExpected: () => true,
      hookEnd: () => p.hook,
    };
    const readTranscript = async () => (p.reads++, { text: 'from the transcript', finished: p.finished });
    const tell = async () => {
      for (const l of changes) l({ pane: { paneId: '%1' } });
      await vi.advanceTimersByTimeAsync(0);
    };
    const end = waitForTurnEnd(watch, io, { ...spec(readTranscript), turnsBefore: 0 });
    return { p, tell, end };
  }

  it("the transcript is not read while the turn runs: the hook's turn end brings the reply", async () => {
    const { p, tell, end } = hookedPane();
    await tell();
    p.machine = 'busy';
    await tell();
    await vi.advanceTimersByTimeAsync(1000);
    p.machine = 'done';
    p.turns = 1;
    p.hook = { turn: 1, event: 'Stop', reply: 'from the hook' };
    await tell();
    await expect(end).resolves.toEqual({ by: 'hook', reply: 'from the hook', event: 'Stop' });
    expect(p.reads).toBe(0);
  });

  it('a turn the machine closed with no hook end (or one without a reply): the transcript is read then, and its reply ends the wait', async () => {
    const { p, tell, end } = hookedPane();
    p.machine = 'busy';
    p.finished = true;
    await tell();
    expect(p.reads).toBe(0);
    // The quiet-screen rule closed the turn: no end event came.
    p.machine = 'done';
    p.turns = 1;
    await tell();
    expect(p.reads).toBe(1);
    // The hook's turn end is still worth its moment's wait; none comes.
    await vi.advanceTimersByTimeAsync(1600);
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'from the transcript' });
  });

  it("a hook end without a reply (gemini's AfterAgent): the transcript gives it", async () => {
    const { p, tell, end } = hookedPane();
    p.finished = true;
    p.machine = 'done';
    p.turns = 1;
    p.hook = { turn: 1, event: 'AfterAgent' };
    await tell();
    await vi.advanceTimersByTimeAsync(1600);
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'from the transcript' });
  });
});

describe('waitForTurnEnd: a screen that shows the end before the hook of a pane with a transcript', () => {
  afterEach(() => vi.useRealTimers());
  const demo = ProfileSchema.parse(JSON.parse(readFileSync(path.join(packageRoot, 'profiles', 'demo.json'), 'utf8')));
  const screen = ['> do it [jg:n1]', ' ✦ done it', '', ' ✻ Worked for 0s', '', '╭────╮', '│ >  │', '╰────╯', ' ? for shortcuts'].join('\n');

  /** The machine has not closed the turn; the screen shows its end; the hook's end comes at `hookAtMs`, or never. */
  function screenFirst(hookAtMs: number | null) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const started = performance.now();
    const t = { reads: 0 };
    const f = fakeWatch('idle');
    const late = () => hookAtMs !== null && performance.now() - started >= hookAtMs;
    const watch: TurnWatch = {
      ...f.watch,
      turns: () => (late() ? 1 : 0),
      snapshot: () => ({ status: 'idle', context: { since: 0, rule: null, lines: [] }, screen: { status: 'done', rule: 'turn-summary', lines: [] } }),
      hooksExpected: () => true,
      hookEnd: () => (late() ? { turn: 1, event: 'Stop', reply: 'from the hook' } : null),
    };
    const paneIo: PaneIO = { ...io, capture: async () => screen };
    const readTranscript = async () => (t.reads++, { text: 'from the transcript', finished: true });
    return { t, end: waitForTurnEnd(watch, paneIo, { ...spec(readTranscript), profile: demo }) };
  }

  it('the hook comes 400 ms later: its reply ends the wait, the transcript unread', async () => {
    const { t, end } = screenFirst(400);
    await vi.advanceTimersByTimeAsync(600);
    await expect(end).resolves.toEqual({ by: 'hook', reply: 'from the hook', event: 'Stop' });
    expect(t.reads).toBe(0);
  });

  it('no hook end within its grace: the transcript is read then, and its reply ends the wait', async () => {
    const { t, end } = screenFirst(null);
    await vi.advanceTimersByTimeAsync(1400);
    expect(t.reads).toBe(0);
    await vi.advanceTimersByTimeAsync(2000);
    await expect(end).resolves.toEqual({ by: 'transcript', reply: 'from the transcript' });
    expect(t.reads).toBeGreaterThan(0);
  });
});

describe('waitForTurnEnd: a screen that shows the end before the reply under the prompt', () => {
  afterEach(() => vi.useRealTimers());
  const opencode = ProfileSchema.parse(JSON.parse(readFileSync(path.join(packageRoot, 'profiles', 'opencode.json'), 'utf8')));
  const before = readFileSync(path.join(packageRoot, 'test', 'fixtures', 'screens', 'opencode-1.18.33-trap-done-before-text.txt'), 'utf8');
  const drawn = before.replace('\n\n\n     ▣', '\n\n     answer: job for opencode, at once\n\n     ▣');

  /** A settled turn (hooks off, no transcript) whose screen draws the reply at `textAtMs`, or never. */
  function settledTurn(textAtMs: number | null) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const started = performance.now();
    const watch = settledWatch();
    const paneIo: PaneIO = { ...io, capture: async () => (textAtMs !== null && performance.now() - started >= textAtMs ? drawn : before) };
    const end = waitForTurnEnd(watch, paneIo, {
      ...spec(async () => ({ text: '', finished: false })),
      readTranscript: null,
      profile: opencode,
      nonce: '94999d20d7d27540',
    });
    return { end };
  }

  it('the reply drawn a second later: the turn ends on that screen, with the reply', async () => {
    const { end } = settledTurn(1000);
    let over = false;
    void end.then(() => (over = true));
    await vi.advanceTimersByTimeAsync(900);
    expect(over, 'nothing under the prompt yet: not over').toBe(false);
    await vi.advanceTimersByTimeAsync(400);
    const e = await end;
    expect(e.by).toBe('screen');
    expect(e.reply).toBe('answer: job for opencode, at once');
  });

  it('nothing under the prompt for the whole grace (a turn with no text): the turn ends with an empty reply', async () => {
    const { end } = settledTurn(null);
    let over = false;
    void end.then(() => (over = true));
    await vi.advanceTimersByTimeAsync(EMPTY_REPLY_GRACE_MS - 300);
    expect(over).toBe(false);
    await vi.advanceTimersByTimeAsync(600);
    const e = await end;
    expect(e.reply).toBe('');
  });
});
