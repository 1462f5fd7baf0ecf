// One client's terminal stream as server-sent events: the snapshot first, output as it comes, a size
// change once, the exit last; a client that reads too slowly has its output dropped and gets a fresh
// snapshot once it caught up.
import { describe, expect, it } from 'vitest';
import type { PaneSnapshot } from '../../src/web/pane-taps.js';
import { TerminalStream, type EventOut } from '../../src/web/terminal-stream.js';

const snap = (over: Partial<PaneSnapshot> = {}): PaneSnapshot => ({
  cols: 80,
  rows: 24,
  cursor: { x: 0, y: 0 },
  alternate: false,
  data: 'screen',
  dead: false,
  ...over,
});

function out() {
  const frames: string[] = [];
  let drain: (() => void) | null = null;
  const o: EventOut & { pending: number; ended: boolean } = {
    pending: 0,
    ended: false,
    write: (c: string) => void frames.push(c),
    get writableLength() {
      return o.pending;
    },
    once: (_e: 'drain', fn: () => void) => void (drain = fn),
    end: () => void (o.ended = true),
  };
  const events = () => frames.map((f) => `${/^event: (\w+)/.exec(f)?.[1]} ${/\ndata: (.*)\n/.exec(f)?.[1]}`);
  return { o, events, drain: () => drain?.() };
}

describe('TerminalStream', () => {
  it('snapshot, output, a size change once, exit', () => {
    const { o, events } = out();
    const s = new TerminalStream(o, async () => snap());
    s.start(snap());
    s.output('hi\r\n');
    s.size(80, 24);
    s.size(100, 30);
    s.size(100, 30);
    s.exit('gone');
    s.output('late');
    expect(events()).toEqual([
      'snapshot {"cols":80,"rows":24,"cursor":{"x":0,"y":0},"alternate":false,"data":"screen"}',
      'output {"data":"hi\\r\\n"}',
      'size {"cols":100,"rows":30}',
      'exit {"reason":"gone"}',
    ]);
    expect(o.ended).toBe(true);
  });

  it("a dead pane's stream ends after its snapshot", () => {
    const { o, events } = out();
    new TerminalStream(o, async () => snap()).start(snap({ dead: true }));
    expect(events().map((e) => e.split(' ')[0])).toEqual(['snapshot', 'exit']);
    expect(o.ended).toBe(true);
  });

  it('drops output while the client is behind, then sends a fresh snapshot', async () => {
    const { o, events, drain } = out();
    let resnapshots = 0;
    const s = new TerminalStream(o, async () => (resnapshots++, snap({ data: 'fresh' })), 100);
    s.start(snap());
    o.pending = 101;
    s.output('dropped');
    s.output('dropped too');
    o.pending = 0;
    drain();
    await new Promise<void>((resolve) => setImmediate(resolve));
    s.output('after');
    expect(resnapshots).toBe(1);
    expect(events().map((e) => e.split(' ')[0])).toEqual(['snapshot', 'snapshot', 'output']);
    expect(events()[1]).toMatch(/"data":"fresh"/);
  });
});
