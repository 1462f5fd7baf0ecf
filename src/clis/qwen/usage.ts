// Token usage in Qwen Code's chat recording (`~/.qwen/projects/<cwd as name>/chats/<session id>.jsonl`),
// as seen in 0.24.4 (test/fixtures/usage/qwen-0.24.4-two-turns.jsonl). Not a documented contract. Each
// `assistant` entry (one model answer) carries `usageMetadata` {promptTokenCount, candidatesTokenCount,
// thoughtsTokenCount, cachedContentTokenCount} and `model`; an entry counts once by its `uuid`. qwen fills
// these from the OpenAI-style answer: the prompt count includes the cached part, and the candidates count
// is the whole completion (its reasoning included, which thoughtsTokenCount repeats): jaggers' `input` is
// prompt less cached, `output` the candidates count, `cacheRead` the cached part. ccusage does not read qwen.
import { count } from '../../usage/tokens.js';
import type { Fold } from '../shared/jsonl-follow.js';
import { usageOfFiles } from '../shared/usage-files.js';
import { addRecord, newUsageState, objectOf, type UsageState } from '../shared/usage-fold.js';
import type { UsageReader } from '../types.js';
import { qwenTranscriptFile } from './transcript.js';

interface QwenUsageState extends UsageState {
  seen: Set<string>;
}

export const qwenUsageFold: Fold<QwenUsageState> = {
  init: () => ({ ...newUsageState(), seen: new Set() }),
  marks: ['"usageMetadata"'],
  line(s, o) {
    const u = objectOf(o.usageMetadata);
    if (o.type !== 'assistant' || !u) return;
    if (typeof o.uuid === 'string') {
      if (s.seen.has(o.uuid)) return;
      s.seen.add(o.uuid);
    }
    const cached = count(u.cachedContentTokenCount);
    const model = typeof o.model === 'string' && o.model !== '' ? o.model : 'unknown';
    addRecord(
      s,
      model,
      { input: Math.max(0, count(u.promptTokenCount) - cached), output: count(u.candidatesTokenCount), cacheRead: cached, cacheWrite: 0 },
      o.timestamp,
    );
  },
};

export const qwenUsage: UsageReader = async (q) => usageOfFiles([qwenTranscriptFile(q.home, q.cwd, q.sessionId)], 'qwen-usage', qwenUsageFold);
