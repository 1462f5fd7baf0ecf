// A cross-process lock on a path (`<path>.lock`, see lock-file.ts), with callers in the same process
// queued in order in memory rather than polling the file against each other.
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { JaggersError } from '../errors.js';
import { acquireLock, lockPathFor, type LockOptions } from './lock-file.js';

export { acquireLock, lockPathFor, pidIsAlive } from './lock-file.js';
export type { LockHandle, LockOptions, LockOwner } from './lock-file.js';

/** Lock paths held by the current async call chain, to turn a re-entrant call into an error instead of a hang. */
const held = new AsyncLocalStorage<ReadonlySet<string>>();
/** Per lock path: settles when the last queued holder in this process is done. */
const queues = new Map<string, Promise<void>>();

async function waitTurn(previous: Promise<void>, lockPath: string, timeoutMs: number): Promise<void> {
  const timer = new AbortController();
  const timedOut = sleep(timeoutMs, 'timeout' as const, { signal: timer.signal }).catch(() => 'aborted' as const);
  const outcome = await Promise.race([previous.then(() => 'ready' as const), timedOut]);
  timer.abort();
  if (outcome === 'timeout') {
    throw new JaggersError(
      'E_REGISTRY',
      `timed out after ${timeoutMs} ms waiting for lock ${lockPath}, held by another task in this process (pid ${process.pid})`,
    );
  }
}

/** Run `fn` while holding the lock on `file` (the lock file is `<file>.lock`). Not re-entrant: that throws. */
export async function withLock<T>(file: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lockPath = lockPathFor(file);
  const mine = held.getStore();
  if (mine?.has(lockPath)) {
    throw new JaggersError(
      'E_REGISTRY',
      `lock ${lockPath} is already held by this call chain; it is not re-entrant (a registry method called from inside update()?)`,
    );
  }
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 30_000;
  const previous = queues.get(lockPath) ?? Promise.resolve();
  let done!: () => void;
  const turn = new Promise<void>((resolve) => (done = resolve));
  const tail = previous.then(() => turn);
  queues.set(lockPath, tail);
  try {
    await waitTurn(previous, lockPath, timeoutMs);
    const handle = await acquireLock(file, { ...options, timeoutMs: Math.max(0, timeoutMs - (Date.now() - started)) });
    try {
      return await held.run(new Set([...(mine ?? []), lockPath]), fn);
    } finally {
      await handle.release();
    }
  } finally {
    done();
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}
