// The supervisor's structured log: JSON lines (time, level, msg, and task, terminal, session, job ids
// where known) in `.jaggers/logs/supervisor.<n>.log`, rotated by size, the newest linked as current.log.
// A line the disk refuses (full, failing) goes to the disk's handler (src/fs/disk-health.ts), and is
// written later when the disk takes writes again: the log never stops the supervisor.
import path from 'node:path';
import pino from 'pino';
import pinoRoll from 'pino-roll';
import { logDir } from '../api/paths.js';
import { isDiskError, writeFailed } from '../fs/disk-health.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** JAGGERS_LOG=debug (or another pino level); anything else is info. */
export function logLevel(env: NodeJS.ProcessEnv): string {
  const v = env.JAGGERS_LOG?.toLowerCase();
  return v && (LOG_LEVELS as readonly string[]).includes(v) ? v : 'info';
}

export interface SupervisorLog {
  log: pino.Logger;
  file: string;
  close(): Promise<void>;
}

export async function openSupervisorLog(jaggersDir: string, level: string, opts: { size?: string; keep?: number } = {}): Promise<SupervisorLog> {
  const dir = logDir(jaggersDir);
  await ensurePrivateFolder(dir);
  const stream = await pinoRoll({
    file: path.join(dir, 'supervisor'),
    extension: '.log',
    size: opts.size ?? '10m',
    limit: { count: opts.keep ?? 5, removeOtherLogFiles: true },
    symlink: true,
    mkdir: true,
    // Each line is on disk before whatever follows it (an API answer): a follower (`--verbose`) sees
    // the lines of a request before its answer. The log is a few lines per turn, not a hot path.
    sync: true,
    // While the disk refuses writes the lines wait in memory, up to this much; later ones are dropped.
    maxLength: 1024 * 1024,
  });
  // Without a listener a write error (ENOSPC) is an unhandled 'error' event, which ends the process.
  let told = false;
  stream.on('error', (e) => {
    const file = stream.file ?? path.join(dir, 'current.log');
    if (isDiskError(e)) return writeFailed(file, e);
    if (!told) process.stderr.write(`jaggers: cannot write the log ${file}: ${e.message}\n`);
    told = true;
  });
  const log = pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, stream);
  return {
    log,
    file: path.join(dir, 'current.log'),
    close: () =>
      new Promise<void>((resolve) => {
        log.flush(() => {
          stream.end();
          resolve();
        });
      }),
  };
}
