// Sessions on disk under $HOME/.fake-agent/sessions/<uuid>.json, so tests can check that a resume
// brought back the right conversation. Parsing and listing are pure; reading and writing are not.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface TurnRecord {
  /** First line of the prompt, whole (of its first 4096 characters): `promptPreview`. */
  prompt: string;
  sha256: string;
  bytes: number;
  /** The reply lines, joined with `\n`. */
  reply: string;
}

export interface SessionRecord {
  id: string;
  cwd: string;
  /** ISO time the session was created. */
  created: string;
  /** ISO time of the last turn (or creation). */
  updated: string;
  title: string;
  turns: TurnRecord[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

export function sessionsDir(home: string): string {
  return path.join(home, '.fake-agent', 'sessions');
}

export function sessionPath(home: string, id: string): string {
  return path.join(sessionsDir(home), `${id}.json`);
}

export function newSession(id: string, cwd: string, now: Date): SessionRecord {
  const iso = now.toISOString();
  return { id, cwd, created: iso, updated: iso, title: '(empty)', turns: [] };
}

/** Validates a parsed session file; a message naming the bad field when it is not one. */
export function parseSession(data: unknown, where: string): SessionRecord | string {
  if (typeof data !== 'object' || data === null) return `${where}: not a JSON object`;
  const o = data as Record<string, unknown>;
  for (const key of ['id', 'cwd', 'created', 'title'] as const) {
    if (typeof o[key] !== 'string') return `${where}: field \`${key}\` must be a string, got ${typeof o[key]}`;
  }
  if (!Array.isArray(o.turns)) return `${where}: field \`turns\` must be an array`;
  const turns: TurnRecord[] = [];
  for (const [i, t] of (o.turns as unknown[]).entries()) {
    const r = (t ?? {}) as Record<string, unknown>;
    if (typeof r.prompt !== 'string' || typeof r.sha256 !== 'string' || typeof r.bytes !== 'number' || typeof r.reply !== 'string') {
      return `${where}: turns[${i}] must have prompt, sha256, bytes and reply`;
    }
    turns.push({ prompt: r.prompt, sha256: r.sha256, bytes: r.bytes, reply: r.reply });
  }
  const created = o.created as string;
  return {
    id: o.id as string,
    cwd: o.cwd as string,
    created,
    updated: typeof o.updated === 'string' ? o.updated : created,
    title: o.title as string,
    turns,
  };
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export function writeFileAtomic(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeAtomicIn(file, text);
}

/**
 * Writes `file`, a path below `home`, as writeFileAtomic does, making the folders between them but never
 * `home` itself: when HOME is gone (a test removed its world while the agent was still ending) nothing
 * is written, or the write would make HOME again and leave it behind.
 */
export function writeUnderHome(home: string, file: string, text: string): void {
  let dir = home;
  for (const part of path.relative(home, path.dirname(file)).split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    try {
      fs.mkdirSync(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EEXIST') throw e;
    }
  }
  try {
    writeAtomicIn(file, text);
  } catch (e) {
    // Removed between the folders and the write: the same as gone before.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

function writeAtomicIn(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

export function writeSession(home: string, session: SessionRecord): void {
  writeUnderHome(home, sessionPath(home, session.id), `${JSON.stringify(session, null, 2)}\n`);
}

export function sessionExists(home: string, id: string): boolean {
  return fs.existsSync(sessionPath(home, id));
}

/** The session, undefined when there is no such file; throws when the file is not a session. */
export function readSession(home: string, id: string): SessionRecord | undefined {
  if (!isUuid(id)) return undefined;
  const file = sessionPath(home, id);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = parseSession(JSON.parse(text), file);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

/** Every readable session, oldest first; unreadable files are skipped. */
export function listSessions(home: string): SessionRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(sessionsDir(home));
  } catch {
    return [];
  }
  const out: SessionRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const s = readSession(home, name.slice(0, -'.json'.length));
      if (s) out.push(s);
    } catch {
      // a broken file is not a session
    }
  }
  return out.sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
}

/** The session with the newest activity, whatever folder it belongs to (gemini's global `-r latest`). */
export function latestSession(sessions: readonly SessionRecord[]): SessionRecord | undefined {
  let best: SessionRecord | undefined;
  for (const s of sessions) if (!best || s.updated >= best.updated) best = s;
  return best;
}

export function relativeTime(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'Just now';
  const plural = (n: number, unit: string): string => `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return plural(hours, 'hour');
  return plural(Math.floor(hours / 24), 'day');
}

/** `1. <title> (<relative time>) [<uuid>]`, one line per session, like `gemini --list-sessions`. */
export function formatSessionList(sessions: readonly SessionRecord[], now: number): string {
  return sessions.map((s, i) => `${i + 1}. ${s.title} (${relativeTime(now - Date.parse(s.updated))}) [${s.id}]\n`).join('');
}
