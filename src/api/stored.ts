// What a command reads from `.jaggers/` itself, when no supervisor runs (so nothing changes it): the
// registry as its files say, without taking its lock or repairing anything (the supervisor, its one
// writer, does that when it starts), and the supervisor's pid from the lock it holds.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from '../context.js';
import { peekRegistry } from '../sessions/load.js';
import { lockPathFor, pidIsAlive } from '../sessions/lock.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, type RegistryData } from '../sessions/registry.js';
import { supervisorLockPath } from './paths.js';

export type { RegistryData };
export { pidIsAlive };

export function readStored(ctx: Context): RegistryData {
  return peekRegistry({ snapshot: path.join(ctx.jaggersDir, SNAPSHOT_FILE), journal: path.join(ctx.jaggersDir, JOURNAL_FILE) });
}

/** The supervisor's pid, from the lock it holds while it runs; null when none runs. */
export async function supervisorPid(jaggersDir: string): Promise<number | null> {
  try {
    const pid = (JSON.parse(await readFile(lockPathFor(supervisorLockPath(jaggersDir)), 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' && pidIsAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}
