// A claude transcript read as it grows: claude appends to its session's .jsonl, and a turn's end is looked
// for on every change of it, so re-reading and re-parsing the whole file each time cost time in proportion
// to the conversation (a 10,000-entry transcript held the event loop 100-240 ms a read). The entries of the
// lines read so far are kept per file, and only the bytes after them are read and parsed; a file replaced
// (another inode) or cut shorter is read again from its start.
import { open, stat } from 'node:fs/promises';
import { parseClaudeTranscript, type ClaudeEntry } from './entries.js';

interface Kept {
  dev: number;
  ino: number;
  /** Bytes read and parsed: always at the end of a line. */
  offset: number;
  /** Lines read and parsed (an entry's `line` counts from the file's first). */
  lines: number;
  entries: ClaudeEntry[];
}

/** Transcripts kept, the most recently read last: a supervisor follows one per agent in a turn. */
const MAX_FILES = 32;
const kept = new Map<string, Kept>();

function parsedFrom(text: string, firstLine: number): ClaudeEntry[] {
  const entries = parseClaudeTranscript(text).entries;
  if (firstLine > 0) for (const e of entries) e.line += firstLine;
  return entries;
}

/** The entries of the transcript at `file` now; null when it cannot be read (not written yet, say). */
export async function readClaudeEntries(file: string): Promise<ClaudeEntry[] | null> {
  let k: Kept | undefined;
  let tail = '';
  try {
    const st = await stat(file);
    k = kept.get(file);
    if (!k || k.dev !== st.dev || k.ino !== st.ino || st.size < k.offset) k = { dev: st.dev, ino: st.ino, offset: 0, lines: 0, entries: [] };
    if (st.size > k.offset) {
      const fh = await open(file, 'r');
      let buf: Buffer;
      try {
        buf = Buffer.alloc(st.size - k.offset);
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, k.offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        buf = buf.subarray(0, got);
      } finally {
        await fh.close();
      }
      // Whole lines are kept (a UTF-8 character never spans a newline byte); a last line without its
      // newline yet (claude writing it) is parsed for this read alone.
      const end = buf.lastIndexOf(0x0a);
      if (end >= 0) {
        const whole = buf.subarray(0, end + 1).toString('utf8');
        const more = parsedFrom(whole, k.lines);
        k = { ...k, offset: k.offset + end + 1, lines: k.lines + whole.split('\n').length - 1, entries: more.length ? k.entries.concat(more) : k.entries };
      }
      tail = buf.subarray(end + 1).toString('utf8');
    }
  } catch {
    return null;
  }
  kept.delete(file);
  kept.set(file, k);
  if (kept.size > MAX_FILES) kept.delete(kept.keys().next().value!);
  return tail.trim() === '' ? k.entries : k.entries.concat(parsedFrom(tail, k.lines));
}
