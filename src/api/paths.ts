// Where a project's supervisor listens, and its files. Light: the fast path of every client command.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/** A unix socket path must fit in sun_path (108 bytes with its NUL on Linux). */
const MAX_SOCKET_PATH = 100;

/**
 * `.jaggers/jaggers.sock`; when the project sits so deep that this path is too long for a unix socket,
 * a short path derived from it under the temp folder (`jaggers-<uid>/<16 hex>.sock`) instead.
 */
export function apiSocketPath(jaggersDir: string): string {
  const p = path.join(jaggersDir, 'jaggers.sock');
  if (Buffer.byteLength(p) <= MAX_SOCKET_PATH) return p;
  const hash = createHash('sha256').update(path.resolve(jaggersDir)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `jaggers-${process.getuid?.() ?? 'u'}`, `${hash}.sock`);
}

export const tokenPath = (jaggersDir: string): string => path.join(jaggersDir, 'token');
export const serveConfigPath = (jaggersDir: string): string => path.join(jaggersDir, 'serve.json');
export const logDir = (jaggersDir: string): string => path.join(jaggersDir, 'logs');
/** pino-roll keeps a `current.log` link to the file being written. */
export const currentLogPath = (jaggersDir: string): string => path.join(logDir(jaggersDir), 'current.log');
export const supervisorLockPath = (jaggersDir: string): string => path.join(jaggersDir, 'supervisor');
