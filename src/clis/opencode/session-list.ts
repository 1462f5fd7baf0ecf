// `opencode session list --format json`, read. Pure.
import { dateOf, record, type RolloutHead } from '../shared/pick-session.js';

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
