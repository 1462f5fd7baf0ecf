import * as fsp from 'node:fs/promises';

/** What identifies one version of a file: a rewrite (in place or by rename) changes at least one part. */
type Version = string;

/**
 * File times are kept at the kernel's tick (a few ms): a text read this soon after its file's last change
 * may be followed by another change within the same tick, at the same size, that no time shows. Such a
 * text is not trusted: it is read again next time (git's "racily clean" rule).
 */
const RACY_MS = 50;

export interface ChangedFileOptions {
  /** Files kept at most (the oldest goes first). */
  max?: number;
  /** Texts longer than this are not kept: they are read each time. */
  maxChars?: number;
  /** The wall clock the file times are compared with. */
  now?: () => number;
  fs?: Pick<typeof fsp, 'stat' | 'readFile'>;
}

/**
 * A file's text, read again only when it changed: files read on every state change or screen reading
 * (a transcript while a turn runs, jaggers.json as a turn starts) cost one `stat` while they stay as
 * they are, not an open, a read and a close, and the same string comes back. The stat comes first: a
 * write between it and the read is seen on the next call.
 */
export class ChangedFileReader {
  private readonly files = new Map<string, { version: Version; text: string }>();
  private readonly max: number;
  private readonly maxChars: number;
  private readonly now: () => number;
  private readonly fs: Pick<typeof fsp, 'stat' | 'readFile'>;

  constructor(opts: ChangedFileOptions = {}) {
    this.max = opts.max ?? 64;
    this.maxChars = opts.maxChars ?? 1 << 20;
    this.now = opts.now ?? Date.now;
    this.fs = opts.fs ?? fsp;
  }

  /** The text, or null when the file cannot be read (missing, not written yet, a folder). */
  async read(file: string): Promise<string | null> {
    let version: Version;
    let settled: boolean;
    try {
      // Times in ms with their fraction (the ns a file system keeps, to a double's precision).
      const s = await this.fs.stat(file);
      version = `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
      settled = this.now() - Math.max(s.mtimeMs, s.ctimeMs) > RACY_MS;
    } catch {
      this.files.delete(file);
      return null;
    }
    const known = this.files.get(file);
    if (known?.version === version) return known.text;
    let text: string;
    try {
      text = await this.fs.readFile(file, 'utf8');
    } catch {
      this.files.delete(file);
      return null;
    }
    this.files.delete(file);
    if (!settled || text.length > this.maxChars) return text;
    if (this.files.size >= this.max) this.files.delete(this.files.keys().next().value!);
    this.files.set(file, { version, text });
    return text;
  }
}
