// The reply to one prompt in Claude Code's transcript, found by walking the entries' links.
//
// The transcript is a tree: every message entry names its parent (`uuid`/`parentUuid`), and the file's
// line order is not the conversation's. claude 2.1.197 writes the file in batches: metadata entries
// (`ai-title`, `last-prompt`, `mode`, `permission-mode`) go to the top, and when the answer comes
// quickly the assistant entry and its `turn_duration` stand above the user prompt they answer (seen in
// 5 of 6 fresh sessions with a reply in under 100 ms). So the prompt is found by its nonce tag, and
// the reply is what descends from it, in tree order, up to the next prompt a person gave.
//
// When the turn is finished, from real 2.1.197 transcripts (test/fixtures/transcripts):
// - `turn-duration`: the TUI ends every turn that ran to its end (a plain answer, or an answer after
//   tool calls) with a `system` entry of subtype `turn_duration`, after the turn's last entry. This is
//   the evidence for jaggers' panes. The final assistant entry's `stop_reason: end_turn` alone is not
//   used: it is written a moment before, and a turn can go on after it (a queued prompt or a hook).
// - `interrupted`: Esc writes the partial answer (a `<synthetic>` assistant entry) and a user entry
//   `[Request interrupted by user]`, and no `turn_duration`.
// - `next-prompt`: a later prompt (typed, or a prompt queued while claude was busy, which arrives in
//   the running turn as a `queued_command` attachment) descends from this one: this prompt's part is over.
// - `headless-leaf`: `claude -p` writes no `turn_duration`; it ends with a `last-prompt` entry whose
//   `leafUuid` is the turn's final assistant entry (`stop_reason: end_turn`).
// A tool call without its tool_result (the call still runs, or waits for approval) means the turn is
// not finished, whatever else is there, unless it was interrupted.

import path from 'node:path';
import { parseClaudeTranscript, type ClaudeEntry } from './entries.js';

export type TurnEnd = 'turn-duration' | 'interrupted' | 'next-prompt' | 'headless-leaf';

export interface ClaudeReply {
  /** The assistant text of the turn, its blocks separated by a blank line. */
  text: string;
  finished: boolean;
  /** The evidence that the turn is finished; null while it is not. */
  end: TurnEnd | null;
}

/** claude names the project folder after the cwd with every character but letters and digits as '-'. */
export function claudeTranscriptFile(home: string, cwd: string, sessionId: string): string {
  return path.join(home, '.claude', 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
}

const INTERRUPTED = '[Request interrupted by user';

const isInterruption = (e: ClaudeEntry) => e.type === 'user' && e.texts.some((t) => t.startsWith(INTERRUPTED));

/** The words of a prompt a person gave (typed, or queued while busy); null for every other entry. */
export function promptText(e: ClaudeEntry): string | null {
  if (e.sidechain || e.uuid === null) return null;
  if (e.type === 'attachment') return e.queuedPrompt;
  if (e.type !== 'user' || e.meta || e.compactSummary || e.toolResults.length > 0 || isInterruption(e)) return null;
  const text = e.texts.join('\n');
  return text.trim() === '' ? null : text;
}

/** Siblings by time, then by line (a fork, or parallel tool calls; a plain turn is a chain). */
function byTime(a: ClaudeEntry, b: ClaudeEntry): number {
  if (a.timestamp !== null && b.timestamp !== null && a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? -1 : 1;
  return a.line - b.line;
}

/** The entry carrying `tag` in a prompt; the newest if it was given twice. */
function findPrompt(entries: readonly ClaudeEntry[], tag: string): ClaudeEntry | undefined {
  return entries
    .filter((e) => promptText(e)?.includes(tag))
    .sort(byTime)
    .at(-1);
}

/** The reply to the prompt that carried `tag` (e.g. `[jg:1a2b]`); null if no prompt carries it (yet). */
export function replyInTranscript(entries: readonly ClaudeEntry[], tag: string): ClaudeReply | null {
  const prompt = findPrompt(entries, tag);
  if (prompt === undefined) return null;
  const children = new Map<string, ClaudeEntry[]>();
  const byUuid = new Map<string, ClaudeEntry>();
  for (const e of entries) {
    if (e.uuid === null || e.sidechain || byUuid.has(e.uuid)) continue;
    byUuid.set(e.uuid, e);
    if (e.parentUuid === null) continue;
    const siblings = children.get(e.parentUuid);
    if (siblings) siblings.push(e);
    else children.set(e.parentUuid, [e]);
  }

  const pieces: string[] = [];
  const seen = new Set<string>();
  const pending = new Set<string>();
  const reached = new Set<string>();
  let turnDuration = false;
  let interrupted = false;
  let nextPrompt = false;
  // Depth first, in tree order; a stack, not recursion: a long session is one deep chain. Each entry has
  // one parent, so a link loop below the prompt runs through the prompt, where the walk stops.
  const stack = [...(children.get(prompt.uuid!) ?? [])].sort(byTime).reverse();
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (promptText(e) !== null) {
      nextPrompt = true;
      continue;
    }
    reached.add(e.uuid!);
    if (e.type === 'assistant') {
      for (const t of e.texts) {
        // One API message can be written as several entries; keep each of its texts once.
        const key = `${e.messageId ?? e.uuid}\u0000${t}`;
        if (t.trim() !== '' && !seen.has(key)) pieces.push(t.trim());
        seen.add(key);
      }
      for (const id of e.toolUses) pending.add(id);
    } else if (e.type === 'user') {
      for (const id of e.toolResults) pending.delete(id);
      if (isInterruption(e)) interrupted = true;
    } else if (e.type === 'system' && e.subtype === 'turn_duration') turnDuration = true;
    // One at a time: a prompt with a hundred thousand answers is more than a call's arguments.
    for (const c of [...(children.get(e.uuid!) ?? [])].sort(byTime).reverse()) stack.push(c);
  }

  const headlessLeaf = entries.some((e) => {
    if (e.type !== 'last-prompt' || e.leafUuid === null || !reached.has(e.leafUuid)) return false;
    const leaf = byUuid.get(e.leafUuid);
    return leaf?.type === 'assistant' && leaf.stopReason === 'end_turn';
  });
  const end = turnEnd({ interrupted, pending: pending.size, turnDuration, nextPrompt, headlessLeaf });
  return { text: pieces.join('\n\n'), finished: end !== null, end };
}

/** The evidence that the turn is over, in the order of the header's list; a running tool call blocks all but an interruption. */
function turnEnd(s: { interrupted: boolean; pending: number; turnDuration: boolean; nextPrompt: boolean; headlessLeaf: boolean }): TurnEnd | null {
  if (s.interrupted) return 'interrupted';
  if (s.pending > 0) return null;
  if (s.turnDuration) return 'turn-duration';
  if (s.nextPrompt) return 'next-prompt';
  if (s.headlessLeaf) return 'headless-leaf';
  return null;
}

/** Parses the transcript's text and finds the reply to the prompt that carried `tag`. */
export function claudeReply(jsonl: string, tag: string): ClaudeReply | null {
  return replyInTranscript(parseClaudeTranscript(jsonl).entries, tag);
}
