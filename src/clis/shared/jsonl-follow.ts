// A JSON-lines file a CLI appends to, folded as it grows: the state of the lines read so far is kept per
// file and kind, and only the bytes after them are read and parsed on the next call, so a turn's reading
// costs the lines the turn added, not the whole conversation. A file replaced (another inode) or cut
// shorter is folded again from its start. A last line without its newline yet (the CLI writing it) is
// left for the next call; a whole line that is not a JSON object is skipped and counted.
import { open, stat } from 'node:fs/promises';

export interface Fold<S> {
  /** A fresh state (the file's start). */
  init(): S;
  /** One parsed line (a JSON object), folded into `state` in place. */
  line(state: S, obj: Record<string, unknown>): void;
  /**
   * Text every line the fold reads holds (`"usage"`): a line without any of them is passed over unparsed
   * (most of a transcript: prompts, tool results), which makes a turn's reading several times cheaper.
   */
  marks?: readonly string[];
}

export interface Folded<S> {
  state: S;
  /** Lines read that were not a JSON object (torn, or not JSON): skipped, counted here. */
  skipped: number;
  lines: number;
}

interface Kept {
  dev: number;
  ino: number;
  /** Bytes folded: always at the end of a line. */
  offset: number;
  folded: Folded<unknown>;
}

/** Files kept, the most recently read last: a supervisor follows one or a few per agent. */
const MAX_FILES = 64;
const kept = new Map<string, Kept>();

/** Folds whole lines of `text` into `f` (shared by the follower and by tests on fixtures). */
export function foldLines<S>(fold: Fold<S>, folded: Folded<S>, text: string): void {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') continue;
    folded.lines++;
    if (fold.marks && !fold.marks.some((m) => line.includes(m))) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
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

/** The fold of a whole text, at once (fixtures, tests). */
export function foldText<S>(fold: Fold<S>, text: string): Folded<S> {
  const folded: Folded<S> = { state: fold.init(), skipped: 0, lines: 0 };
  foldLines(fold, folded, text);
  return folded;
}

async function readFrom(file: string, offset: number, size: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

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
  let k = kept.get(key);
  try {
    const st = await stat(file);
    if (!k || k.dev !== st.dev || k.ino !== st.ino || st.size < k.offset) {
      k = { dev: st.dev, ino: st.ino, offset: 0, folded: { state: fold.init(), skipped: 0, lines: 0 } };
    }
    if (st.size > k.offset) {
      const buf = await readFrom(file, k.offset, st.size);
      // Whole lines only (a UTF-8 character never spans a newline byte).
      const end = buf.lastIndexOf(0x0a);
      if (end >= 0) {
        foldLines(fold, k.folded as Folded<S>, buf.subarray(0, end + 1).toString('utf8'));
        k.offset += end + 1;
      }
    }
  } catch {
    return null;
  }
  kept.delete(key);
  kept.set(key, k);
  if (kept.size > MAX_FILES) kept.delete(kept.keys().next().value!);
  return k.folded as Folded<S>;
}

/** Forget every kept file (tests). */
export function forgetFollowed(): void {
  kept.clear();
}
