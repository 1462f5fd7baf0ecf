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
  return apiSocketPathOn(jaggersDir, os.tmpdir(), process.getuid?.() ?? 'u', path);
}

/**
 * apiSocketPath as a machine with that temp folder and uid has it (a remote host's supervisor's:
 * src/hosts/remote-project.ts); `p` is the path module of that machine's paths (path.posix there).
 */
export function apiSocketPathOn(jaggersDir: string, tmpdir: string, uid: number | string, p: typeof path.posix = path): string {
  const sock = p.join(jaggersDir, 'jaggers.sock');
  if (Buffer.byteLength(sock) <= MAX_SOCKET_PATH) return sock;
  const hash = createHash('sha256').update(p.resolve(jaggersDir)).digest('hex').slice(0, 16);
  return p.join(tmpdir, `jaggers-${uid}`, `${hash}.sock`);
}

/**
 * Where a host's supervisor's API is forwarded to here (docs/hosts.md): `.jaggers/hosts/<host>.sock`, or
 * in the temp folder (`jaggers-<uid>/<16 hex>.sock`) when that is too long for a unix socket.
 */
export function hostSocketPath(jaggersDir: string, host: string): string {
  const sock = path.join(jaggersDir, 'hosts', `${host}.sock`);
  if (Buffer.byteLength(sock) <= MAX_SOCKET_PATH) return sock;
  const hash = createHash('sha256').update(path.resolve(sock)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `jaggers-${process.getuid?.() ?? 'u'}`, `${hash}.sock`);
}

export const tokenPath = (jaggersDir: string): string => path.join(jaggersDir, 'token');
export const serveConfigPath = (jaggersDir: string): string => path.join(jaggersDir, 'serve.json');
export const logDir = (jaggersDir: string): string => path.join(jaggersDir, 'logs');
/** pino-roll keeps a `current.log` link to the file being written. */
export const currentLogPath = (jaggersDir: string): string => path.join(logDir(jaggersDir), 'current.log');
export const supervisorLockPath = (jaggersDir: string): string => path.join(jaggersDir, 'supervisor');
