import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireLock, withLock } from '../../src/sessions/lock.js';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jaggers-lock-'));
  file = path.join(dir, 'sessions.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const owner = (pid: number, token: string): string => JSON.stringify({ pid, token, host: os.hostname(), since: '2025-11-21T10:00:00.000Z' });

describe('withLock', () => {
  it('holds <file>.lock with its pid and token, and removes it afterwards', async () => {
    const seen = await withLock(file, async () => JSON.parse(await readFile(`${file}.lock`, 'utf8')));
    expect(seen).toMatchObject({ pid: process.pid, host: os.hostname(), token: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(await readdir(dir)).toEqual([]);
  });

  it('serializes holders', async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withLock(file, async () => {
          inside += 1;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 2));
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('releases when the function throws', async () => {
    await expect(withLock(file, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await readdir(dir)).toEqual([]);
  });

  it('takes over a lock whose owner is dead, without leaving files behind', async () => {
    await writeFile(`${file}.lock`, owner(999_999, 'dead'));
    const handle = await acquireLock(file, { isAlive: (pid) => pid !== 999_999, timeoutMs: 1_000 });
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8')).token).toBe(handle.token);
    await handle.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it('takes over an empty lock file once it is old, but not while it may still be being written', async () => {
    await writeFile(`${file}.lock`, '');
    await expect(acquireLock(file, { timeoutMs: 150, unreadableStaleMs: 60_000 })).rejects.toThrow(/the lock file is empty or unreadable/);
    const handle = await acquireLock(file, { timeoutMs: 1_000, unreadableStaleMs: 0 });
    await handle.release();
  });

  it('times out on a live owner with the lock file and pid in the message, and leaves its lock alone', async () => {
    await writeFile(`${file}.lock`, owner(process.pid, 'someone-else'));
    const error = await acquireLock(file, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_REGISTRY' });
    expect(String(error)).toContain(`timed out after 100 ms waiting for lock ${file}.lock, held by pid ${process.pid} since 2025-11-21T10:00:00.000Z`);
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8')).token).toBe('someone-else');
  });

  it('does not remove a lock that is no longer its own', async () => {
    const handle = await acquireLock(file);
    await writeFile(`${file}.lock`, owner(process.pid, 'newcomer'));
    await handle.release();
    expect(JSON.parse(await readFile(`${file}.lock`, 'utf8')).token).toBe('newcomer');
  });
});

describe('withLock in one process', () => {
  it('queues callers in order', async () => {
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4, 5].map((n) => withLock(file, async () => void order.push(n))));
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });

  it('refuses a re-entrant call instead of hanging', async () => {
    const inner = withLock(file, () => withLock(file, async () => 'inner'));
    await expect(inner).rejects.toThrow(/already held by this call chain; it is not re-entrant/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('times out behind a holder in the same process, naming the lock', async () => {
    let release!: () => void;
    const holding = withLock(file, () => new Promise<void>((r) => (release = r)));
    await expect(withLock(file, async () => 'late', { timeoutMs: 50 })).rejects.toThrow(
      `timed out after 50 ms waiting for lock ${file}.lock, held by another task in this process`,
    );
    release();
    await holding;
    expect(await withLock(file, async () => 'next')).toBe('next');
  });
});
