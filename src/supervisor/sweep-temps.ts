// Temp files of atomic writes left by a writer killed between its write and its rename (`kill -9` of the
// supervisor while it wrote `inbox/m-1a2b3c4d.md`): removed when a supervisor starts, under the registry's
// lock, so no `*.md.tmp-<pid>-<hex>` stays beside the files it was to become. A live writer's (a `flow
// add` running now) is left alone.
import path from 'node:path';
import { sweepStaleTemps } from '../fs/durable.js';
import type { Log } from '../logger.js';
import { processRuns } from '../proc-state.js';

/** The folders of `.jaggers/` that files are written into atomically (and the disk is probed in). */
const FOLDERS = ['.', 'inbox', 'jobs', 'handover', 'flows', 'workflows', 'profiles', 'logs'];

export function sweepTemps(jaggersDir: string, log: Log): string[] {
  const removed: string[] = [];
  for (const f of FOLDERS) {
    try {
      for (const n of sweepStaleTemps(path.join(jaggersDir, f), processRuns)) removed.push(path.join(f, n));
    } catch (e) {
      log.warn({ folder: path.join(jaggersDir, f), err: (e as Error).message }, 'could not look for temp files left by killed writers');
    }
  }
  if (removed.length) log.info({ files: removed }, `removed ${removed.length} temp file(s) left by writers killed mid-write`);
  return removed;
}
