// The one way to read a file on an agent's or a client's behalf (read_artifact, a message's text, a job's
// reply or prompt, a task's final answer): open first, then check the open file itself, so nothing can be
// swapped in between. Only a regular file with one name, in one of the shared folders of .jaggers/, is read;
// a FIFO, device, socket or folder is refused without blocking; the read is bounded in bytes and in time.
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError } from '../errors.js';

/**
 * The folders of .jaggers/ whose files are read for agents and clients: what jaggers writes for them
 * (handover files and replies, messages, job prompts). Everything else in .jaggers/ is the supervisor's
 * own and never read for anyone: the TCP bearer token (`token`), `serve.json`, `web.json`, the registry
 * (`sessions.json`, `events.jsonl`), the locks, `logs/`, `mcp/` (agents' MCP registrations), `work/`.
 */
export const SHARED_FOLDERS = ['handover', 'inbox', 'jobs'] as const;
/** A headless run's files (`work/<job>/`): its output and reply, read by the supervisor alone. */
export const RUN_FOLDERS = ['work'] as const;

/** A read of a whole file refuses one larger than this (a handover's text is at most a request body). */
export const WHOLE_FILE_MAX = 64 * 1024 * 1024;
/** No read takes longer: a file system that hangs ends in E_TIMEOUT, not in a call that never returns. */
export const READ_TIMEOUT_MS = 10_000;

/** The project: relative paths are taken from its root; every read stays inside its .jaggers/. */
export interface ConfineDirs {
  projectRoot: string;
  jaggersDir: string;
}

export interface ConfineOptions {
  /** Who reads, at the start of every error: `read_artifact`, `job j-1234abcd: its reply`. */
  what: string;
  /** Bytes to read at most (from `offset`). */
  limit: number;
  offset?: number;
  /** Refuse a file with more than `limit` bytes after `offset`, rather than read part of it. */
  whole?: boolean;
  /** The folders of .jaggers/ the file may be in (default SHARED_FOLDERS). */
  folders?: readonly string[];
  timeoutMs?: number;
}

export interface ConfinedRead {
  /** The file as it was opened: absolute, every symbolic link above it resolved. */
  path: string;
  /** Its size when it was opened. */
  size: number;
  data: Buffer;
}

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0);

function kindOf(s: { isFile(): boolean; isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isSymbolicLink(): boolean }): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isSocket()) return 'a socket';
  if (s.isSymbolicLink()) return 'a symbolic link';
  return 'a device';
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/** Read (part of) a file for an agent or a client; every refusal is a JaggersError naming `given`. */
export async function readConfined(dirs: ConfineDirs, given: string, o: ConfineOptions): Promise<ConfinedRead> {
  const ms = o.timeoutMs ?? READ_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new JaggersError('E_TIMEOUT', `${o.what}: reading ${JSON.stringify(given)} took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([readChecked(dirs, given, o), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A whole file as UTF-8 text, for an agent or a client (at most `max` bytes, else refused). */
export async function readConfinedText(dirs: ConfineDirs, given: string, what: string, o: { max?: number; folders?: readonly string[] } = {}): Promise<string> {
  const r = await readConfined(dirs, given, { what, limit: o.max ?? WHOLE_FILE_MAX, whole: true, ...(o.folders ? { folders: o.folders } : {}) });
  return r.data.toString('utf8');
}

async function readChecked(dirs: ConfineDirs, given: string, o: ConfineOptions): Promise<ConfinedRead> {
  const shown = JSON.stringify(given);
  const folders = o.folders ?? SHARED_FOLDERS;
  const where = folders.map((f) => `.jaggers/${f}/`).join(', ');
  const refuse = (why: string) => new JaggersError('E_FILE_REFUSED', `${o.what}: ${shown} ${why}`);
  const failed = (e: NodeJS.ErrnoException) =>
    e.code === 'ENOENT' || e.code === 'ENOTDIR'
      ? new JaggersError('E_NOT_FOUND', `${o.what}: ${shown} does not exist`)
      : e.code === 'ELOOP'
        ? refuse('is a symbolic link: only files jaggers wrote are read')
        : e.code === 'ENXIO'
          ? refuse('is a socket or device, not a regular file')
          : new JaggersError('E_FILE', `${o.what}: cannot read ${shown}: ${e.code ?? e.message}`);

  const abs = path.resolve(dirs.projectRoot, given);
  const root = await realpath(dirs.jaggersDir).catch(() => path.resolve(dirs.jaggersDir));
  // Not even looked at when its name is elsewhere (the open file is checked again below, whatever its name).
  if (!inside(path.resolve(dirs.jaggersDir), abs) && !inside(root, abs)) throw refuse(`is outside .jaggers/: only files in ${where} are read`);
  // Only a regular file is opened at all (a device may act on open); the open file is what is trusted.
  const before = await lstat(abs).catch((e: NodeJS.ErrnoException) => {
    throw failed(e);
  });
  if (!before.isFile()) throw refuse(`is ${kindOf(before)}, not a regular file`);

  const fh = await open(abs, FLAGS).catch((e: NodeJS.ErrnoException) => {
    throw failed(e);
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refuse(`is ${kindOf(st)}, not a regular file`);
    const real = await openedPath(fh, abs, st).catch((e: NodeJS.ErrnoException) => {
      throw e instanceof JaggersError ? e : failed(e);
    });
    if (real === null) throw refuse('changed while it was opened');
    if (!inside(root, real)) throw refuse(`is outside .jaggers/ (it leads to ${JSON.stringify(real)}): only files in ${where} are read`);
    const parts = path.relative(root, real).split(path.sep);
    if (parts.length < 2 || !folders.includes(parts[0]!))
      throw refuse(`is private to the supervisor (${JSON.stringify(path.join('.jaggers', ...parts))}): only files in ${where} are read`);
    // Another name may be anywhere (a hard link to the token, or out of the tree): only a file with one is read.
    if (st.nlink > 1) throw refuse(`has ${st.nlink} hard links: only a file with one name is read`);
    const offset = o.offset ?? 0;
    if (o.whole && st.size - offset > o.limit) throw refuse(`is ${st.size} bytes, over the ${o.limit} read at once`);
    return { path: real, size: st.size, data: await readAt(fh, offset, Math.max(0, Math.min(o.limit, st.size - offset))) };
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * Where the open file is: on Linux the kernel's own name for the descriptor; elsewhere the resolved path,
 * accepted only when it is still the same file (device and inode). null when it changed in between.
 */
async function openedPath(fh: FileHandle, abs: string, st: { dev: number; ino: number }): Promise<string | null> {
  const link = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => null);
  if (link !== null) return link.endsWith(' (deleted)') ? null : link;
  const real = await realpath(abs);
  const now = await stat(real);
  return now.dev === st.dev && now.ino === st.ino ? real : null;
}

async function readAt(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}
