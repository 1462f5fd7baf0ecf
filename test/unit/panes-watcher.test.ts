// The composed PaneWatcher on scripted tmux connections, a fake state-file system and a simulated
// clock: output, captures, state-file events, flow control and deaths, each step driving the pane's
// machine as the supervisor sees it.
import { afterEach, describe, expect, it } from 'vitest';
import type { StateFileReading } from '../../src/clis/state-file.js';
import type { StateFilePorts } from '../../src/panes/state-files.js';
import { PaneWatcher, type StatusChange, type WatchedPane } from '../../src/panes/watcher.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

const DIR = '/h/.fake-agent/state';
const IDLE = '> ';
const SPINNER = '⠋ Working (esc to cancel)';

const profile = ProfileSchema.parse({
  name: 'p',
  command: 'c',
  detect: {
    stateFile: 'fake-agent',
    outputBusy: ['esc to cancel'],
    settleMs: 300,
    rules: [
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

function setup() {
  const events = fakeControl();
  const cmd = fakeControl();
  opened.push(events, cmd);
  const clock = new FakeClock();
  const fs = {
    current: { classification: null, sessionId: null } as StateFileReading,
    reads: [] as number[],
    watched: new Map<string, (n: string | null) => void>(),
  };
  const ports: StateFilePorts = {
    homeOf: async () => '/h',
    read: async (_kind, _home, pid) => {
      fs.reads.push(pid);
      return fs.current;
    },
    watchFolder: (dir, onChange) => {
      fs.watched.set(dir, onChange);
      return { close: () => fs.watched.delete(dir) };
    },
  };
  const w = new PaneWatcher(events.client, { commands: cmd.client, clock, stateFiles: ports });
  watchers.push(w);
  const changes: StatusChange[] = [];
  w.onChange((c) => changes.push(c));
  let answered = 0;
  /** Answer every command sent on the commands connection so far with `lines`, then let the watcher act. */
  const answer = async (...lines: string[]) => {
    while (answered < cmd.written.length) {
      answered++;
      cmd.reply(lines);
    }
    await flush();
  };
  const captures = () => cmd.written.filter((c) => c.startsWith('capture-pane'));
  const fileSays = (status: 'busy' | 'idle' | null, sessionId: string | null = null) => {
    fs.current = { classification: status ? { status, rule: `state-file ${status}`, lines: [] } : null, sessionId };
  };
  const fileChanged = (pid = 7) => fs.watched.get(DIR)?.(`${pid}.json`);
  const pane: WatchedPane = { paneId: '%1', windowId: '@1', agent: 'a', profile, pid: 7 };
  return { events, cmd, clock, fs, w, changes, answer, captures, fileSays, fileChanged, pane };
}

describe('pane watcher (composed)', () => {
  it('a turn: start capture, busy output without a capture, the state file pausing the output, idle continuing it, settle, done', async () => {
    const t = setup();
    const { w, events, cmd, clock } = t;
    const started = w.start();
    expect(events.written).toEqual(["refresh-client -B 'jaggers-dead:%*:#{pane_dead}'"]);
    events.reply();
    await started;

    const screens: string[] = [];
    w.onScreen((_id, s) => screens.push(s));
    w.watch(t.pane);
    expect(cmd.written).toEqual(['capture-pane -p -t %1']);
    await t.answer(IDLE);
    expect(w.status('%1')).toBe('idle');
    expect(screens).toEqual([IDLE]);
    expect(t.fs.watched.has(DIR)).toBe(true);

    // A spinner frame says busy by itself: no capture.
    events.output('%1', `\x1b[2K${SPINNER}`);
    expect(w.status('%1')).toBe('busy');
    expect(t.changes.at(-1)).toMatchObject({ status: 'busy', source: 'output' });
    expect(t.captures()).toHaveLength(1);
    // Once the output stops, the output no capture saw is captured once.
    clock.advance(150);
    expect(t.captures()).toHaveLength(2);
    await t.answer(SPINNER);

    // The state file says busy: decided at once, and the pane's output paused; a look every 2 s.
    t.fileSays('busy');
    t.fileChanged();
    await flush();
    expect(t.changes.at(-1)).toMatchObject({ status: 'busy', source: 'output' }); // still busy: no new change
    expect(w.snapshot('%1')?.context.source).toBe('state-file');
    expect(events.written.at(-1)).toBe("refresh-client -A '%1:pause'");
    expect(t.captures()).toHaveLength(2);
    clock.advance(2000);
    expect(t.captures()).toHaveLength(3);
    await t.answer(SPINNER);

    // Idle in the state file: settling at once, output continued and the screen read again.
    t.fileSays('idle');
    t.fileChanged();
    await flush();
    expect(w.snapshot('%1')?.machine).toBe('settling');
    expect(events.written.at(-1)).toBe("refresh-client -A '%1:continue'");
    expect(t.captures()).toHaveLength(4);
    await t.answer(IDLE);
    clock.advance(299);
    expect(w.status('%1')).toBe('busy');
    clock.advance(1);
    expect(w.status('%1')).toBe('done');
    expect(w.turns('%1')).toBe(1);
    expect(w.captureReasons).toEqual({ start: 1, quiet: 1, 'paused-check': 1, continue: 1 });
    expect(w.captures).toBe(4);
    // Nothing runs while nothing is printed.
    expect(clock.pending).toBe(0);
  });

  it('while a start settles, a screen no rule knows (cleared to redraw) reaches the machine: the wait starts over (gemini resuming)', async () => {
    const t = setup();
    const { w, events, clock } = t;
    const slow = ProfileSchema.parse({ ...profile, detect: { ...profile.detect, stateFile: undefined, startSettleMs: 700 } });
    w.watch({ ...t.pane, profile: slow });
    await t.answer(IDLE);
    expect(w.snapshot('%1')?.machine).toBe('booting');
    // The CLI clears its screen to load more; the wait would have run out on that blank screen.
    events.output('%1', '\x1b[2J');
    clock.advance(150);
    await t.answer('');
    expect(w.snapshot('%1')?.machine).toBe('starting');
    clock.advance(700);
    expect(w.status('%1')).toBe('starting');
    // Its conversation drawn with the input box: ready once that stayed quiet.
    events.output('%1', 'history');
    clock.advance(150);
    await t.answer('history', IDLE);
    expect(w.snapshot('%1')?.machine).toBe('booting');
    clock.advance(700);
    expect(w.status('%1')).toBe('idle');
    // Once ready, a screen no rule knows (drawn in part) says nothing, as before.
    events.output('%1', '\x1b[2J');
    clock.advance(150);
    await t.answer('');
    expect(w.status('%1')).toBe('idle');
  });

  it('a death from the subscription: exited with the status tmux gives; stop leaves no timer or folder watch', async () => {
    const t = setup();
    const { w, events, clock } = t;
    w.watch(t.pane);
    await t.answer(IDLE);
    events.notify('%subscription-changed jaggers-dead $1 @1 1 %1 : 1');
    expect(t.cmd.written.at(-1)).toBe("display-message -p -t %1 '#{pane_dead_status}'");
    await t.answer('2');
    expect(w.status('%1')).toBe('exited');
    expect(w.snapshot('%1')?.context.exitStatus).toBe(2);
    // Output of a dead pane decides nothing.
    events.output('%1', SPINNER);
    expect(w.status('%1')).toBe('exited');
    w.stop();
    expect(w.paneIds()).toEqual([]);
    clock.advance(10_000);
    expect(clock.pending).toBe(0);
    expect(t.fs.watched.size).toBe(0);
  });

  it('a paused pane unwatched is continued, and a capture answered after unwatch reports nothing', async () => {
    const t = setup();
    const { w, events } = t;
    w.watch(t.pane);
    await t.answer(IDLE);
    t.fileSays('busy');
    t.fileChanged();
    await flush();
    expect(events.written.at(-1)).toBe("refresh-client -A '%1:pause'");
    const screens: string[] = [];
    w.onScreen((_id, s) => screens.push(s));
    w.unwatch('%1');
    expect(events.written.at(-1)).toBe("refresh-client -A '%1:continue'");
    await t.answer(SPINNER);
    expect(screens).toEqual([]);
    expect(w.status('%1')).toBeUndefined();
    expect(t.fs.watched.size).toBe(0);
  });

  it('sync with a new pid restarts the pane: starting again, its screen read, the new process’s state file read', async () => {
    const t = setup();
    const { w } = t;
    const sessions: string[] = [];
    w.onSession((p, id) => sessions.push(`${p.pid} ${id}`));
    t.fileSays(null, 's-old');
    w.watch(t.pane);
    await t.answer(IDLE);
    expect(w.status('%1')).toBe('idle');
    w.sync('%1', { dead: false, pid: 8 });
    expect(w.status('%1')).toBe('starting');
    expect(w.pane('%1')?.pid).toBe(8);
    expect(w.lastScreen('%1')).toBeNull();
    expect(t.captures()).toHaveLength(2);
    t.fileSays(null, 's-new');
    await t.answer(IDLE);
    expect(w.status('%1')).toBe('idle');
    expect(t.fs.reads).toEqual([7, 8]);
    expect(sessions).toEqual(['7 s-old', '8 s-new']);
    expect(w.captureReasons).toEqual({ start: 1, restart: 1 });
  });

  it('hold keeps the pane busy whatever its screen shows; release starts it over with the pid given', async () => {
    const t = setup();
    const { w } = t;
    w.watch(t.pane);
    await t.answer(IDLE);
    w.hold('%1', 'headless-turn');
    expect(w.snapshot('%1')).toMatchObject({ status: 'busy', context: { rule: 'headless-turn' } });
    w.sync('%1', { dead: true, pid: 7 });
    t.events.output('%1', 'placeholder');
    await t.answer(IDLE);
    expect(w.status('%1')).toBe('busy');
    w.release('%1', 9);
    expect(w.status('%1')).toBe('starting');
    expect(w.pane('%1')?.pid).toBe(9);
    await t.answer(IDLE);
    expect(w.status('%1')).toBe('idle');
  });

  it('waitFor resolves on the change it waits for, and fails after its timeout on the clock', async () => {
    const t = setup();
    const { w, clock } = t;
    w.watch(t.pane);
    const idle = w.waitFor('%1', ['idle'], 5000);
    await t.answer(IDLE);
    await expect(idle).resolves.toBe('idle');
    const done = w.waitFor('%1', ['done'], 5000);
    clock.advance(5000);
    await expect(done).rejects.toThrow('still idle after 5000 ms (waited for done)');
  });
});
