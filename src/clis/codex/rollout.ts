// codex's rollout files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`): which day folders
// to scan and what a file's first line says. Pure.
import { dateOf, record, type RolloutHead } from '../shared/pick-session.js';

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
