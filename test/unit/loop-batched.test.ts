// Writes made in one turn of the event loop reach the stream as one writev; the next turn's are another.
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loopBatched } from '../../src/loop-batched.js';

describe('loopBatched', () => {
  it('sends the writes of one turn of the event loop in one writev, in order', async () => {
    const writes: string[][] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push([chunk.toString()]);
        cb();
      },
      writev(chunks, cb) {
        writes.push(chunks.map((c) => (c.chunk as Buffer).toString()));
        cb();
      },
    });
    const write = loopBatched(stream);
    write('a\n');
    write('b\n');
    await Promise.resolve(); // a microtask later is still the same turn
    write('c\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual([['a\n', 'b\n', 'c\n']]);
    write('d\n');
    await nextTurn();
    expect(writes).toEqual([['a\n', 'b\n', 'c\n'], ['d\n']]);
  });
});
