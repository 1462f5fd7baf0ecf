// The dashboard's pane taps on a scripted tmux connection: a tap's output starts exactly after its
// snapshot's capture (output before that reply is in the snapshot), panes nobody taps are turned off,
// sizes and deaths come from the subscription, and the connection goes with the last tap.
import { afterEach, describe, expect, it } from 'vitest';
import { PaneTaps, snapshotOf, type TapSink } from '../../src/web/pane-taps.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

const opened: FakeControl[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

/** Lets promise continuations run (the taps' async steps), with no timer. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function sink() {
  const got: string[] = [];
  const s: TapSink = {
    output: (t) => void got.push(`output ${t}`),
    size: (c, r) => void got.push(`size ${c}x${r}`),
    exit: (why) => void got.push(`exit ${why}`),
  };
  return { s, got };
}

function setup() {
  // Each connection the taps open is a new scripted one; `tmux` is the latest.
  const conns: FakeControl[] = [];
  const flushes: (() => void)[] = [];
  const taps = new PaneTaps({
    connect: async () => {
      const c = fakeControl();
      opened.push(c);
      conns.push(c);
      return c.client;
    },
    defer: (fn) => void flushes.push(fn),
  });
  const flush = () => {
    for (const f of flushes.splice(0)) f();
  };
  return {
    get tmux(): FakeControl {
      return conns.at(-1)!;
    },
    taps,
    flush,
    connects: () => conns.length,
  };
}

/** Open a tap on `pane` and answer the connection's subscription (when it is the first). */
async function openTap(x: ReturnType<typeof setup>, pane: string, first = true) {
  const k = sink();
  const p = x.taps.tap(pane, k.s);
  await settle();
  if (first) {
    expect(x.tmux.written.at(-1)).toBe("refresh-client -B 'jaggers-web:%*:#{pane_width} #{pane_height} #{pane_dead}'");
    x.tmux.reply();
  }
  const tap = await p;
  return { tap, ...k };
}

describe('pane taps', () => {
  it('passes on the output after the snapshot reply only, decoded, one event per flush', async () => {
    const x = setup();
    const { tap, got } = await openTap(x, '%1');
    expect(x.tmux.written.at(-1)).toBe("refresh-client -A '%1:continue'");
    x.tmux.reply();
    const snap = tap.snapshot();
    expect(x.tmux.written.slice(-2)).toEqual([
      'capture-pane -p -e -t %1',
      "display-message -p -t %1 '#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{pane_dead}'",
    ]);
    // Before the capture's reply: already on the screen the capture reads.
    x.tmux.output('%1', 'old');
    x.tmux.reply(['line one', 'line two']);
    // After it, in the same read and before the snapshot's promise resolved: new.
    x.tmux.output('%1', 'new ');
    x.tmux.output('%1', 'a €');
    x.tmux.reply(['80 24 3 1 0 1 0 0']);
    const s = await snap;
    expect(s).toMatchObject({ cols: 80, rows: 24, cursor: { x: 3, y: 1 }, alternate: false, dead: false });
    expect(s.data).toBe('\x1b[H\x1b[2Jline one\x1b[0m\r\nline two\x1b[0m\x1b[2;4H');
    expect(got).toEqual([]);
    x.flush();
    expect(got).toEqual(['output new a €']);
  });

  it('pauses a pane nobody taps once, and continues it when a tap opens on it', async () => {
    const x = setup();
    await openTap(x, '%1');
    x.tmux.reply();
    x.tmux.output('%7', 'noise');
    x.tmux.output('%7', 'more noise');
    expect(x.tmux.written.filter((l) => l === "refresh-client -A '%7:pause'")).toHaveLength(1);
    x.tmux.reply();
    await openTap(x, '%7', false);
    expect(x.tmux.written.at(-1)).toBe("refresh-client -A '%7:continue'");
  });

  it('sizes and deaths come from the subscription; a dead pane ends its taps', async () => {
    const x = setup();
    const { tap, got } = await openTap(x, '%1');
    x.tmux.reply();
    const snap = tap.snapshot();
    x.tmux.reply(['']);
    x.tmux.reply(['80 24 0 0 0 1 0 0']);
    await snap;
    x.tmux.notify('%subscription-changed jaggers-web $0 @1 1 %1 : 100 30 0');
    x.tmux.notify('%subscription-changed jaggers-web $0 @2 2 %2 : 90 20 0');
    x.tmux.output('%1', 'bye');
    x.tmux.notify('%subscription-changed jaggers-web $0 @1 1 %1 : 100 30 1');
    expect(got).toEqual(['size 100x30', 'output bye', "exit the pane's program exited"]);
  });

  it('the connection closes with the last tap and opens again with the next', async () => {
    const x = setup();
    const a = await openTap(x, '%1');
    x.tmux.reply();
    const b = await openTap(x, '%2', false);
    x.tmux.reply();
    expect(x.taps.open).toBe(2);
    a.tap.close();
    expect(x.tmux.written.at(-1)).toBe("refresh-client -A '%1:pause'");
    b.tap.close();
    expect(x.taps.open).toBe(0);
    expect(x.connects()).toBe(1);
    await openTap(x, '%1');
    expect(x.connects()).toBe(2);
    expect(a.got).toEqual([]);
  });

  it('a closed tmux connection ends every tap', async () => {
    const x = setup();
    const a = await openTap(x, '%1');
    x.tmux.reply();
    await x.tmux.close();
    expect(a.got).toEqual(['exit tmux connection closed: closed by jaggers']);
  });
});

describe('snapshotOf', () => {
  it('switches to the alternate screen, restores application cursor keys and a hidden cursor', () => {
    const s = snapshotOf(['a', 'b', 'c'], '10 2 0 1 1 0 1 1');
    expect(s).toEqual({
      cols: 10,
      rows: 2,
      cursor: { x: 0, y: 1 },
      alternate: true,
      dead: true,
      data: '\x1b[?1049h\x1b[H\x1b[2Ja\x1b[0m\r\nb\x1b[0m\x1b[2;1H\x1b[?1h\x1b[?25l',
    });
  });
});
