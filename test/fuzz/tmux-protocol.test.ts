// Fuzz: the tmux control-mode parser (src/tmux/protocol.ts) on generated streams: lines tmux writes
// (%begin/%end/%error blocks, %output and %extended-output with escaped bytes, notifications, %exit)
// mixed with noise, cut into chunks anywhere. It never throws, never stalls, gives the same events
// however the stream is cut, and decodes every %output payload back to its bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControlParser, type ControlEvent } from '../../src/tmux/protocol.js';
import { fuzz, STALL_BOUND_MS } from '../helpers/fuzz.js';

/** Bytes as tmux escapes them in %output: below 0x20 and the backslash as \ooo. */
function escape(bytes: Uint8Array): string {
  return [...bytes].map((b) => (b < 0x20 || b === 0x5c ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b))).join('');
}

const pane = fc.constantFrom('%0', '%1', '%12', '%', '%x', '', '%99999999999');
const num = fc.oneof(fc.nat(2000), fc.constantFrom(-1, 2 ** 53, NaN));
const word = fc.string({ maxLength: 12 });
const line = fc.oneof(
  fc.tuple(num, num, fc.nat(3)).map(([t, n, f]) => `%begin ${t} ${n} ${f}`),
  fc.tuple(num, num, fc.nat(3), fc.boolean()).map(([t, n, f, ok]) => `%${ok ? 'end' : 'error'} ${t} ${n} ${f}`),
  fc.tuple(pane, fc.uint8Array({ maxLength: 300 })).map(([p, d]) => `%output ${p} ${escape(d)}`),
  fc
    .tuple(pane, num, fc.uint8Array({ maxLength: 100 }), fc.boolean())
    .map(([p, age, d, sep]) => `%extended-output ${p} ${age}${sep ? ' : ' : ' '}${escape(d)}`),
  fc
    .tuple(
      fc.constantFrom('window-add', 'session-changed', 'pause', 'continue', 'subscription-changed', 'layout-change', 'exit', ''),
      fc.array(word, { maxLength: 5 }),
    )
    .map(([n, args]) => `%${n} ${args.join(' ')}`),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  // Escapes cut short or malformed.
  fc.constantFrom('%output %1 \\', '%output %1 \\0', '%output %1 \\09', '%output %1 \\777\\8', '%output %1', '%begin', '%end 1 x 1', '%extended-output %1 5'),
);
const stream = fc
  .tuple(fc.array(line, { maxLength: 60 }), fc.constantFrom('\n', '\r\n'), fc.string({ maxLength: 20 }))
  .map(([ls, nl, tail]) => Buffer.from(ls.join(nl) + nl + tail, 'latin1'));
const noise = fc.uint8Array({ maxLength: 4000 }).map((b) => Buffer.from(b));
const cuts = fc.array(fc.nat(), { maxLength: 12 });

function parseIn(chunks: Buffer[]): ControlEvent[] {
  const p = new ControlParser();
  return chunks.flatMap((c) => p.feed(c));
}

function cut(data: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((n) => n % (data.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(data.subarray(from, p));
    from = p;
  }
  out.push(data.subarray(from));
  return out;
}

describe('fuzz: the tmux control-mode parser', () => {
  it('never throws or stalls, and a stream cut anywhere gives the same events', async () => {
    const f = await fuzz(
      'tmux control-mode parser',
      fc.tuple(fc.oneof({ arbitrary: stream, weight: 4 }, { arbitrary: noise, weight: 1 }), cuts),
      ([data, at]) => {
        const whole = parseIn([data]);
        expect(parseIn(cut(data, at))).toEqual(whole);
      },
      { numRuns: 3000, timeLimitMs: 8000 },
    );
    expect(f.cases).toBeGreaterThan(200);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it('a %output line outside a block decodes to exactly the bytes tmux escaped', async () => {
    const f = await fuzz(
      'tmux %output decoding',
      fc.tuple(fc.uint8Array({ maxLength: 2000 }), cuts),
      ([bytes, at]) => {
        const data = Buffer.from(`%output %3 ${escape(bytes)}\n`, 'latin1');
        const events = parseIn(cut(data, at));
        expect(events).toEqual([{ type: 'output', paneId: '%3', data: Buffer.from(bytes) }]);
      },
      { numRuns: 1500, timeLimitMs: 4000 },
    );
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it('a long line fed in small chunks does not cost the square of its length', async () => {
    // One 4 MB %output line in 4 KB chunks, as a pane's flood might come.
    const data = Buffer.from(`%output %1 ${'x'.repeat(4 * 1024 * 1024)}\n`);
    const p = new ControlParser();
    const t = performance.now();
    let events: ControlEvent[] = [];
    for (let i = 0; i < data.length; i += 4096) events = events.concat(p.feed(data.subarray(i, i + 4096)));
    const ms = performance.now() - t;
    console.log(`fuzz tmux parser: a 4 MB line in 4 KB chunks took ${ms.toFixed(0)} ms`);
    expect(events).toHaveLength(1);
    expect(ms).toBeLessThan(1000);
  });
});
