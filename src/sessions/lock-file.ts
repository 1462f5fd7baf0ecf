// The lock file itself: `<path>.lock` created with O_EXCL, holding the owner's pid and a token; waiting,
// taking over a dead owner's lock, releasing. `withLock` in lock.ts adds in-process queueing on top.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { JaggersError } from '../errors.js';
import { processRuns } from '../proc-state.js';
import { errCode, isNotFound } from '../fs/durable.js';

export interface LockOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Longest pause between two attempts (default 100 ms); pauses are random, doubling from 1 ms. */
  maxDelayMs?: number;
  /** How often a waiter reads the lock file to see whether its owner died (default 100 ms; also on first contact). */
  checkEveryMs?: number;
  /** A lock file still empty or unreadable after this long is taken as left by a crash (default 2 s). */
  unreadableStaleMs?: number;
  /** Whether a process is alive; injectable for tests. */
  isAlive?: (pid: number) => boolean;
}

export interface LockOwner {
  pid: number;
  token: string;
  host: string;
  since: string;
}

interface SeenLock {
  ino: number;
  mtimeMs: number;
  owner: LockOwner | null;
}

export function lockPathFor(file: string): string {
  return `${file}.lock`;
}

/** The process runs (a zombie, killed but not yet reaped, does not: its lock is free to take). */
export function pidIsAlive(pid: number): boolean {
  return processRuns(pid);
}

function parseOwner(text: string): LockOwner | null {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.pid === 'number' && typeof v.token === 'string' && typeof v.host === 'string') {
      return { pid: v.pid, token: v.token, host: v.host, since: String(v.since ?? '') };
    }
  } catch {
    // empty (being written) or garbage: judged by its age
  }
  return null;
}

function readLock(lockPath: string): SeenLock | null {
  try {
    const st = fs.statSync(lockPath);
    return { ino: st.ino, mtimeMs: st.mtimeMs, owner: parseOwner(fs.readFileSync(lockPath, 'utf8')) };
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

function isStale(seen: SeenLock, options: Required<LockOptions>): boolean {
  if (!seen.owner) return Date.now() - seen.mtimeMs > options.unreadableStaleMs;
  return seen.owner.host === os.hostname() && !options.isAlive(seen.owner.pid);
}

function sameLock(a: SeenLock, b: SeenLock): boolean {
  return a.ino === b.ino && a.owner?.token === b.owner?.token;
}

/**
 * Remove a lock left by a dead process. Two waiters may judge the same lock stale at once; if both simply
 * deleted it, the slower one could delete the lock the faster one has just created. So stealing happens
 * under a second, short-lived guard file, and the lock is re-read there and removed only if it is still
 * the very lock (inode and token) that was judged stale.
 */
function steal(lockPath: string, seen: SeenLock, options: Required<LockOptions>): void {
  const guard = `${lockPath}.steal`;
  try {
    fs.writeFileSync(guard, JSON.stringify({ pid: process.pid, host: os.hostname() }), { flag: 'wx' });
  } catch (e) {
    if (errCode(e) !== 'EEXIST') throw e;
    // A guard outlives its few microseconds only if its stealer died; clear it for the next round.
    const g = readLock(guard);
    if (g && Date.now() - g.mtimeMs > options.unreadableStaleMs) fs.rmSync(guard, { force: true });
    return;
  }
  try {
    const now = readLock(lockPath);
    if (now && sameLock(now, seen)) {
      const aside = `${lockPath}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      fs.renameSync(lockPath, aside);
      fs.rmSync(aside, { force: true });
    }
  } finally {
    fs.rmSync(guard, { force: true });
  }
}

function describeOwner(seen: SeenLock | null): string {
  if (!seen) return 'a process that just released it';
  if (!seen.owner) return 'an unknown process (the lock file is empty or unreadable)';
  const { pid, host, since } = seen.owner;
  return `pid ${pid}${host === os.hostname() ? '' : ` on ${host}`}${since ? ` since ${since}` : ''}`;
}

export interface LockHandle {
  readonly lockPath: string;
  readonly token: string;
  release(): Promise<void>;
}

export async function acquireLock(file: string, opts: LockOptions = {}): Promise<LockHandle> {
  const options: Required<LockOptions> = {
    timeoutMs: opts.timeoutMs ?? 30_000,
    maxDelayMs: opts.maxDelayMs ?? 100,
    checkEveryMs: opts.checkEveryMs ?? 100,
    unreadableStaleMs: opts.unreadableStaleMs ?? 2_000,
    isAlive: opts.isAlive ?? pidIsAlive,
  };
  const lockPath = lockPathFor(file);
  const token = randomBytes(8).toString('hex');
  const owner: LockOwner = { pid: process.pid, token, host: os.hostname(), since: new Date().toISOString() };
  const deadline = Date.now() + options.timeoutMs;
  let nextCheck = 0;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lockPath, JSON.stringify(owner))) return { lockPath, token, release: async () => releaseLock(lockPath, token) };
    // Waiting is retrying the create; reading the owner on every try would tax the holder's CPU.
    if (Date.now() >= nextCheck) {
      nextCheck = Date.now() + options.checkEveryMs;
      const seen = readLock(lockPath);
      if (seen && isStale(seen, options)) {
        steal(lockPath, seen, options);
        continue;
      }
    }
    if (Date.now() >= deadline) {
      throw new JaggersError(
        'E_REGISTRY',
        `timed out after ${options.timeoutMs} ms waiting for lock ${lockPath}, held by ${describeOwner(readLock(lockPath))}; ` +
          'if that process is stuck, stop it (the lock is taken over once its pid is gone)',
      );
    }
    const ceiling = Math.min(options.maxDelayMs, 2 ** Math.min(attempt, 10));
    await sleep(ceiling * (0.5 + Math.random() / 2));
  }
}

/** Create the lock file with O_EXCL; false when it exists. Checks existence first: a failed open costs an exception. */
function tryCreate(lockPath: string, content: string): boolean {
  if (fs.existsSync(lockPath)) return false;
  let fd: number;
  try {
    fd = fs.openSync(lockPath, 'wx', 0o644);
  } catch (e) {
    if (errCode(e) === 'EEXIST') return false;
    throw new JaggersError('E_REGISTRY', `cannot create lock file ${lockPath}: ${(e as Error).message}`, { cause: e });
  }
  try {
    fs.writeSync(fd, content);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(lockPath, { force: true });
    throw new JaggersError('E_REGISTRY', `cannot write lock file ${lockPath}: ${(e as Error).message}`, { cause: e });
  }
  fs.closeSync(fd);
  return true;
}

function releaseLock(lockPath: string, token: string): void {
  let text: string;
  try {
    text = fs.readFileSync(lockPath, 'utf8');
  } catch (e) {
    if (isNotFound(e)) return;
    throw e;
  }
  // Only remove our own lock: never one that was taken over and recreated by someone else.
  if (parseOwner(text)?.token === token) fs.rmSync(lockPath, { force: true });
}
