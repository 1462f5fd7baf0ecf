// Claude Code's transcript (`~/.claude/projects/<cwd as dashes>/<session>.jsonl`), one entry a line,
// read defensively: claude appends to the file while jaggers reads it (the last line can be torn),
// and its entry types change between versions. Only the fields the reply walk needs are checked; a
// field of an unexpected shape is dropped, not the entry; a line that is not a JSON object with a
// `type` is skipped and reported by its number.

import { z } from 'zod';

/** An optional field that is left out, rather than failing the entry, when its value has another shape. */
const opt = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

const blockSchema = z.object({
  type: z.string(),
  text: opt(z.string()),
  id: opt(z.string()),
  tool_use_id: opt(z.string()),
});

const entrySchema = z.object({
  type: z.string(),
  uuid: opt(z.string().min(1)),
  parentUuid: opt(z.string().min(1).nullable()),
  isSidechain: opt(z.boolean()),
  isMeta: opt(z.boolean()),
  isCompactSummary: opt(z.boolean()),
  subtype: opt(z.string()),
  timestamp: opt(z.string()),
  leafUuid: opt(z.string()),
  message: opt(
    z.object({
      id: opt(z.string()),
      stop_reason: opt(z.string().nullable()),
      content: opt(z.union([z.string(), z.array(z.unknown())])),
    }),
  ),
  attachment: opt(z.object({ type: opt(z.string()), prompt: opt(z.string()) })),
});

export interface ClaudeEntry {
  /** 0-based line of the file. */
  line: number;
  type: string;
  /** Entries without one (`ai-title`, `mode`, `last-prompt`, `file-history-snapshot`...) are not in the tree. */
  uuid: string | null;
  parentUuid: string | null;
  /** A subagent's entry: not part of the main conversation. */
  sidechain: boolean;
  /** Text claude injected, not typed by anyone. */
  meta: boolean;
  compactSummary: boolean;
  subtype: string | null;
  timestamp: string | null;
  /** The API message an assistant entry belongs to: claude writes one entry per content block. */
  messageId: string | null;
  stopReason: string | null;
  /** The text blocks of the message (a string content is one block). */
  texts: string[];
  /** Ids of the tool_use blocks (assistant) and of the calls the tool_result blocks answer (user). */
  toolUses: string[];
  toolResults: string[];
  /** A prompt typed while claude was busy, handed to the running turn as a `queued_command` attachment. */
  queuedPrompt: string | null;
  /** `last-prompt` entries: the conversation's leaf when claude wrote it. */
  leafUuid: string | null;
}

export interface ParsedTranscript {
  entries: ClaudeEntry[];
  /** Lines that were not an entry (a torn last line while claude writes, or anything else unreadable). */
  unreadable: number[];
}

function blocksOf(content: string | unknown[] | undefined): z.infer<typeof blockSchema>[] {
  if (content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.flatMap((b) => {
    const r = blockSchema.safeParse(b);
    return r.success ? [r.data] : [];
  });
}

function toEntry(raw: z.infer<typeof entrySchema>, line: number): ClaudeEntry {
  const blocks = blocksOf(raw.message?.content);
  const ids = (type: string, key: 'id' | 'tool_use_id') => blocks.filter((b) => b.type === type && b[key] !== undefined).map((b) => b[key]!);
  return {
    line,
    type: raw.type,
    uuid: raw.uuid ?? null,
    parentUuid: raw.parentUuid ?? null,
    sidechain: raw.isSidechain === true,
    meta: raw.isMeta === true,
    compactSummary: raw.isCompactSummary === true,
    subtype: raw.subtype ?? null,
    timestamp: raw.timestamp ?? null,
    messageId: raw.message?.id ?? null,
    stopReason: raw.message?.stop_reason ?? null,
    texts: blocks.filter((b) => b.type === 'text' && b.text !== undefined).map((b) => b.text!),
    toolUses: ids('tool_use', 'id'),
    toolResults: ids('tool_result', 'tool_use_id'),
    queuedPrompt: raw.attachment?.type === 'queued_command' ? (raw.attachment.prompt ?? null) : null,
    leafUuid: raw.leafUuid ?? null,
  };
}

export function parseClaudeTranscript(text: string): ParsedTranscript {
  const entries: ClaudeEntry[] = [];
  const unreadable: number[] = [];
  text.split('\n').forEach((l, line) => {
    if (l.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(l);
    } catch {
      unreadable.push(line);
      return;
    }
    const r = entrySchema.safeParse(json);
    if (r.success) entries.push(toEntry(r.data, line));
    else unreadable.push(line);
  });
  return { entries, unreadable };
}
