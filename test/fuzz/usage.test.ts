// Fuzz: the usage readers of src/clis/<cli>/usage.ts on lines shaped like the real records (usage fields of
// any JSON type, model names every object has, ids seen twice), torn lines and noise. A fold never throws,
// never stalls, and its sums are what the journal takes once recorded (src/work/usage.ts): whole,
// non-negative counts under model names that are own keys.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claudeUsageFold } from '../../src/clis/claude/usage.js';
import { codexUsageFold } from '../../src/clis/codex/usage.js';
import { copilotUsageFold } from '../../src/clis/copilot/usage.js';
import { geminiUsageFold } from '../../src/clis/gemini/usage.js';
import { qwenUsageFold } from '../../src/clis/qwen/usage.js';
import { foldText, type Fold } from '../../src/clis/shared/jsonl-follow.js';
import { byModelSchema } from '../../src/sessions/token-schema.js';
import { addInto, wholeCounts, type ByModel } from '../../src/usage/tokens.js';
import { fuzz, STALL_BOUND_MS } from '../helpers/fuzz.js';

const OBJECT_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const any = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, any);
const n = fc.oneof(fc.integer({ min: -10, max: 1e9 }), fc.double(), fc.constant(1e308), any);
const model = fc.constantFrom('claude-sonnet-4-5', 'gpt-5', '', ...OBJECT_NAMES);
const id = fc.constantFrom('a', 'b', ...OBJECT_NAMES);
const time = fc.oneof(
  fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()),
  fc.string({ maxLength: 10 }),
);
const rec = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) => fc.record(fields, { requiredKeys: [] });

const claudeLine = rec({
  type: fc.constantFrom('assistant', 'user', ...OBJECT_NAMES),
  timestamp: time,
  requestId: maybe(id),
  version: fc.constantFrom('2.1.330', 'dev'),
  message: maybe(
    rec({
      id: maybe(id),
      model: maybe(model),
      usage: maybe(rec({ input_tokens: n, output_tokens: n, cache_read_input_tokens: n, speed: fc.constantFrom('fast', 'x') })),
    }),
  ),
});
const codexLine = rec({
  type: fc.constantFrom('event_msg', 'turn_context', ...OBJECT_NAMES),
  timestamp: maybe(time),
  payload: maybe(
    rec({
      type: fc.constantFrom('token_count', 'other'),
      model: maybe(model),
      info: maybe(
        rec({
          model: maybe(model),
          last_token_usage: maybe(rec({ input_tokens: n, cached_input_tokens: n, output_tokens: n })),
          total_token_usage: maybe(rec({ input_tokens: n, output_tokens: n })),
        }),
      ),
    }),
  ),
});
const geminiMessage = rec({
  id,
  type: fc.constantFrom('gemini', 'user'),
  model: maybe(model),
  tokens: maybe(rec({ input: n, output: n, cached: n, thoughts: n, tool: n })),
});
const geminiLine = fc.oneof(
  geminiMessage,
  rec({ $set: maybe(rec({ messages: maybe(fc.array(maybe(geminiMessage), { maxLength: 3 })) })) }),
  rec({ sessionId: maybe(id) }),
);
const qwenLine = rec({
  type: fc.constantFrom('assistant', 'user'),
  uuid: maybe(id),
  model: maybe(model),
  usageMetadata: maybe(rec({ promptTokenCount: n, candidatesTokenCount: n, cachedContentTokenCount: n })),
});
const copilotLine = rec({
  type: fc.constantFrom('session.usage_record', 'other'),
  id: maybe(id),
  data: maybe(rec({ usage: maybe(rec({ model: maybe(model), inputTokens: n, outputTokens: n, cacheReadTokens: n, cacheWriteTokens: n })) })),
});

/** Lines as a CLI writes them, with torn ones and noise among them. */
const jsonl = (line: fc.Arbitrary<unknown>) =>
  fc
    .array(
      fc.oneof(
        { arbitrary: line.map((l) => JSON.stringify(l)), weight: 8 },
        { arbitrary: line.map((l) => JSON.stringify(l).slice(0, 20)), weight: 1 },
        { arbitrary: fc.string({ maxLength: 30 }), weight: 1 },
      ),
      { maxLength: 30 },
    )
    .map((ls) => ls.join('\n'));

/** The fold's sums as a ByModel (gemini keeps messages by id). */
function sums(state: unknown): ByModel {
  const s = state as { byModel?: ByModel; messages?: Map<string, { model: string; tokens: ByModel[string] }> };
  if (s.byModel) return s.byModel;
  const out: ByModel = {};
  for (const m of s.messages?.values() ?? []) addInto(out, m.model, m.tokens);
  return out;
}

const CASES: [string, Fold<unknown>, fc.Arbitrary<unknown>][] = [
  ['claude usage', claudeUsageFold as Fold<unknown>, claudeLine],
  ['codex usage', codexUsageFold as Fold<unknown>, codexLine],
  ['gemini usage', geminiUsageFold as Fold<unknown>, geminiLine],
  ['qwen usage', qwenUsageFold as Fold<unknown>, qwenLine],
  ['copilot usage', copilotUsageFold as Fold<unknown>, copilotLine],
];

describe('fuzz: usage readers', () => {
  it.each(CASES)('%s: never throws or stalls; what it would record, the journal takes', async (name, fold, line) => {
    const f = await fuzz(
      name,
      jsonl(line),
      (text) => {
        const folded = foldText(fold, text);
        const recorded = wholeCounts(sums(folded.state));
        expect(Object.keys(recorded)).not.toContain('__proto__');
        expect(byModelSchema.parse(recorded)).toEqual(recorded);
      },
      { numRuns: 1500, timeLimitMs: 3000 },
    );
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });
});
