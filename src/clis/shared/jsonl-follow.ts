// A JSON-lines file a CLI appends to, folded as it grows: the state of the lines read so far is kept per
// file and kind, and only the bytes after them are read and parsed on the next call, so a turn's reading
// costs the lines the turn added, not the whole conversation. A file replaced (another inode), cut
// shorter, or rewritten under the bytes already folded (their last bytes differ) is folded again from its
// start. A last line without its newline yet (the CLI writing it) is left for the next call; a whole line
// that is not a JSON object is skipped and counted, never thrown.
//
// The reads are synchronous and go into one reused buffer, a chunk at a time: a turn's few hundred KB
// cost three system calls and no allocation but the lines that are parsed. Reading through the thread
// pool (fs/promises) cost four round trips a turn, each a wait for a thread and for the event loop on a
// loaded machine: 3 ms at p95 where the reading itself took 0.5 (BENCHMARKS.md, usage per turn). A long
// file (a supervisor started on a long session) is read a chunk at a time with the event loop let run
// between chunks; a line is decoded only when it holds one of the fold's marks.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface Fold<S> {
  /** A fresh state (the file's start). */
  init(): S;
  /** One parsed line (a JSON object), folded into `state` in place. */
  line(state: S, obj: Record<string, unknown>): void;
  /**
   * Text every line the fold reads holds (`"usage"`): a line without any of them is passed over undecoded
   * (most of a transcript: prompts, tool results), which makes a turn's reading several times cheaper.
   * ASCII, without a newline.
   */
  marks?: readonly string[];
}

export interface Folded<S> {
  state: S;
  /** Lines read that were not a JSON object (torn, not JSON, or longer than the longest line read whole): skipped, counted here. */
  skipped: number;
  /** Lines read that were not blank. */
  lines: number;
}

interface Kept {
  dev: number;
  ino: number;
  /** Bytes folded: always at the end of a line. */
  offset: number;
  /** The last bytes folded (at most TAIL): the same bytes must still be there on the next read. */
  tail: Buffer;
  folded: Folded<unknown>;
}

/** Bytes read at a time, and the longest line read whole (a longer one is skipped and counted: no record of usage is that long). */
const limits = { chunk: 1 << 20, maxLine: 64 << 20 };
const TAIL = 64;

/** Files kept, the most recently read last: a supervisor follows one or a few per agent. */
const MAX_FILES = 64;
const kept = new Map<string, Kept>();

/** The one read buffer: used only between two awaits, so reads of several files cannot share it at once. */
let scratch: Buffer | null = null;
const chunkBuffer = (): Buffer => (scratch ??= Buffer.allocUnsafe(limits.chunk));

const markBytes = new WeakMap<readonly string[], Buffer[]>();
function marksOf(fold: Fold<unknown>): Buffer[] | null {
  if (!fold.marks) return null;
  let m = markBytes.get(fold.marks);
  if (!m) markBytes.set(fold.marks, (m = fold.marks.map((s) => Buffer.from(s, 'utf8'))));
  return m;
}

const isSpace = (b: number | undefined): boolean => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c;

/**
 * Folds the lines of `buf` (all of it: its last line may lack a newline). Lines without a mark are not
 * decoded; a mark is ASCII without a newline, so a match starting inside a line lies inside it.
 */
export function foldBytes<S>(fold: Fold<S>, folded: Folded<S>, buf: Buffer): void {
  const marks = marksOf(fold as Fold<unknown>);
  const next = marks ? marks.map((m) => buf.indexOf(m)) : [];
  let pos = 0;
  while (pos < buf.length) {
    let nl = buf.indexOf(0x0a, pos);
    if (nl < 0) nl = buf.length;
    const start = pos;
    pos = nl + 1;
    let s = start;
    while (s < nl && isSpace(buf[s])) s++;
    if (s === nl) continue;
    folded.lines++;
    if (marks) {
      let hit = false;
      for (let i = 0; i < marks.length; i++) {
        if (next[i]! >= 0 && next[i]! < start) next[i] = buf.indexOf(marks[i]!, start);
        if (next[i]! >= 0 && next[i]! < nl) hit = true;
      }
      if (!hit) continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(buf.toString('utf8', start, nl));
    } catch {
      folded.skipped++;
      continue;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      folded.skipped++;
      continue;
    }
    fold.line(folded.state, v as Record<string, unknown>);
  }
}

/** The fold of a whole text, at once (fixtures, tests): the same line rules as a file's. */
export function foldText<S>(fold: Fold<S>, text: string): Folded<S> {
  const folded: Folded<S> = { state: fold.init(), skipped: 0, lines: 0 };
  foldBytes(fold, folded, Buffer.from(text, 'utf8'));
  return folded;
}

/** Reads `length` bytes at `position` into `buf` (fewer at the file's end): the count read. */
function readAt(fd: number, buf: Buffer, length: number, position: number): number {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** Whether the bytes before `k.offset` are still the ones folded (a file rewritten in place is not). */
function sameTail(fd: number, k: Kept): boolean {
  if (k.tail.length === 0) return true;
  const buf = chunkBuffer();
  const got = readAt(fd, buf, k.tail.length, k.offset - k.tail.length);
  return got === k.tail.length && buf.compare(k.tail, 0, k.tail.length, 0, got) === 0;
}

/** Where the line at `from` ends (its newline), or -1 when it has none before `size` (not written whole yet). */
function lineEnd(fd: number, from: number, size: number): number {
  const buf = chunkBuffer();
  for (let at = from; at < size;) {
    const got = readAt(fd, buf, Math.min(limits.chunk, size - at), at);
    if (got === 0) return -1;
    const nl = buf.subarray(0, got).indexOf(0x0a);
    if (nl >= 0) return at + nl;
    at += got;
  }
  return -1;
}

/**
 * Folds the whole lines of the next chunk after `k.offset` (up to `size`) and moves the offset past
 * them: false when there is no whole line to fold (a torn last line: for the next call).
 */
function foldChunk<S>(fd: number, k: Kept, fold: Fold<S>, size: number): boolean {
  const folded = k.folded as Folded<S>;
  const buf = chunkBuffer();
  const got = readAt(fd, buf, Math.min(limits.chunk, size - k.offset), k.offset);
  const last = buf.subarray(0, got).lastIndexOf(0x0a);
  if (last >= 0) {
    foldBytes(fold, folded, buf.subarray(0, last + 1));
    advance(k, last + 1, buf.subarray(0, last + 1));
    return true;
  }
  if (got < limits.chunk) return false;
  // One line longer than a chunk: read whole into a buffer of its own, or skipped when past the longest.
  const end = lineEnd(fd, k.offset + got, size);
  if (end < 0) return false;
  const length = end + 1 - k.offset;
  if (length > limits.maxLine) {
    folded.lines++;
    folded.skipped++;
    const tail = Buffer.allocUnsafe(Math.min(TAIL, length));
    readAt(fd, tail, tail.length, end + 1 - tail.length);
    advance(k, length, tail);
    return true;
  }
  const line = Buffer.allocUnsafe(length);
  if (readAt(fd, line, length, k.offset) < length) return false;
  foldBytes(fold, folded, line);
  advance(k, length, line);
  return true;
}

/** Moves `k.offset` past `length` bytes just folded (or skipped), keeping their last bytes (`end`). */
function advance(k: Kept, length: number, end: Buffer): void {
  k.offset += length;
  k.tail = Buffer.from(end.subarray(Math.max(0, end.length - TAIL)));
}

const fresh = (dev: number, ino: number, fold: Fold<unknown>): Kept => ({
  dev,
  ino,
  offset: 0,
  tail: Buffer.alloc(0),
  folded: { state: fold.init(), skipped: 0, lines: 0 },
});

const letLoopRun = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The fold of `file`'s whole lines now, under `kind` (one file can be folded by several kinds); null when
 * it cannot be read (not written yet, say). The state handed back is the one kept: read it, do not change it.
 */
export function followJsonl<S>(file: string, kind: string, fold: Fold<S>): Promise<Folded<S> | null> {
  const key = `${kind}\u0000${file}`;
  // One read of a file at a time: two at once would fold the same bytes into the one kept state twice.
  const run = (running.get(key) ?? Promise.resolve()).then(() => follow(key, file, fold));
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  running.set(key, settled);
  void settled.then(() => {
    if (running.get(key) === settled) running.delete(key);
  });
  return run;
}

const running = new Map<string, Promise<void>>();

async function follow<S>(key: string, file: string, fold: Fold<S>): Promise<Folded<S> | null> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  let k = kept.get(key);
  try {
    const st = fstatSync(fd);
    if (!k || k.dev !== st.dev || k.ino !== st.ino || st.size < k.offset || !sameTail(fd, k)) {
      k = fresh(st.dev, st.ino, fold as Fold<unknown>);
    }
    kept.delete(key);
    kept.set(key, k);
    if (kept.size > MAX_FILES) kept.delete(kept.keys().next().value!);
    // A turn's lines are one chunk; a long file lets the event loop run between its chunks.
    for (let first = true; k.offset < st.size; first = false) {
      if (!first) await letLoopRun();
      if (!foldChunk(fd, k, fold, st.size)) break;
    }
  } catch {
    // A read that failed half way (the file went away): what was folded stays, in step with the offset.
    return null;
  } finally {
    closeSync(fd);
  }
  return k.folded as Folded<S>;
}

/** Forget every kept file (tests). */
export function forgetFollowed(): void {
  kept.clear();
}

/** Smaller chunks and lines (tests); none given: the defaults. */
export function setFollowLimits(l: { chunk?: number; maxLine?: number } = {}): void {
  limits.chunk = l.chunk ?? 1 << 20;
  limits.maxLine = l.maxLine ?? 64 << 20;
  scratch = null;
}
