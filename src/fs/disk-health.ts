// The one handler of write failures the disk causes (full, over quota, read-only, failing): the durable
// writes (journal, snapshot, job, inbox and handover files), private folders and the supervisor's log
// all report here. The supervisor stays up, says which path failed and why (health, `status`, window 0,
// stderr), refuses new work with E_DISK_FULL (HTTP 507), and goes on by itself: the next request that
// would make work (or asks for the health) first tries a small write where the failure was. Nothing
// polls while the supervisor is idle.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { JaggersError } from '../errors.js';

/** errno codes that mean the disk (not the request) refused a write. */
export const DISK_ERROR_CODES: readonly string[] = ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO'];

/** The disk's errno code of `e`, or of an error it wraps (its `cause`); null for any other error. */
export function diskErrorCode(e: unknown): string | null {
  let x = e;
  for (let depth = 0; depth < 5 && typeof x === 'object' && x !== null; depth++) {
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string' && DISK_ERROR_CODES.includes(code)) return code;
    x = (x as { cause?: unknown }).cause;
  }
  return null;
}

export const isDiskError = (e: unknown): boolean => diskErrorCode(e) !== null;

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** A write the disk refused, as the error a caller (and the API) gets: E_DISK_FULL naming the path and the error. */
export function diskFullError(what: string, file: string, e: unknown): JaggersError {
  return new JaggersError('E_DISK_FULL', `${what} ${file} failed: ${messageOf(e)} (the disk is full or failing)`, { cause: e });
}

export interface DiskFailure {
  /** The file or folder whose write failed last. */
  path: string;
  /** ENOSPC, EDQUOT, EROFS or EIO. */
  code: string;
  /** The error as the system gave it. */
  error: string;
  /** When the disk started failing (ISO time). */
  since: string;
}

export interface DiskHealthPorts {
  /** A small write where `failedPath` is (created, fsynced, removed): throws while the disk still refuses. */
  probe(failedPath: string): Promise<void>;
  now?(): Date;
}

export class DiskHealth {
  private failure: DiskFailure | null = null;
  private probing: Promise<void> | null = null;
  private readonly listeners = new Set<(f: DiskFailure | null) => void>();

  constructor(private readonly p: DiskHealthPorts) {}

  /** The failure, while the disk is failing. */
  get failing(): DiskFailure | null {
    return this.failure;
  }

  /** Told when the disk starts failing (the failure) and when it works again (null); not on each failed write. */
  onChange(fn: (f: DiskFailure | null) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A write failed: recorded when the disk refused it (true); any other error is not the disk's (false). */
  failed(file: string, e: unknown): boolean {
    const code = diskErrorCode(e);
    if (!code) return false;
    const was = this.failure;
    // The cause as the system gave it (an E_DISK_FULL wraps it).
    let cause: unknown = e;
    while (cause instanceof JaggersError && cause.cause !== undefined) cause = cause.cause;
    this.failure = { path: file, code, error: messageOf(cause), since: was?.since ?? (this.p.now?.() ?? new Date()).toISOString() };
    if (!was) this.emit();
    return true;
  }

  /**
   * Before new work: while the disk is failing, try one small write where it failed (callers at the same
   * moment share it); the disk works again when it succeeds, else E_DISK_FULL naming the path and error.
   */
  async check(): Promise<void> {
    if (!this.failure) return;
    this.probing ??= this.reprobe().finally(() => (this.probing = null));
    await this.probing;
    if (this.failure) throw refusal(this.failure);
  }

  private async reprobe(): Promise<void> {
    const f = this.failure;
    if (!f) return;
    try {
      await this.p.probe(f.path);
    } catch (e) {
      // Another error (the folder was removed meanwhile) says nothing about the disk: the next real write will.
      if (this.failed(f.path, e)) return;
    }
    this.failure = null;
    this.emit();
  }

  private emit(): void {
    for (const fn of this.listeners) {
      try {
        fn(this.failure);
      } catch {
        // A listener that fails (its own log on the failing disk) must not stop the others.
      }
    }
  }
}

/** The refusal of new work while the disk fails. */
export function refusal(f: DiskFailure): JaggersError {
  return new JaggersError(
    'E_DISK_FULL',
    `the disk is failing: writing ${f.path} failed with ${f.error} (since ${f.since}); new work is refused until a write ` +
      `there succeeds again: free some space (each new request tries again)`,
  );
}

/** In words, for `status`, window 0 and the log. */
export function describeFailure(f: DiskFailure): string {
  return `the disk is failing since ${f.since}: writing ${f.path} failed with ${f.error}; new work is refused (E_DISK_FULL) until a write succeeds there again`;
}

/** The real probe: 4 KiB (one page) written, fsynced and removed in the nearest existing folder of `failedPath`. */
export async function probeWrite(failedPath: string): Promise<void> {
  let dir = failedPath;
  for (;;) {
    try {
      if (fs.statSync(dir).isDirectory()) break;
    } catch {
      // Missing: its parent.
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  const file = path.join(dir, `.jaggers-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    fs.writeSync(fd, Buffer.alloc(4096, 0x20));
    await new Promise<void>((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}

let sink: ((file: string, e: unknown) => void) | null = null;

/**
 * Where write failures go in this process (the supervisor's DiskHealth); returns the undo. Low-level
 * writers (durable files, the log) have no handle on the supervisor: they call `writeFailed`.
 */
export function onWriteFailure(fn: (file: string, e: unknown) => void): () => void {
  sink = fn;
  return () => {
    if (sink === fn) sink = null;
  };
}

/** A write of `file` failed: a disk error goes to the process's handler (if any), anything else nowhere. */
export function writeFailed(file: string, e: unknown): void {
  if (isDiskError(e)) sink?.(file, e);
}
