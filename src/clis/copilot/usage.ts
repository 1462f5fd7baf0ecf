// Token usage in GitHub Copilot CLI's session events (`~/.copilot/session-state/<session id>/events.jsonl`),
// as seen in 1.0.102 (test/fixtures/usage/copilot-1.0.102-two-turns.jsonl). Not a documented contract.
// Each model call writes a `session.usage_record` event whose `data.usage` has `model`, `inputTokens`
// (the cached part included), `outputTokens`, `cacheReadTokens` and `cacheWriteTokens`; an event counts
// once by its `id`. jaggers' `input` is inputTokens less cacheReadTokens. ccusage does not read copilot.
import { count } from '../../usage/tokens.js';
import type { Fold } from '../shared/jsonl-follow.js';
import { usageOfFiles } from '../shared/usage-files.js';
import { addRecord, newUsageState, objectOf, type UsageState } from '../shared/usage-fold.js';
import type { UsageReader } from '../types.js';
import { copilotTranscriptFile } from './transcript.js';

interface CopilotUsageState extends UsageState {
  seen: Set<string>;
}

export const copilotUsageFold: Fold<CopilotUsageState> = {
  init: () => ({ ...newUsageState(), seen: new Set() }),
  marks: ['"session.usage_record"'],
  line(s, o) {
    const u = o.type === 'session.usage_record' ? objectOf(objectOf(o.data)?.usage) : null;
    if (!u) return;
    if (typeof o.id === 'string') {
      if (s.seen.has(o.id)) return;
      s.seen.add(o.id);
    }
    const cacheRead = count(u.cacheReadTokens);
    const model = typeof u.model === 'string' && u.model !== '' ? u.model : 'unknown';
    addRecord(s, model, {
      input: Math.max(0, count(u.inputTokens) - cacheRead),
      output: count(u.outputTokens),
      cacheRead,
      cacheWrite: count(u.cacheWriteTokens),
    });
  },
};

export const copilotUsage: UsageReader = async (q) => usageOfFiles([copilotTranscriptFile(q.home, q.sessionId)], 'copilot-usage', copilotUsageFold);
