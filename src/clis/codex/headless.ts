// What `codex exec --json` prints, read.
import { jsonObjects } from '../shared/jsonl.js';

/** The session a first `codex exec --json` made: its `thread.started` event. */
export function threadIdFromJson(stdout: string): string | null {
  // Lines that are not JSON (warnings) are skipped.
  const e = jsonObjects(stdout).find((x) => x.type === 'thread.started' && typeof x.thread_id === 'string' && x.thread_id);
  return e ? (e.thread_id as string) : null;
}
