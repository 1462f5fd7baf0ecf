// Fuzz: the API's check of a JSON body's shape before it is parsed (src/supervisor/http-edge.ts). On any
// JSON value, written compact or indented, it agrees with the value's own depth and count of keys and
// array items; on any text at all it never throws and never stalls.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonShapeProblem } from '../../src/supervisor/http-edge.js';
import { fuzz, STALL_BOUND_MS } from '../helpers/fuzz.js';

const LIMITS = { depth: 6, members: 25 };

function shape(v: unknown): { depth: number; members: number } {
  if (v === null || typeof v !== 'object') return { depth: 0, members: 0 };
  const children = Array.isArray(v) ? v : Object.values(v);
  const inner = children.map(shape);
  return { depth: 1 + Math.max(0, ...inner.map((s) => s.depth)), members: children.length + inner.reduce((n, s) => n + s.members, 0) };
}

// Strings with quotes, backslashes and brackets in them, which the scan must step over.
const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ':', ',', 'a', ' ', '\n', 'é'), maxLength: 12 });
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tricky, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 6 }),
  object: fc.dictionary(tricky, tie('value'), { maxKeys: 6 }),
})).value;

describe('fuzz: the JSON shape check', () => {
  it('agrees with the depth and the count of keys and items of any JSON value', async () => {
    const f = await fuzz(
      'JSON shape check',
      fc.tuple(json, fc.constantFrom(0, 2)),
      ([v, indent]) => {
        const text = JSON.stringify(v, null, indent);
        const s = shape(v);
        const problem = jsonShapeProblem(text, LIMITS);
        const within = s.depth <= LIMITS.depth && s.members <= LIMITS.members;
        expect(problem === null, `${text} ${JSON.stringify(s)} ${problem}`).toBe(within);
        if (problem?.startsWith('nested')) expect(s.depth).toBeGreaterThan(LIMITS.depth);
        if (problem?.startsWith('over')) expect(s.members).toBeGreaterThan(LIMITS.members);
      },
      { numRuns: 4000, timeLimitMs: 5000 },
    );
    expect(f.cases).toBeGreaterThan(500);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it('never throws or stalls on any text, long ones too', async () => {
    const f = await fuzz(
      'JSON shape check, any text',
      fc.oneof(
        fc.string({ maxLength: 500 }),
        fc.tuple(fc.constantFrom('"', '\\', '\\"', '[', '{"a":', ','), fc.integer({ min: 1000, max: 200_000 })).map(([s, n]) => s.repeat(n)),
      ),
      (text) => {
        const p = jsonShapeProblem(text, { depth: 32, members: 10_000 });
        expect(p === null || typeof p === 'string').toBe(true);
      },
      { numRuns: 1500, timeLimitMs: 3000 },
    );
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });
});
