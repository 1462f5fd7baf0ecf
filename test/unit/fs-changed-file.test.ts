// A file read on every event (src/fs/changed-file.ts): read again only when it changed, by any way a
// file changes (written in place at the same size, replaced by a rename, removed, made again), and never
// trusted while its last change is too recent for the file's times to tell the next one apart.
import * as fsp from 'node:fs/promises';
import { rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChangedFileReader } from '../../src/fs/changed-file.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-changed-');

/** A reader over the real file system that counts its reads; its clock runs `skew.ms` ahead of the real one. */
function counting(opts: { max?: number; maxChars?: number } = {}) {
  const reads: string[] = [];
  const skew = { ms: 60_000 };
  const reader = new ChangedFileReader({
    ...opts,
    now: () => Date.now() + skew.ms,
    fs: {
      stat: fsp.stat,
      readFile: ((file: string, enc: BufferEncoding) => (reads.push(path.basename(file)), fsp.readFile(file, enc))) as typeof fsp.readFile,
    },
  });
  return { reader, reads, skew };
}

describe('ChangedFileReader', () => {
  it('reads an unchanged file once, and again after each change: in place at the same size, by a rename, a removal', async () => {
    const dir = await temp();
    const f = path.join(dir, 'a.json');
    const { reader, reads } = counting();
    await writeFile(f, 'one');
    expect([await reader.read(f), await reader.read(f), await reader.read(f)]).toEqual(['one', 'one', 'one']);
    expect(reads).toEqual(['a.json']);

    // The same size; its modification time set to a minute ago, so it differs from the first write's.
    await writeFile(f, 'two');
    const old = new Date(Date.now() - 60_000);
    await utimes(f, old, old);
    expect([await reader.read(f), await reader.read(f)]).toEqual(['two', 'two']);

    await writeFile(path.join(dir, 'b.tmp'), 'ten');
    await rename(path.join(dir, 'b.tmp'), f);
    expect(await reader.read(f)).toBe('ten');

    await rm(f);
    expect(await reader.read(f)).toBeNull();
    await writeFile(f, 'back');
    expect(await reader.read(f)).toBe('back');
    expect(reads).toEqual(['a.json', 'a.json', 'a.json', 'a.json']);
  });

  it('a text read right after its file changed is read again next time (a change in the same tick shows no new time)', async () => {
    const dir = await temp();
    const f = path.join(dir, 'a.json');
    const { reader, reads, skew } = counting();
    skew.ms = 0;
    await writeFile(f, 'one');
    expect([await reader.read(f), await reader.read(f)]).toEqual(['one', 'one']);
    expect(reads).toEqual(['a.json', 'a.json']);
    skew.ms = 60_000;
    await reader.read(f);
    await reader.read(f);
    expect(reads).toEqual(['a.json', 'a.json', 'a.json']);
  });

  it('keeps at most `max` files and none longer than `maxChars`: those are read each time', async () => {
    const dir = await temp();
    const { reader, reads } = counting({ max: 2, maxChars: 10 });
    const files = ['x', 'y', 'z'].map((n) => path.join(dir, n));
    for (const f of files) await writeFile(f, path.basename(f));
    const big = path.join(dir, 'big');
    await writeFile(big, 'b'.repeat(11));
    for (const f of files) await reader.read(f);
    // x was the oldest of three with room for two: read again; z stays.
    await reader.read(files[0]!);
    await reader.read(files[2]!);
    await reader.read(big);
    await reader.read(big);
    expect(reads).toEqual(['x', 'y', 'z', 'x', 'big', 'big']);
  });

  it('a folder or a missing file is null, never an error', async () => {
    const dir = await temp();
    const { reader } = counting();
    expect(await reader.read(dir)).toBeNull();
    expect(await reader.read(path.join(dir, 'none'))).toBeNull();
  });
});
