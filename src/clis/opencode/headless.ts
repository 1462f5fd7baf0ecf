// What `opencode run --format json` prints, read.
import { jsonObjects } from '../shared/jsonl.js';

/** One event a line of `opencode run --format json` (1.18.33): `{type, sessionID, part: {messageID, type, text}}`. */
interface OpencodeEvent {
  type?: unknown;
  sessionID?: unknown;
  part?: { messageID?: unknown; text?: unknown };
}

/**
 * What `opencode run --format json` printed: the session it ran in, and the reply, the text parts of its
 * last message that has text (a turn with a tool call has a message before the call and one after).
 */
export function opencodeRunJson(stdout: string): { sessionId: string | null; text: string } {
  let sessionId: string | null = null;
  const texts = new Map<string, string[]>();
  // Lines that are not JSON (warnings) are skipped.
  for (const e of jsonObjects(stdout) as OpencodeEvent[]) {
    if (sessionId === null && typeof e.sessionID === 'string' && e.sessionID) sessionId = e.sessionID;
    if (e.type === 'text' && typeof e.part?.text === 'string') {
      const id = typeof e.part.messageID === 'string' ? e.part.messageID : '';
      const parts = texts.get(id);
      if (parts) parts.push(e.part.text);
      else texts.set(id, [e.part.text]);
    }
  }
  return { sessionId, text: [...texts.values()].at(-1)?.join('') ?? '' };
}
