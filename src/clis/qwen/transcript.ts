// The reply to one prompt in Qwen Code's chat recording (`~/.qwen/projects/<cwd as name>/chats/<session
// id>.jsonl`), as seen in 0.24.4 (test/fixtures/transcripts/qwen-0.24.4-*.jsonl). Not a documented
// contract: every line is read defensively, and anything unexpected means "no reply here yet".
//
// Each line is an entry with a `type`: `user` (the prompt, `message.parts[].text`), `assistant` (the
// model's message, written once it has streamed: `parts[].text`, `parts[].functionCall`, thought parts
// with `thought: true`), `tool_result`, and `system` entries (telemetry, snapshots). A turn is finished
// when the last assistant entry after the prompt has text and calls no tool: a tool call means the model
// is asked again once the tool ran. Why this and not the screen: qwen 0.24.4 sometimes redraws a reply of
// several paragraphs as its first paragraph only.
import path from 'node:path';
import { jsonObjects } from '../shared/jsonl.js';

interface QwenPart {
  text?: unknown;
  thought?: unknown;
  functionCall?: unknown;
}

interface QwenEntry {
  type?: unknown;
  message?: { parts?: unknown };
}

export function qwenTranscriptFile(home: string, cwd: string, sessionId: string): string {
  return path.join(home, '.qwen', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), 'chats', `${sessionId}.jsonl`);
}

function parts(e: QwenEntry): QwenPart[] {
  const p = e.message?.parts;
  return Array.isArray(p) ? p.filter((x): x is QwenPart => typeof x === 'object' && x !== null) : [];
}

const textOf = (e: QwenEntry) =>
  parts(e)
    .filter((p) => typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text as string)
    .join('');

/** The reply to the prompt that carried `tag`; null when no prompt carries it. */
export function qwenReply(jsonl: string, tag: string): { text: string; finished: boolean } | null {
  const entries = jsonObjects(jsonl) as QwenEntry[];
  const at = entries.findLastIndex((e) => e.type === 'user' && textOf(e).includes(tag));
  if (at < 0) return null;
  const after = entries.slice(at + 1);
  const next = after.findIndex((e) => e.type === 'user' && textOf(e).trim() !== '');
  const mine = (next < 0 ? after : after.slice(0, next)).filter((e) => e.type === 'assistant');
  const last = mine.at(-1);
  if (!last) return { text: '', finished: next >= 0 };
  const text = textOf(last);
  const calls = parts(last).some((p) => p.functionCall !== undefined);
  return { text, finished: (!calls && text.trim() !== '') || next >= 0 };
}
