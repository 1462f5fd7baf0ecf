// A read-only look into a SQLite database that another process keeps open and writes (opencode's), with
// no SQLite library: Node 20 has none built in. It reads the file format as sqlite.org/fileformat2.html
// gives it: the pages of the main file, overlaid with the committed frames of its write-ahead log (the
// `-wal` file: a frame counts when its salts match the log's header and its checksum chains from the one
// before, and only up to the last commit frame), table b-trees looked up by rowid and index b-trees
// scanned for the entries whose first column equals a text. Nothing is locked or written: a read that
// saw the log restarted or grown under it is tried again, and a file it cannot make sense of throws
// SqliteReadError (the caller's reader gives no usage then, never a crash).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export class SqliteReadError extends Error {}

export type SqlValue = null | number | bigint | string | Buffer;

interface WalState {
  ino: number;
  salt1: number;
  salt2: number;
  bigEndian: boolean;
  /** Bytes of the log checked so far (its header and whole frames). */
  checked: number;
  s1: number;
  s2: number;
  /** Page -> offset of its newest committed frame's page data. */
  committed: Map<number, number>;
  /** Frames after the last commit (not visible yet). */
  pending: Map<number, number>;
  /** The database's size in pages at the last commit (0: none yet). */
  pages: number;
}

interface IndexPage {
  interior: boolean;
  /** `first`: the first column as SQLite orders it against a text (its UTF-8 bytes; -1 before any text, 1 after). */
  cells: { values: SqlValue[]; first: Buffer | -1 | 1; child: number }[];
  right: number;
}

/** Decoded index pages, by database file and page key (SqliteSnapshot.pageKey). */
const indexPages = new Map<string, Map<string, IndexPage>>();
const MAX_INDEX_PAGES = 20_000;

/** The logs followed, by database file: a turn checks only the frames added since the last read. */
const wals = new Map<string, WalState>();
const MAX_WALS = 32;

function readAt(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** SQLite's log checksum over `buf` (a multiple of 8 bytes), continuing from `s1`, `s2`. */
function checksum(buf: Buffer, bigEndian: boolean, s1: number, s2: number): [number, number] {
  for (let i = 0; i + 8 <= buf.length; i += 8) {
    const a = bigEndian ? buf.readUInt32BE(i) : buf.readUInt32LE(i);
    const b = bigEndian ? buf.readUInt32BE(i + 4) : buf.readUInt32LE(i + 4);
    s1 = (s1 + a + s2) >>> 0;
    s2 = (s2 + b + s1) >>> 0;
  }
  return [s1, s2];
}

/** Brings the kept state of `walFile` up to its end: new frames checked, commits applied. */
function followWal(dbFile: string, walFd: number, pageSize: number): WalState | null {
  const st = fstatSync(walFd);
  const head = readAt(walFd, 32, 0);
  if (head.length < 32) return null;
  const magic = head.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return null;
  const bigEndian = magic === 0x377f0683;
  const salt1 = head.readUInt32BE(16);
  const salt2 = head.readUInt32BE(20);
  let w = wals.get(dbFile);
  if (!w || w.ino !== st.ino || w.salt1 !== salt1 || w.salt2 !== salt2 || w.bigEndian !== bigEndian || st.size < w.checked) {
    const [s1, s2] = checksum(head.subarray(0, 24), bigEndian, 0, 0);
    if (s1 !== head.readUInt32BE(24) || s2 !== head.readUInt32BE(28)) return null;
    if (head.readUInt32BE(8) !== pageSize % 65536) return null;
    w = { ino: st.ino, salt1, salt2, bigEndian, checked: 32, s1, s2, committed: new Map(), pending: new Map(), pages: 0 };
  }
  wals.delete(dbFile);
  wals.set(dbFile, w);
  if (wals.size > MAX_WALS) wals.delete(wals.keys().next().value!);
  const frame = 24 + pageSize;
  while (w.checked + frame <= st.size) {
    const f = readAt(walFd, frame, w.checked);
    if (f.length < frame || f.readUInt32BE(8) !== salt1 || f.readUInt32BE(12) !== salt2) break;
    let [s1, s2] = checksum(f.subarray(0, 8), w.bigEndian, w.s1, w.s2);
    [s1, s2] = checksum(f.subarray(24), w.bigEndian, s1, s2);
    if (s1 !== f.readUInt32BE(16) || s2 !== f.readUInt32BE(20)) break;
    w.s1 = s1;
    w.s2 = s2;
    w.pending.set(f.readUInt32BE(0), w.checked + 24);
    const commit = f.readUInt32BE(4);
    if (commit > 0) {
      for (const [p, at] of w.pending) w.committed.set(p, at);
      w.pending.clear();
      w.pages = commit;
    }
    w.checked += frame;
  }
  return w;
}

/** One consistent view of a database: its pages, from the log where it has them. */
export class SqliteSnapshot {
  private readonly cache = new Map<number, Buffer>();
  private constructor(
    private readonly file: string,
    private readonly dbFd: number,
    private readonly walFd: number | null,
    readonly pageSize: number,
    private usable: number,
    private readonly wal: WalState | null,
    readonly pages: number,
    /** The main file's inode, size and modification time: what its pages are as long as there is no log. */
    private readonly mainStamp: string,
  ) {}

  /** Runs `fn` on a snapshot of `dbFile` (and its `-wal`), tried again (3 times) when the log moved under it. */
  static read<T>(dbFile: string, fn: (s: SqliteSnapshot) => T): T {
    for (let attempt = 0; ; attempt++) {
      const dbFd = openSync(dbFile, 'r');
      let walFd: number | null = null;
      try {
        try {
          walFd = openSync(`${dbFile}-wal`, 'r');
        } catch {
          walFd = null;
        }
        // The main file's header gives the page size (a new database's may be all in the log: the log's
        // header then); the current page 1, from the log where it is there, gives the rest.
        const head = readAt(dbFd, 100, 0);
        const isMain = head.length === 100 && head.toString('latin1', 0, 16) === 'SQLite format 3\u0000';
        const walHead = walFd !== null ? readAt(walFd, 32, 0) : null;
        const raw = isMain ? head.readUInt16BE(16) : walHead && walHead.length === 32 ? walHead.readUInt32BE(8) : 0;
        const pageSize = raw === 1 ? 65536 : raw;
        if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw new SqliteReadError(`${dbFile}: not a SQLite database`);
        const wal = walFd !== null ? followWal(dbFile, walFd, pageSize) : null;
        const walSize = walFd !== null ? fstatSync(walFd).size : 0;
        const main = fstatSync(dbFd);
        const fileSize = main.size;
        const inHeader = isMain && head.readUInt32BE(92) === head.readUInt32BE(24) ? head.readUInt32BE(28) : 0;
        const pages = wal && wal.pages > 0 ? wal.pages : inHeader || Math.floor(fileSize / pageSize);
        const s = new SqliteSnapshot(dbFile, dbFd, walFd, pageSize, pageSize, wal, pages, `${main.ino}.${main.size}.${main.mtimeMs}`);
        try {
          const first = s.page(1);
          if (first.toString('latin1', 0, 16) !== 'SQLite format 3\u0000') throw new SqliteReadError(`${dbFile}: not a SQLite database`);
          // 0: not set yet (a new database); SQLite's default, UTF-8.
          const encoding = first.readUInt32BE(56);
          if (encoding !== 1 && encoding !== 0) throw new SqliteReadError(`${dbFile}: text is not UTF-8 (encoding ${encoding})`);
          s.usable = pageSize - first[20]!;
          const out = fn(s);
          if (walFd === null || (fstatSync(walFd).size === walSize && s.sameLog())) return out;
        } catch (e) {
          if (attempt >= 2 || walFd === null || (fstatSync(walFd).size === walSize && s.sameLog())) throw e;
        }
        if (attempt >= 2) throw new SqliteReadError(`${dbFile}: its log kept changing while it was read`);
      } finally {
        closeSync(dbFd);
        if (walFd !== null) closeSync(walFd);
      }
    }
  }

  /** Whether the log still has the header it had (a checkpoint that restarted it changes its salts). */
  private sameLog(): boolean {
    if (this.walFd === null || !this.wal) return true;
    const head = readAt(this.walFd, 24, 0);
    return head.length === 24 && head.readUInt32BE(16) === this.wal.salt1 && head.readUInt32BE(20) === this.wal.salt2;
  }

  page(n: number): Buffer {
    let p = this.cache.get(n);
    if (p) return p;
    if (n < 1 || n > this.pages) throw new SqliteReadError(`page ${n} is past the database's ${this.pages}`);
    const at = this.wal?.committed.get(n);
    p = at !== undefined && this.walFd !== null ? readAt(this.walFd, this.pageSize, at) : readAt(this.dbFd, this.pageSize, (n - 1) * this.pageSize);
    if (p.length < this.pageSize) throw new SqliteReadError(`page ${n} is cut short`);
    this.cache.set(n, p);
    return p;
  }

  /** A cell's payload, `size` bytes in all, `local` of them at `at` on the page, the rest on overflow pages. */
  private payload(page: Buffer, at: number, size: number, local: number): Buffer {
    if (size <= local) return page.subarray(at, at + size);
    const parts = [page.subarray(at, at + local)];
    let got = local;
    let next = page.readUInt32BE(at + local);
    for (let hops = 0; got < size; hops++) {
      if (next === 0 || hops > this.pages) throw new SqliteReadError('an overflow chain ends early');
      const o = this.page(next);
      const take = Math.min(size - got, this.usable - 4);
      parts.push(o.subarray(4, 4 + take));
      got += take;
      next = o.readUInt32BE(0);
    }
    return Buffer.concat(parts, size);
  }

  private localSize(size: number, leafTable: boolean): number {
    const u = this.usable;
    const x = leafTable ? u - 35 : Math.floor(((u - 12) * 64) / 255) - 23;
    if (size <= x) return size;
    const m = Math.floor(((u - 12) * 32) / 255) - 23;
    const k = m + ((size - m) % (u - 4));
    return k <= x ? k : m;
  }

  private header(n: number): { page: Buffer; type: number; cells: number[]; right: number } {
    const page = this.page(n);
    const base = n === 1 ? 100 : 0;
    const type = page[base]!;
    if (type !== 2 && type !== 5 && type !== 10 && type !== 13) throw new SqliteReadError(`page ${n} is not a b-tree page (type ${type})`);
    const count = page.readUInt16BE(base + 3);
    const interior = type === 2 || type === 5;
    const start = base + (interior ? 12 : 8);
    const cells: number[] = [];
    for (let i = 0; i < count; i++) cells.push(page.readUInt16BE(start + 2 * i));
    return { page, type, cells, right: interior ? page.readUInt32BE(base + 8) : 0 };
  }

  /**
   * The record of rowid `rowid` in the table whose b-tree starts at `root`; null when there is none, or
   * when its payload is over `maxBytes` (not read).
   */
  row(root: number, rowid: number, maxBytes = Infinity): SqlValue[] | null {
    let n = root;
    for (let depth = 0; depth < 64; depth++) {
      const h = this.header(n);
      if (h.type === 5) {
        let next = h.right;
        for (const c of h.cells) {
          const [key] = varint(h.page, c + 4);
          if (rowid <= key) {
            next = h.page.readUInt32BE(c);
            break;
          }
        }
        n = next;
        continue;
      }
      if (h.type !== 13) throw new SqliteReadError(`page ${n} is not a table page`);
      for (const c of h.cells) {
        const [size, a] = varint(h.page, c);
        const [key, b] = varint(h.page, a);
        if (key !== rowid) continue;
        if (size > maxBytes) return null;
        return record(this.payload(h.page, b, size, this.localSize(size, true)));
      }
      return null;
    }
    throw new SqliteReadError('a table b-tree deeper than 64');
  }

  /** Every row of the table whose b-tree starts at `root`, in rowid order. */
  *scan(root: number): Generator<{ rowid: number; values: SqlValue[] }> {
    const h = this.header(root);
    if (h.type === 5) {
      for (const c of h.cells) yield* this.scan(h.page.readUInt32BE(c));
      yield* this.scan(h.right);
      return;
    }
    if (h.type !== 13) throw new SqliteReadError(`page ${root} is not a table page`);
    for (const c of h.cells) {
      const [size, a] = varint(h.page, c);
      const [rowid, b] = varint(h.page, a);
      yield { rowid, values: record(this.payload(h.page, b, size, this.localSize(size, true))) };
    }
  }

  /**
   * The entries of the index whose b-tree starts at `root` whose first column is the text `key`, in index
   * order; with `after` (the values of an entry's next columns), only those that come after it: the pages
   * before it are not read.
   */
  *indexEquals(root: number, key: string, after: readonly SqlValue[] | null = null): Generator<SqlValue[]> {
    yield* this.indexWalk(root, Buffer.from(key, 'utf8'), after, 0);
  }

  /**
   * Where page `n` is read from, as a key that names its content: a frame of this log (append-only while
   * its salts hold) or the main file's page while the log has these salts (it changes only by a
   * checkpoint of pages the log holds, which are read from the log); without a log, the main file's
   * page as of its inode, size and modification time.
   */
  private pageKey(n: number): string {
    if (!this.wal) return `${this.mainStamp}.m${n}`;
    const at = this.wal.committed.get(n);
    return `${this.wal.salt1}.${this.wal.salt2}.${at !== undefined ? `w${at}` : `m${n}`}`;
  }

  /** An index page's cells, decoded: kept across reads by the page's key (a long session's index is not decoded again each turn). */
  private indexPage(n: number): IndexPage {
    const key = this.pageKey(n);
    let pages = indexPages.get(this.file);
    const hit = pages?.get(key);
    if (hit) return hit;
    const h = this.header(n);
    const interior = h.type === 2;
    if (!interior && h.type !== 10) throw new SqliteReadError(`page ${n} is not an index page`);
    const cells = h.cells.map((c) => {
      const [size, a] = varint(h.page, interior ? c + 4 : c);
      const values = record(this.payload(h.page, a, size, this.localSize(size, false)));
      const v = values[0] ?? null;
      const first = typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.isBuffer(v) ? (1 as const) : (-1 as const);
      return { values, first, child: interior ? h.page.readUInt32BE(c) : 0 };
    });
    const page: IndexPage = { interior, cells, right: h.right };
    if (!pages || pages.size > MAX_INDEX_PAGES) {
      if (!pages && indexPages.size >= MAX_WALS) indexPages.delete(indexPages.keys().next().value!);
      indexPages.set(this.file, (pages = new Map()));
    }
    pages.set(key, page);
    return page;
  }

  private *indexWalk(n: number, key: Buffer, after: readonly SqlValue[] | null, depth: number): Generator<SqlValue[]> {
    if (depth > 64) throw new SqliteReadError('an index b-tree deeper than 64');
    const page = this.indexPage(n);
    // Entries left of a cell are at most its key; right of the last cell, at least it. A cell of the key
    // that is not after `after` counts as before the key: nothing left of it is wanted.
    let lastCmp = -1;
    for (const c of page.cells) {
      let cmp = typeof c.first === 'number' ? c.first : c.first.compare(key);
      if (cmp === 0 && after !== null && compareTail(c.values, after) <= 0) cmp = -1;
      if (page.interior && cmp >= 0 && lastCmp <= 0) yield* this.indexWalk(c.child, key, after, depth + 1);
      if (cmp === 0) yield c.values;
      if (cmp > 0) return;
      lastCmp = cmp;
    }
    if (page.interior && lastCmp <= 0) yield* this.indexWalk(page.right, key, after, depth + 1);
  }

  private schema: Map<string, { root: number; sql: string }> | null = null;

  /** The root page of the table or index `name`, from the schema (page 1); null when there is none. */
  root(name: string): { root: number; sql: string } | null {
    if (!this.schema) {
      this.schema = new Map();
      for (const r of this.scan(1)) {
        const [, n, , root, sql] = r.values;
        if (typeof n === 'string' && typeof root === 'number') this.schema.set(n, { root, sql: typeof sql === 'string' ? sql : '' });
      }
    }
    return this.schema.get(name) ?? null;
  }
}

/** A varint at `at`: its value and where the next field starts. */
/** SQLite's order of two values (BINARY collation): NULL, then numbers, then text, then blobs. */
export function compareValues(a: SqlValue, b: SqlValue): number {
  const rank = (v: SqlValue) => (v === null ? 0 : typeof v === 'number' || typeof v === 'bigint' ? 1 : typeof v === 'string' ? 2 : 3);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return (a as number | bigint) < (b as number | bigint) ? -1 : (a as number | bigint) > (b as number | bigint) ? 1 : 0;
  if (ra === 2) return Buffer.compare(Buffer.from(a as string, 'utf8'), Buffer.from(b as string, 'utf8'));
  if (ra === 3) return Buffer.compare(a as Buffer, b as Buffer);
  return 0;
}

/** An index entry's columns after the first against `after`, column by column (`after`'s length of them). */
function compareTail(values: readonly SqlValue[], after: readonly SqlValue[]): number {
  for (let i = 0; i < after.length; i++) {
    const r = compareValues(values[i + 1] ?? null, after[i] ?? null);
    if (r !== 0) return r;
  }
  return 0;
}

export function varint(buf: Buffer, at: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const b = buf[at + i];
    if (b === undefined) throw new SqliteReadError('a varint runs past its page');
    v = v * 128 + (b & 0x7f);
    if (b < 0x80) return [v, at + i + 1];
  }
  const b = buf[at + 8];
  if (b === undefined) throw new SqliteReadError('a varint runs past its page');
  return [v * 256 + b, at + 9];
}

/** The values of a record (header of serial types, then the body). */
export function record(buf: Buffer): SqlValue[] {
  const [headerSize, first] = varint(buf, 0);
  if (headerSize > buf.length) throw new SqliteReadError('a record header runs past its payload');
  const types: number[] = [];
  for (let at = first; at < headerSize;) {
    const [t, next] = varint(buf, at);
    types.push(t);
    at = next;
  }
  const out: SqlValue[] = [];
  let at = headerSize;
  for (const t of types) {
    const width = t >= 12 ? Math.floor((t - 12) / 2) : ([0, 1, 2, 3, 4, 6, 8, 8, 0, 0][t] ?? -1);
    if (width < 0 || at + width > buf.length) throw new SqliteReadError(`a record field of serial type ${t} runs past its payload`);
    if (t === 0) out.push(null);
    else if (t === 8) out.push(0);
    else if (t === 9) out.push(1);
    else if (t === 7) out.push(buf.readDoubleBE(at));
    else if (t === 6) {
      const big = buf.readBigInt64BE(at);
      out.push(big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big);
    } else if (t >= 1 && t <= 5) out.push(buf.readIntBE(at, width));
    else if (t >= 12 && t % 2 === 0) out.push(Buffer.from(buf.subarray(at, at + width)));
    else if (t >= 13) out.push(buf.toString('utf8', at, at + width));
    else throw new SqliteReadError(`serial type ${t}`);
    at += width;
  }
  return out;
}

/** Forget the logs followed and the index pages kept (tests). */
export function forgetWals(): void {
  wals.clear();
  indexPages.clear();
}
