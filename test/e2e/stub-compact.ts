// A CLI's own compaction, as the stub model server sees it: the summarise request each CLI makes when
// its compaction command runs (`/compact`, `/compress`), and the answer a real model gives it: a summary
// in the shape the request asks for, with a prompt as large as the conversation it was sent.
//
// The requests, as the pinned CLIs make them (test/e2e/compact-real.test.ts):
// - claude 2.1.330 `/compact`: a streamed Messages request with its tools, the conversation and a last
//   user text `CRITICAL: Respond with TEXT ONLY. ... create a detailed summary of the conversation so far`;
//   the answer is an `<analysis>` block and a `<summary>` block.
// - codex 0.169.0 `/compact`: a Responses request without tools whose last user text starts `You are
//   performing a CONTEXT CHECKPOINT COMPACTION`; the answer is the summary itself.
// - gemini 0.61.0 `/compress`: two non-streamed generateContent calls, `Generate a new <state_snapshot>
//   based on the provided history` and then `Critically evaluate the <state_snapshot> you just generated`;
//   each answer is a `<state_snapshot>`.
// - qwen 0.24.4 `/compress`: chat completions, `First, reason in your <analysis> block. Then, produce the
//   <state_snapshot> XML.` (and a side request `You are the component that summarizes a conversation`).
// - opencode 1.18.33 `/compact`: a streamed chat completion without tools, system `You are a context
//   summarization agent`, user `Here is the conversation so far: <conversation>...`.

import type { RecordedRequest } from './stub-requests.js';
import type { Reply } from './stub-wire.js';

/** The words that make a request a CLI's summarise request (its newest user text). */
const MARKERS: RegExp[] = [
  /create a detailed summary of the conversation so far/, // claude
  /^You are performing a CONTEXT CHECKPOINT COMPACTION/, // codex
  /<state_snapshot>/, // gemini, qwen
  /^You are the component that summarizes a conversation/, // qwen
  /^Here is the conversation so far:\s*<conversation>/, // opencode
];

/** Whether `lastUserText` is a CLI's summarise request. */
export function isCompaction(lastUserText: string | undefined): boolean {
  return lastUserText !== undefined && MARKERS.some((m) => m.test(lastUserText));
}

/** What the stub's summaries say: what the CLI keeps of the conversation. */
export const STUB_SUMMARY = 'stub summary: the user asked for a long answer, then for a second job; both were answered.';

type Json = Record<string, unknown>;
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** The conversation a request carries (no system prompt, no tool schemas), as JSON. */
export function conversationOf(req: RecordedRequest): string {
  const b = (req.body ?? {}) as Json;
  switch (req.api) {
    case 'anthropic':
      return JSON.stringify(arr(b.messages));
    case 'openai-chat':
      return JSON.stringify(arr(b.messages).filter((m) => m.role !== 'system'));
    case 'openai-responses':
      return JSON.stringify(arr(b.input).filter((m) => m.role !== 'developer' && m.role !== 'system'));
    case 'gemini':
      return JSON.stringify(arr(b.contents));
    default:
      return '';
  }
}

/** A prompt's tokens as a model would count them, roughly: its conversation's characters / 4. */
export const promptTokensOf = (req: RecordedRequest): number => Math.ceil(conversationOf(req).length / 4);

/** The answer to a summarise request: the summary in the shape it asks for. */
export function compactionReply(req: RecordedRequest): Reply {
  const asked = req.lastUserText ?? '';
  const text = /<state_snapshot>/.test(asked)
    ? `${/<analysis>/.test(asked) ? '<analysis>stub analysis</analysis>\n' : ''}<state_snapshot>\n${STUB_SUMMARY}\n</state_snapshot>`
    : /<summary>/.test(asked)
      ? `<analysis>stub analysis</analysis>\n\n<summary>\n${STUB_SUMMARY}\n</summary>`
      : STUB_SUMMARY;
  return { kind: 'text', text, usage: { input: promptTokensOf(req), output: Math.ceil(text.length / 4) } };
}
