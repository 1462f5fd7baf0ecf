// Token usage in codex's rollout file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`), counted
// by ccusage's codex rules (@ccusage/codex 18.0.11, `loadTokenUsageEvents`) so that the two agree to the token:
// - `{"type":"event_msg","payload":{"type":"token_count","info":{...}}}` lines with a `timestamp` count:
//   `info.last_token_usage` is one answer's usage; without it, `info.total_token_usage` less the total
//   before it; a count that is not a finite number is 0; an answer of all zeros is left out;
// - codex's `input_tokens` includes the cached part (`cached_input_tokens`, at most the input): jaggers'
//   `input` is the rest, `cacheRead` the cached part; codex reports no cache writes ccusage counts;
// - the model is the token_count's own (`info.model`, `info.model_name`, `info.metadata.model`, then the
//   payload's `model` or `metadata.model`), else the last `turn_context`'s, else `gpt-5` (ccusage's
//   fallback for old sessions).
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { count } from '../../usage/tokens.js';
import type { Fold } from '../shared/jsonl-follow.js';
import { usageOfFiles } from '../shared/usage-files.js';
import { addRecord, newUsageState, objectOf, type UsageState } from '../shared/usage-fold.js';
import type { UsageReader } from '../types.js';

interface Raw {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

interface CodexUsageState extends UsageState {
  previous: Raw | null;
  model: string | null;
}

const FALLBACK_MODEL = 'gpt-5';

function rawOf(v: unknown): Raw | null {
  const o = objectOf(v);
  if (!o) return null;
  return {
    input: count(o.input_tokens),
    cached: count(o.cached_input_tokens ?? o.cache_read_input_tokens),
    output: count(o.output_tokens),
    reasoning: count(o.reasoning_output_tokens),
  };
}

const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** ccusage's `extractModel`: the info's model first, then the payload's. */
function modelOf(payload: Record<string, unknown>): string | null {
  const info = objectOf(payload.info);
  if (info) {
    const m = nonEmpty(info.model) ?? nonEmpty(info.model_name) ?? nonEmpty(objectOf(info.metadata)?.model);
    if (m) return m;
  }
  return nonEmpty(payload.model) ?? nonEmpty(objectOf(payload.metadata)?.model);
}

export const codexUsageFold: Fold<CodexUsageState> = {
  init: () => ({ ...newUsageState(), previous: null, model: null }),
  marks: ['"token_count"', '"turn_context"'],
  line(s, o) {
    if (typeof o.type !== 'string' || (o.timestamp !== undefined && typeof o.timestamp !== 'string')) return;
    const payload = objectOf(o.payload);
    if (o.type === 'turn_context') {
      const m = payload && modelOf(payload);
      if (m) s.model = m;
      return;
    }
    if (o.type !== 'event_msg' || !payload || payload.type !== 'token_count') return;
    if (payload.info !== undefined && !objectOf(payload.info)) return;
    if (o.timestamp === undefined) return;
    const info = objectOf(payload.info);
    const last = rawOf(info?.last_token_usage);
    const total = rawOf(info?.total_token_usage);
    let raw = last;
    if (!raw && total) {
      const p = s.previous;
      raw = {
        input: Math.max(total.input - (p?.input ?? 0), 0),
        cached: Math.max(total.cached - (p?.cached ?? 0), 0),
        output: Math.max(total.output - (p?.output ?? 0), 0),
        reasoning: Math.max(total.reasoning - (p?.reasoning ?? 0), 0),
      };
    }
    if (total) s.previous = total;
    if (!raw) return;
    const cached = Math.min(raw.cached, raw.input);
    if (raw.input === 0 && cached === 0 && raw.output === 0 && raw.reasoning === 0) return;
    const own = modelOf(payload);
    if (own) s.model = own;
    const model = own ?? s.model ?? FALLBACK_MODEL;
    s.model = model;
    addRecord(s, model, { input: raw.input - cached, output: raw.output, cacheRead: cached, cacheWrite: 0 }, o.timestamp);
  },
};

/** Rollout files kept by session id: found once by a walk of the day folders, newest first. */
const found = new Map<string, string>();

async function names(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort().reverse();
}

export async function findRollout(codexHome: string, sessionId: string): Promise<string | null> {
  const key = `${codexHome}\u0000${sessionId}`;
  const known = found.get(key);
  if (known) return known;
  const root = path.join(codexHome, 'sessions');
  const suffix = `-${sessionId}.jsonl`;
  for (const y of await names(root)) {
    for (const m of await names(path.join(root, y))) {
      for (const d of await names(path.join(root, y, m))) {
        const hit = (await names(path.join(root, y, m, d))).find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
        if (hit) {
          const file = path.join(root, y, m, d, hit);
          if (found.size > 256) found.clear();
          found.set(key, file);
          return file;
        }
      }
    }
  }
  return null;
}

export const codexUsage: UsageReader = async (q) => {
  const file = await findRollout(q.env.CODEX_HOME || path.join(q.home, '.codex'), q.sessionId);
  return file ? usageOfFiles([file], 'codex-usage', codexUsageFold) : null;
};
