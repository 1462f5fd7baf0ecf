// The reply to one prompt in GitHub Copilot CLI's session events (`~/.copilot/session-state/<session
// id>/events.jsonl`), as seen in 1.0.102 (test/fixtures/transcripts/copilot-1.0.102-*.jsonl). Not a
// documented contract: every line is read defensively, and anything unexpected means "no reply here yet".
//
// Each line is an event `{type, data, id, timestamp, parentId}`, in the order they happened: `user.message`
// (`data.content`, the words typed), then per model call `assistant.turn_start`, `assistant.message`
// (`data.content`, the text, and `data.toolRequests`), any `tool.execution_*` and `permission.*`, and
// `assistant.turn_end`; `abort` when the user pressed Esc. A prompt's turn is finished once a message
// that calls no tool has had its `assistant.turn_end`: a tool call means the model is asked again once the
// tool ran. Why this and not the screen: copilot renders Markdown (inline code loses its backticks and
// gains spaces), and a reply longer than the screen would be cut.
import path from 'node:path';
import { jsonObjects } from '../shared/jsonl.js';

interface CopilotEvent {
  type?: unknown;
  data?: { content?: unknown; toolRequests?: unknown };
}

export function copilotTranscriptFile(home: string, sessionId: string): string {
  return path.join(home, '.copilot', 'session-state', sessionId, 'events.jsonl');
}

const contentOf = (e: CopilotEvent): string => (typeof e.data?.content === 'string' ? e.data.content : '');
const callsTools = (e: CopilotEvent): boolean => Array.isArray(e.data?.toolRequests) && e.data.toolRequests.length > 0;

/** The reply to the prompt that carried `tag`; null when no prompt carries it. */
export function copilotReply(jsonl: string, tag: string): { text: string; finished: boolean } | null {
  const events = jsonObjects(jsonl) as CopilotEvent[];
  const at = events.findLastIndex((e) => e.type === 'user.message' && contentOf(e).includes(tag));
  if (at < 0) return null;
  const after = events.slice(at + 1);
  const next = after.findIndex((e) => e.type === 'user.message');
  const mine = next < 0 ? after : after.slice(0, next);
  const cut = next >= 0 || mine.some((e) => e.type === 'abort');
  const lastAt = mine.findLastIndex((e) => e.type === 'assistant.message');
  if (lastAt < 0) return { text: '', finished: cut };
  const last = mine[lastAt]!;
  const text = contentOf(last);
  const ended = mine.slice(lastAt + 1).some((e) => e.type === 'assistant.turn_end');
  return { text, finished: (ended && !callsTools(last) && text.trim() !== '') || cut };
}
