// Following a JSON-lines file as it grows (src/clis/shared/jsonl-follow.ts), with a fold that keeps every
// line it is given: only the bytes added are read, and the reading holds up to what a CLI's file can do
// under it (a torn last line, a file replaced, cut shorter or rewritten in place, lines that are not JSON,
// lines longer than a chunk).
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { foldText, followJsonl, forgetFollowed, setFollowLimits, type Fold } from '../../../src/clis/shared/jsonl-follow.js';

/** Keeps the `n` of every line it folds, and counts the folds of the file from its start. */
const keepAll: Fold<{ ns: unknown[] }> = { init: () => ({ ns: [] }), line: (s, o) => void s.ns.push(o.n) };
/** The same, for lines holding `"usage"` only. */
const marked: Fold<{ ns: unknown[] }> = { ...keepAll, marks: ['"usage"'] };

const line = (n: number, extra = '') => JSON.stringify({ n, ...(extra ? { pad: extra } : {}) }) + '\n';

let root: string;
let file: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'jaggers-follow-'));
  file = path.join(root, 'f.jsonl');
  forgetFollowed();
});
afterEach(() => {
  setFollowLimits();
  rmSync(root, { recursive: true, force: true });
});

describe('following a JSON-lines file', () => {
  it('reads only the bytes added since the last read', async () => {
    writeFileSync(file, line(1) + line(2));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1, 2]);
    appendFileSync(file, line(3));
    const f = await followJsonl(file, 'k', keepAll);
    expect(f?.state.ns).toEqual([1, 2, 3]);
    expect(f?.lines).toBe(3);
    // Nothing added: nothing folded again.
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1, 2, 3]);
  });

  it('leaves a last line without its newline for the next read (the CLI still writing it)', async () => {
    const whole = line(1) + line(2);
    writeFileSync(file, line(1) + whole.slice(line(1).length, -4));
    const f = await followJsonl(file, 'k', keepAll);
    expect(f?.state.ns).toEqual([1]);
    expect(f?.skipped).toBe(0);
    appendFileSync(file, whole.slice(-4));
    const g = await followJsonl(file, 'k', keepAll);
    expect(g?.state.ns).toEqual([1, 2]);
    expect(g?.skipped).toBe(0);
  });

  it('skips and counts lines that are not a JSON object, and never throws on them', async () => {
    writeFileSync(file, line(1) + '{"n": 2, torn\n' + '[1,2]\n' + '"usage"\n' + 'null\n' + '\n  \r\n' + line(3));
    const f = await followJsonl(file, 'k', keepAll);
    expect(f?.state.ns).toEqual([1, 3]);
    expect(f?.skipped).toBe(4);
    expect(f?.lines).toBe(6);
  });

  it('parses only the lines holding a mark: a broken line without one is not even counted as skipped', async () => {
    writeFileSync(file, '{"n":1,"usage":{}}\n' + '{"n":2}\n' + '{"n":3, "usage" torn\n' + 'not json\n' + '{"x":"é ☃","n":4,"usage":1}\n');
    const f = await followJsonl(file, 'k', marked);
    expect(f?.state.ns).toEqual([1, 4]);
    expect(f?.skipped).toBe(1);
    expect(f?.lines).toBe(5);
  });

  it('folds the file again from its start when it is replaced by another (a rotated file)', async () => {
    writeFileSync(file, line(1) + line(2));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1, 2]);
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, line(7) + line(8) + line(9));
    renameSync(tmp, file);
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([7, 8, 9]);
  });

  it('folds the file again when it was cut shorter, or rewritten in place under the bytes read', async () => {
    writeFileSync(file, line(1) + line(2) + line(3));
    await followJsonl(file, 'k', keepAll);
    truncateSync(file, 0);
    appendFileSync(file, line(4));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([4]);
    // Rewritten in place (same inode) to a longer file: the bytes before the offset are not the ones read.
    writeFileSync(file, line(5) + line(6) + line(7));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([5, 6, 7]);
    // ... or to one of the same size.
    writeFileSync(file, line(8) + line(6) + line(9));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([8, 6, 9]);
  });

  it('gives null for a file that is not there, and again once it went away', async () => {
    expect(await followJsonl(path.join(root, 'none.jsonl'), 'k', keepAll)).toBeNull();
    writeFileSync(file, line(1));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1]);
    unlinkSync(file);
    expect(await followJsonl(file, 'k', keepAll)).toBeNull();
  });

  it('reads a long file a chunk at a time, to the same fold as the whole text at once', async () => {
    setFollowLimits({ chunk: 64 });
    const text = Array.from({ length: 200 }, (_, i) => line(i, i % 7 === 0 ? 'x'.repeat(i) : '')).join('') + '{"n":"torn';
    writeFileSync(file, text);
    const f = await followJsonl(file, 'k', keepAll);
    expect(f?.state.ns).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(f?.skipped).toBe(0);
    expect(foldText(keepAll, text.slice(0, text.lastIndexOf('\n') + 1)).state.ns).toEqual(f?.state.ns);
  });

  it('reads a line longer than a chunk whole, and skips and counts one longer than the longest it reads', async () => {
    setFollowLimits({ chunk: 32, maxLine: 1000 });
    writeFileSync(file, line(1) + line(2, 'a'.repeat(500)) + line(3, 'b'.repeat(2000)) + line(4));
    const f = await followJsonl(file, 'k', keepAll);
    expect(f?.state.ns).toEqual([1, 2, 4]);
    expect(f?.skipped).toBe(1);
    expect(f?.lines).toBe(4);
    // A long line not written whole yet waits for its newline.
    const long = line(5, 'c'.repeat(300));
    appendFileSync(file, long.slice(0, 200));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1, 2, 4]);
    appendFileSync(file, long.slice(200));
    expect((await followJsonl(file, 'k', keepAll))?.state.ns).toEqual([1, 2, 4, 5]);
  });

  it('keeps one state per kind of fold on the same file', async () => {
    writeFileSync(file, '{"n":1,"usage":1}\n{"n":2}\n');
    expect((await followJsonl(file, 'all', keepAll))?.state.ns).toEqual([1, 2]);
    expect((await followJsonl(file, 'marked', marked))?.state.ns).toEqual([1]);
  });
});
