// Pure halves of session discovery: which day folders to scan, parsing a codex rollout's first line,
// choosing among candidates, and diffing `--list-sessions` outputs.

export interface RolloutHead {
  id: string;
  cwd: string | null;
  startedAt: Date | null;
  file: string;
}

export type DiscoveryResult =
  { kind: 'found'; id: string; file: string } | { kind: 'none'; id: null; reason: string } | { kind: 'ambiguous'; id: null; ids: string[]; reason: string };

const pad = (n: number): string => String(n).padStart(2, '0');
const DAY_MS = 24 * 60 * 60 * 1000;
const STEP_MS = DAY_MS / 4;

/**
 * `YYYY/MM/DD` folders that may hold sessions started between `since` and `until`. codex names folders
 * by local time; a day either side, in both local and UTC calendars, covers any time zone confusion.
 */
export function dayFolders(since: Date, until: Date): string[] {
  const out = new Set<string>();
  const end = until.getTime() + DAY_MS;
  for (let t = since.getTime() - DAY_MS; ; t += STEP_MS) {
    const d = new Date(Math.min(t, end));
    out.add(`${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())}`);
    out.add(`${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}`);
    if (t >= end) break;
  }
  return [...out].sort();
}

function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function dateOf(v: unknown): Date | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t);
}

const UUID_IN_NAME = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * Line 1 of `rollout-<ts>-<uuid>.jsonl`: `{"timestamp","type":"session_meta","payload":{"id","cwd","timestamp",...}}`.
 * Older files put the fields at the top level. Extra fields are ignored; null when it is not a session head.
 */
export function parseRolloutHead(line: string, file: string): RolloutHead | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const top = record(value);
  if (!top) return null;
  if (top.type !== undefined && top.type !== 'session_meta') return null;
  const meta = record(top.payload) ?? top;
  const id = typeof meta.id === 'string' && meta.id !== '' ? meta.id : (UUID_IN_NAME.exec(file)?.[1] ?? null);
  if (!id) return null;
  const cwd = typeof meta.cwd === 'string' ? meta.cwd : null;
  return { id, cwd, startedAt: dateOf(meta.timestamp) ?? dateOf(top.timestamp), file };
}

export interface PickQuery {
  /** Accepted spellings of the working folder (as given, resolved, real path). */
  cwds: ReadonlySet<string>;
  since: Date;
  until: Date;
  exclude: ReadonlySet<string>;
  /** Whose sessions, for messages (default `codex`). */
  cli?: string;
}

export function pickSession(heads: readonly RolloutHead[], q: PickQuery): DiscoveryResult {
  const cli = q.cli ?? 'codex';
  const byId = new Map<string, RolloutHead>();
  for (const h of heads) {
    if (q.exclude.has(h.id) || h.cwd === null || !q.cwds.has(h.cwd) || !h.startedAt) continue;
    const t = h.startedAt.getTime();
    if (t < q.since.getTime() || t > q.until.getTime()) continue;
    byId.set(h.id, h);
  }
  const where = `in ${[...q.cwds][0] ?? '?'} between ${q.since.toISOString()} and ${q.until.toISOString()}`;
  const found = [...byId.values()];
  if (found.length === 1) return { kind: 'found', id: found[0]!.id, file: found[0]!.file };
  if (found.length === 0) {
    return { kind: 'none', id: null, reason: `no new ${cli} session ${where} (of ${heads.length} ${cli === 'codex' ? 'rollout files' : 'sessions'} scanned)` };
  }
  const ids = found.map((h) => h.id).sort();
  return { kind: 'ambiguous', id: null, ids, reason: `${ids.length} new ${cli} sessions ${where}: ${ids.join(', ')}; not guessing` };
}

export interface ListedSession {
  index: number;
  title: string;
  when: string | null;
  id: string;
}

const LISTED = /^\s*(\d+)\.\s+(.*?)(?:\s+\(([^()]*)\))?\s+\[([0-9a-fA-F][0-9a-fA-F-]{7,})\]\s*$/;

/** Lines `N. <title> (<when>) [<uuid>]` of `gemini --list-sessions`; other lines are ignored. */
export function parseListedSessions(text: string): ListedSession[] {
  const out: ListedSession[] = [];
  for (const raw of text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split(/\r?\n/)) {
    const m = LISTED.exec(raw);
    if (m) out.push({ index: Number(m[1]), title: m[2] ?? '', when: m[3] ?? null, id: m[4]! });
  }
  return out;
}

/** Session ids listed in `after` but not in `before`, in listing order. */
export function diffListedSessions(before: string, after: string): string[] {
  const old = new Set(parseListedSessions(before).map((s) => s.id));
  const fresh = new Set<string>();
  for (const { id } of parseListedSessions(after)) if (!old.has(id)) fresh.add(id);
  return [...fresh];
}

/**
 * `opencode session list --format json`: `[{"id","title","updated","created","projectId","directory"}]`
 * (times in ms), as seen in 1.18.33. Entries without an id, a folder or a time are skipped; anything
 * that is not such a list throws, naming what came instead.
 */
export function parseOpencodeSessionList(text: string): RolloutHead[] {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '[]' : text);
  } catch (e) {
    throw new Error(`opencode session list: not JSON (${(e as Error).message}): ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (!Array.isArray(value)) throw new Error(`opencode session list: expected a JSON array, got ${JSON.stringify(text.slice(0, 200))}`);
  const out: RolloutHead[] = [];
  for (const v of value) {
    const e = record(v);
    if (!e || typeof e.id !== 'string' || e.id === '' || typeof e.directory !== 'string') continue;
    const created = typeof e.created === 'number' ? new Date(e.created) : dateOf(e.created);
    if (!created || Number.isNaN(created.getTime())) continue;
    out.push({ id: e.id, cwd: e.directory, startedAt: created, file: '' });
  }
  return out;
}
