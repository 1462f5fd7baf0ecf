// Durable file primitives for the registry: fsync'd appends, atomic replace, move-aside without overwrite.
// The registry runs these while holding a cross-process lock that every writer waits for, so the small
// local operations are synchronous (microseconds, no thread-pool round trip); fsync, which can take long
// on a busy disk, stays asynchronous so the event loop is never blocked by it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { JaggersError } from '../errors.js';
import { diskFullError, isDiskError, writeFailed } from './disk-health.js';

const fsyncFd = promisify(fs.fsync);

export function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

export function isNotFound(e: unknown): boolean {
  return errCode(e) === 'ENOENT';
}

/** A failed file operation as a JaggersError; a write the disk refused (full, failing) also goes to the disk's handler. */
function fileError(what: string, file: string, e: unknown, write = true): JaggersError {
  if (e instanceof JaggersError) return e;
  if (write && isDiskError(e)) {
    writeFailed(file, e);
    return diskFullError(what, file, e);
  }
  const why = e instanceof Error ? e.message : String(e);
  return new JaggersError('E_FILE', `${what} ${file} failed: ${why}`, { cause: e });
}

function writeAll(fd: number, data: Buffer): void {
  for (let done = 0; done < data.length;) done += fs.writeSync(fd, data, done, data.length - done);
}

/** The file's bytes from `offset` to its end (empty when it is shorter), and its size; null when it does not exist. */
export function readFrom(file: string, offset = 0): { data: Buffer; size: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if (isNotFound(e)) return null;
    throw fileError('opening', file, e, false);
  }
  try {
    const { size } = fs.fstatSync(fd);
    const data = Buffer.alloc(Math.max(0, size - offset));
    let got = 0;
    while (got < data.length) {
      const n = fs.readSync(fd, data, got, data.length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return { data: data.subarray(0, got), size };
  } finally {
    fs.closeSync(fd);
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  const fd = fs.openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Append with O_APPEND and fsync (and fsync the folder when the file is new); returns the size afterwards.
 * An append that fails (a full disk cuts it short) is cut off again: the next append would otherwise
 * follow half a line, which reads back as a damaged line in the middle of the file.
 */
export async function appendDurable(file: string, text: string): Promise<number> {
  const bytes = Buffer.from(text, 'utf8');
  let fd: number;
  try {
    fd = fs.openSync(file, 'a', 0o644);
  } catch (e) {
    throw fileError('opening', file, e);
  }
  let before = -1;
  try {
    before = fs.fstatSync(fd).size;
    writeAll(fd, bytes);
    await fsyncFd(fd);
    const { size } = fs.fstatSync(fd);
    // Only our bytes in it: it was just created (or empty), so its folder entry must be made durable too.
    if (size === bytes.length) await fsyncDir(path.dirname(file));
    return size;
  } catch (e) {
    if (before >= 0) cutBack(fd, before);
    throw fileError('appending to', file, e);
  } finally {
    fs.closeSync(fd);
  }
}

/** Back to `size` bytes (freeing space never needs space); a failure here leaves a torn tail, which a load cuts. */
function cutBack(fd: number, size: number): void {
  try {
    fs.ftruncateSync(fd, size);
    fs.fsyncSync(fd);
  } catch {
    // The load after the next start finds the torn last line and cuts it.
  }
}

/**
 * One append-only file kept open (a journal): each append is written whole with O_APPEND and fsynced, the
 * folder fsynced too when the file was new. Opening the file for every append cost more than the write.
 * It is opened again after a failed append, and when the path no longer names the file open here.
 */
export class DurableAppender {
  private fd: number | null = null;
  constructor(readonly file: string) {}

  /** Append `text`; returns the file's size afterwards. An append the disk cuts short is cut back off. */
  async append(text: string): Promise<number> {
    const bytes = Buffer.from(text, 'utf8');
    let fresh = false;
    // The file at the path is still the one open here (not removed or replaced behind our back)?
    let before = this.fd === null ? null : this.sizeIfSame();
    if (before === null) {
      this.close();
      try {
        this.fd = fs.openSync(this.file, 'a', 0o644);
        before = fs.fstatSync(this.fd).size;
      } catch (e) {
        this.close();
        throw fileError('opening', this.file, e);
      }
      fresh = true;
    }
    const fd = this.fd!;
    try {
      writeAll(fd, bytes);
      await fsyncFd(fd);
      const { size } = fs.fstatSync(fd);
      // Only our bytes in it: it was just created (or empty), so its folder entry must be made durable too.
      if (fresh && size === bytes.length) await fsyncDir(path.dirname(this.file));
      return size;
    } catch (e) {
      cutBack(fd, before);
      this.close();
      throw fileError('appending to', this.file, e);
    }
  }

  /** The open file's size when the path still names it; null otherwise. */
  private sizeIfSame(): number | null {
    try {
      const atPath = fs.statSync(this.file);
      const open = fs.fstatSync(this.fd!);
      return atPath.ino === open.ino && atPath.dev === open.dev ? open.size : null;
    } catch {
      return null;
    }
  }

  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      fs.closeSync(fd);
    } catch {
      // Already closed: nothing to give back.
    }
  }
}

/**
 * The temp file `writeFileAtomic` writes before its rename (`<file>.tmp-<pid>-<8 hex>`), and the disk's
 * probe (`.jaggers-probe-<pid>-<8 hex>`, src/fs/disk-health.ts), which a kill during a probe leaves too.
 */
const TEMP_FILE = /(?:\.tmp-|^\.jaggers-probe-)(\d+)-[0-9a-f]{8}$/;

/**
 * Temp files of `writeFileAtomic` (and disk probes) in `dir` left by a writer killed between its write and its rename
 * (`kill -9`, a crash): those whose pid no longer runs are removed; a live writer's are left alone.
 * Returns the names removed. A folder that does not exist has none.
 */
export function sweepStaleTemps(dir: string, alive: (pid: number) => boolean): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    if (isNotFound(e)) return [];
    throw fileError('reading', dir, e);
  }
  const removed: string[] = [];
  for (const n of names) {
    const pid = Number(TEMP_FILE.exec(n)?.[1] ?? NaN);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    fs.rmSync(path.join(dir, n), { force: true });
    removed.push(n);
  }
  return removed;
}

/**
 * Replace `file` atomically: temp file in the same folder, write, fsync, rename, fsync the folder.
 * `sync: false` skips both fsyncs: readers still see the old or the new file whole, but after a power
 * loss the file may be old or empty.
 */
export async function writeFileAtomic(file: string, text: string, options: { sync?: boolean } = {}): Promise<void> {
  const sync = options.sync ?? true;
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const fd = fs.openSync(tmp, 'wx', 0o644);
    try {
      writeAll(fd, Buffer.from(text, 'utf8'));
      if (sync) await fsyncFd(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    if (sync) await fsyncDir(path.dirname(file));
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw fileError('writing', file, e);
  }
}

/** Create `name` (or `name-1`, `name-2`...) holding `data`, never overwriting; returns the name used. */
async function createUnique(name: string, data: Buffer, what: string, from: string): Promise<string> {
  for (let n = 0; n < 1000; n++) {
    const candidate = n === 0 ? name : `${name}-${n}`;
    let fd: number;
    try {
      fd = fs.openSync(candidate, 'wx', 0o644);
    } catch (e) {
      if (errCode(e) === 'EEXIST') continue;
      throw fileError(what, from, e);
    }
    try {
      writeAll(fd, data);
      await fsyncFd(fd);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(candidate, { force: true });
      throw fileError(what, from, e);
    }
    fs.closeSync(fd);
    return candidate;
  }
  throw new JaggersError('E_FILE', `${what} ${from}: ${name} and 999 numbered variants already exist`);
}

/** Move `file` to `target` (or `target-1`, `target-2`...) without ever overwriting; returns the name used. */
export async function moveAside(file: string, target: string): Promise<string> {
  for (let n = 0; n < 1000; n++) {
    const name = n === 0 ? target : `${target}-${n}`;
    try {
      fs.linkSync(file, name);
    } catch (e) {
      if (errCode(e) === 'EEXIST') continue;
      if (errCode(e) !== 'EPERM' && errCode(e) !== 'ENOTSUP') throw fileError('moving aside', file, e);
      // No hard links on this file system: copy, then remove.
      const copy = await createUnique(target, fs.readFileSync(file), 'moving aside', file);
      fs.unlinkSync(file);
      await fsyncDir(path.dirname(file));
      return copy;
    }
    fs.unlinkSync(file);
    await fsyncDir(path.dirname(file));
    return name;
  }
  throw new JaggersError('E_FILE', `moving aside ${file}: ${target} and 999 numbered variants already exist`);
}

/** Keep the bytes of `file` from `offset` in a new file `target*`, then cut `file` back to `offset`. */
export async function cutTail(file: string, offset: number, target: string): Promise<string> {
  const tail = readFrom(file, offset);
  const kept = await createUnique(target, tail?.data ?? Buffer.alloc(0), 'saving the tail of', file);
  const fd = fs.openSync(file, 'r+');
  try {
    fs.ftruncateSync(fd, offset);
    await fsyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
  return kept;
}

/** `2025-11-21T21:52:03.123Z` -> `2025-11-21T21-52-03.123Z`, safe in file names everywhere. */
export function fileStamp(date: Date): string {
  return date.toISOString().replaceAll(':', '-');
}
