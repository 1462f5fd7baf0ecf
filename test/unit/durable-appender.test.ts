// The journal's appender keeps its file open between appends; it must still notice the file removed or
// replaced behind its back, and never write into a file nobody can read any more.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DurableAppender } from '../../src/fs/durable.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jaggers-appender-');

describe('DurableAppender', () => {
  it('appends whole lines and returns the size after each', async () => {
    const file = path.join(await temp(), 'events.jsonl');
    const a = new DurableAppender(file);
    expect(await a.append('one\n')).toBe(4);
    expect(await a.append('two\n')).toBe(8);
    a.close();
    expect(await readFile(file, 'utf8')).toBe('one\ntwo\n');
  });

  it('opens the path again when the file there was removed or replaced', async () => {
    const dir = await temp();
    const file = path.join(dir, 'events.jsonl');
    const a = new DurableAppender(file);
    await a.append('one\n');
    await rename(file, path.join(dir, 'aside.jsonl'));
    await writeFile(file, 'new\n');
    expect(await a.append('two\n')).toBe(8);
    expect(await readFile(file, 'utf8')).toBe('new\ntwo\n');
    expect(await readFile(path.join(dir, 'aside.jsonl'), 'utf8')).toBe('one\n');
    await rm(file);
    expect(await a.append('three\n')).toBe(6);
    expect(await readFile(file, 'utf8')).toBe('three\n');
    a.close();
  });
});
