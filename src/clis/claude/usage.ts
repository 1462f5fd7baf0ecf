// Token usage in Claude Code's transcript: every entry with `message.usage` is one API answer's usage,
// counted by ccusage's rules (ccusage 18.0.11, `apps/ccusage/src/data-loader.ts`), so that jaggers and
// ccusage agree to the token on the same files:
// - an entry counts when it has an ISO `timestamp` (`2026-11-26T12:44:35.462Z`, milliseconds optional)
//   and `message.usage.input_tokens` and `output_tokens` are numbers; the cache fields are optional
//   numbers; an optional field of the wrong shape (`version` not `x.y.z`, `requestId` empty or null,
//   `message.content` not an array of objects...) rejects the entry, as ccusage's schema does;
// - claude writes one entry per content block of an answer, each with the answer's usage: an entry whose
//   `message.id` and `requestId` were both seen before is the same answer and not counted again (without
//   both, it always counts);
// - the model is `message.model`, with `-fast` added for `usage.speed: "fast"`; `unknown` when absent.
// Every entry counts, whatever its type or place in the conversation tree (subagents' too).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { count, type Tokens } from '../../usage/tokens.js';
import type { Fold } from '../shared/jsonl-follow.js';
import { usageOfFiles } from '../shared/usage-files.js';
import { addRecord, isNumber, newUsageState, objectOf, type UsageState } from '../shared/usage-fold.js';
import type { UsageReader } from '../types.js';
import { claudeTranscriptFile } from './transcript.js';

interface ClaudeUsageState extends UsageState {
  seen: Set<string>;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;
const VERSION = /^\d+\.\d+\.\d+/;

const optString = (v: unknown, min = 0): boolean => v === undefined || (typeof v === 'string' && v.length >= min);
const optNumber = (v: unknown): boolean => v === undefined || isNumber(v);

/** The answer's usage when `o` is an entry ccusage counts, else null; `key` for the dedupe. */
export function claudeUsageOf(o: Record<string, unknown>): { tokens: Tokens; model: string; key: string | null } | null {
  if (typeof o.timestamp !== 'string' || !ISO.test(o.timestamp)) return null;
  if (!optString(o.cwd) || !optString(o.sessionId, 1) || !optString(o.requestId, 1)) return null;
  if (o.version !== undefined && (typeof o.version !== 'string' || !VERSION.test(o.version))) return null;
  if (o.isApiErrorMessage !== undefined && typeof o.isApiErrorMessage !== 'boolean') return null;
  if (!optNumber(o.costUSD)) return null;
  const m = objectOf(o.message);
  const u = m && objectOf(m.usage);
  if (!m || !u || !isNumber(u.input_tokens) || !isNumber(u.output_tokens)) return null;
  if (!optNumber(u.cache_creation_input_tokens) || !optNumber(u.cache_read_input_tokens)) return null;
  if (u.speed !== undefined && u.speed !== 'standard' && u.speed !== 'fast') return null;
  if (!optString(m.model, 1) || !optString(m.id, 1)) return null;
  if (m.content !== undefined) {
    if (!Array.isArray(m.content)) return null;
    for (const c of m.content as unknown[]) {
      const b = objectOf(c);
      if (!b || !optString(b.text)) return null;
    }
  }
  const model = typeof m.model === 'string' ? (u.speed === 'fast' ? `${m.model}-fast` : m.model) : 'unknown';
  const key = typeof m.id === 'string' && typeof o.requestId === 'string' ? `${m.id}:${o.requestId}` : null;
  return {
    model,
    key,
    tokens: { input: u.input_tokens, output: u.output_tokens, cacheRead: count(u.cache_read_input_tokens), cacheWrite: count(u.cache_creation_input_tokens) },
  };
}

export const claudeUsageFold: Fold<ClaudeUsageState> = {
  init: () => ({ ...newUsageState(), seen: new Set() }),
  marks: ['"usage"'],
  line(s, o) {
    const r = claudeUsageOf(o);
    if (!r) return;
    if (r.key !== null) {
      if (s.seen.has(r.key)) return;
      s.seen.add(r.key);
    }
    addRecord(s, r.model, r.tokens, o.timestamp);
  },
};

/**
 * The session's transcript, and its subagents' (`<session>/subagents/*.jsonl`, which ccusage counts too).
 * Listed synchronously, as the files are read (../shared/jsonl-follow.ts): one system call, no round trip
 * through the thread pool in a turn's reading.
 */
function claudeUsageFiles(home: string, cwd: string, sessionId: string): string[] {
  const main = claudeTranscriptFile(home, cwd, sessionId);
  const sub = path.join(path.dirname(main), sessionId, 'subagents');
  let names: string[] = [];
  try {
    names = readdirSync(sub);
  } catch {
    // no subagents
  }
  return [main, ...names.filter((n) => n.endsWith('.jsonl')).map((n) => path.join(sub, n))];
}

export const claudeUsage: UsageReader = async (q) => usageOfFiles(claudeUsageFiles(q.home, q.cwd, q.sessionId), 'claude-usage', claudeUsageFold);
