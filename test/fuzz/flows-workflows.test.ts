// Fuzz: the files a project writes and jaggers reads: a flow's front matter (src/flows/flow.ts) and a
// workflow's YAML (src/workflows/load.ts). The built-in workflows and a good flow, mutated field by
// field (wrong types, unknown keys, names every object has, templates that name them), YAML noise,
// text cut and spliced, alias bombs, deep nesting, many keys. Each either loads (a workflow then
// compiles to its machine) or fails with the module's own error, its message bounded; never another
// throw, never a stall.
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { workflowMachine } from '../../machines/workflow.machine.js';
import { BUILTIN_WORKFLOWS } from '../../machines/workflows/index.js';
import { JaggersError } from '../../src/errors.js';
import { checkSchedule, missedTick, parseFlowFile } from '../../src/flows/flow.js';
import { parseWorkflowFile } from '../../src/workflows/load.js';
import { renderTemplate } from '../../src/workflows/schema.js';
import { fuzz, STALL_BOUND_MS } from '../helpers/fuzz.js';

const OBJECT_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const any = fc.jsonValue({ maxDepth: 3 });
const name = fc.oneof(fc.constantFrom('review', 'alpha', 'writer', 'a', ...OBJECT_NAMES), fc.string({ maxLength: 12 }));
const templateText = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 10 }),
      name.map((n) => `{{reply.${n}}}`),
      name.map((n) => `{{agent.${n}}}`),
      fc.constantFrom('{{task}}', '{{reads}}', '{{', '}}', '{{x'),
    ),
    {
      maxLength: 6,
    },
  )
  .map((xs) => xs.join(' '));
const value = fc.oneof({ arbitrary: any, weight: 2 }, { arbitrary: name, weight: 2 }, { arbitrary: templateText, weight: 1 });

/** `v` with one place changed: a field replaced, removed or added (`key` may be a name every object has). */
function mutate(v: unknown, path: number[], replacement: unknown, key: string, op: number): unknown {
  if (v === null || typeof v !== 'object') return replacement;
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
  if (path.length === 0 || entries.length === 0) {
    if (Array.isArray(v)) return op % 2 ? [...v, replacement] : v.slice(1);
    const o = { ...(v as Record<string, unknown>) };
    if (op % 3 === 0) delete o[entries[op % Math.max(1, entries.length)]?.[0] ?? key];
    else Object.defineProperty(o, key, { value: replacement, enumerable: true, configurable: true, writable: true });
    return o;
  }
  const [k, child] = entries[path[0]! % entries.length]!;
  const changed = mutate(child, path.slice(1), replacement, key, op);
  if (Array.isArray(v)) return v.map((x, i) => (String(i) === k ? changed : x));
  const o = { ...(v as Record<string, unknown>) };
  Object.defineProperty(o, k, { value: changed, enumerable: true, configurable: true, writable: true });
  return o;
}

const mutation = fc.tuple(
  fc.array(fc.nat(), { maxLength: 5 }),
  value,
  fc.oneof(name, fc.constantFrom('steps', 'agents', 'loop', 'until', 'prompt', 'id', 'agent')),
  fc.nat(),
);
const mutated = (base: fc.Arbitrary<unknown>) =>
  fc.tuple(base, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([b, ms]) => ms.reduce((v, [p, r, k, op]) => mutate(v, p, r, k, op), b));

/** Text changed at the character level: cut, a piece spliced in, a line doubled. */
const spliced = (text: fc.Arbitrary<string>) =>
  fc.tuple(text, fc.nat(), fc.nat(), fc.string({ maxLength: 20 })).map(([t, a, b, s]) => {
    const i = a % (t.length + 1);
    const j = Math.min(t.length, i + (b % 40));
    return t.slice(0, i) + s + t.slice(j);
  });

const aliasBomb = fc.integer({ min: 3, max: 12 }).map((levels) => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\nname: bomb\n`;
});
const deep = fc
  .tuple(fc.integer({ min: 50, max: 3000 }), fc.constantFrom('[', '{a: ', '- '))
  .map(([n, open]) =>
    open === '- '
      ? Array.from({ length: Math.min(n, 300) }, (_, i) => `${'  '.repeat(i)}- `).join('\n')
      : open.repeat(n) + '1' + (open === '[' ? ']' : '}').repeat(n),
  );
const manyKeys = fc.integer({ min: 100, max: 1000 }).map((n) => `name: x\n${Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join('\n')}\n`);
const yamlNoise = fc.oneof(
  any.map((v) => stringify(v)),
  fc.string({ maxLength: 200 }),
  aliasBomb,
  deep,
  manyKeys,
);

const builtins = Object.values(BUILTIN_WORKFLOWS).map((b) => b.definition as unknown);
/** A workflow file's text, and its path (named as the definition it came from, so an unchanged one loads). */
const workflowFile = fc
  .constantFrom(...builtins)
  .chain((d) =>
    fc
      .oneof(
        { arbitrary: fc.constant(stringify(d)), weight: 2 },
        { arbitrary: mutated(fc.constant(d)).map((m) => stringify(m)), weight: 6 },
        { arbitrary: spliced(fc.constant(stringify(d))), weight: 2 },
        { arbitrary: yamlNoise, weight: 2 },
      )
      .map((text) => ({ text, file: `/p/.jaggers/workflows/${(d as { name: string }).name}.yaml` })),
  );

const goodFront = { name: 'nightly', schedule: '0 9 * * 1-5', agent: 'alpha', enabled: true, timeout: 600, timezone: 'Europe/Paris' };
const frontValue = fc.oneof(
  { arbitrary: value, weight: 3 },
  { arbitrary: fc.constantFrom('* * * * * * *', '@yearly', '0 0 30 2 *', '*/0 * * * *', '60 * * * *', 'Mars/Olympus', 'UTC', '', ' '), weight: 2 },
);
const flowText = fc.oneof(
  {
    arbitrary: fc
      .tuple(
        fc
          .tuple(
            fc.constant(goodFront as unknown),
            fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 1 }), frontValue, fc.oneof(name, fc.constantFrom(...Object.keys(goodFront))), fc.nat()), {
              maxLength: 3,
            }),
          )
          .map(([b, ms]) => ms.reduce((v, [p, r, k, op]) => mutate(v, p, r, k, op), b)),
        templateText,
        fc.constantFrom('\n', '\r\n'),
      )
      .map(([front, body, nl]) => `---${nl}${stringify(front).replace(/\n/g, nl)}---${nl}${body}${nl}`),
    weight: 6,
  },
  { arbitrary: fc.tuple(yamlNoise, fc.string({ maxLength: 50 })).map(([y, body]) => `---\n${y}\n---\n${body}`), weight: 2 },
  { arbitrary: spliced(fc.constant(`---\n${stringify(goodFront)}---\ndo the nightly review\n`)), weight: 2 },
  { arbitrary: fc.string({ maxLength: 100 }), weight: 1 },
);

/** The module's own error, with a message of bounded size; anything else is a find. */
function expectOwnError(e: unknown, code: string): void {
  if (!(e instanceof JaggersError)) throw e;
  expect(e.code).toBe(code);
  expect(e.message.length).toBeLessThan(8000);
}

describe('fuzz: flow front matter and workflow YAML', () => {
  it('a workflow file loads (and compiles to its machine) or is E_WORKFLOW_INVALID', async () => {
    let loaded = 0;
    const f = await fuzz(
      'workflow YAML',
      workflowFile,
      ({ text, file }) => {
        let def;
        try {
          def = parseWorkflowFile(text, file);
        } catch (e) {
          expectOwnError(e, 'E_WORKFLOW_INVALID');
          return;
        }
        loaded++;
        workflowMachine(def);
        // Every prompt renders to a text, with no reply yet (a template naming `reply.constructor` gets no function's source).
        for (const s of def.steps) {
          const prompt = renderTemplate(s.prompt, {
            task: 't',
            taskId: 't-1',
            workflow: def.name,
            agent: 'a',
            step: s.id,
            round: 1,
            maxRounds: null,
            reads: '',
            replies: {},
            roles: {},
          });
          expect(prompt).not.toContain('[native code]');
        }
      },
      { numRuns: 2500, timeLimitMs: 8000 },
    );
    console.log(`fuzz workflow YAML: ${loaded} of ${f.cases} loaded`);
    expect(f.cases).toBeGreaterThan(200);
    expect(loaded).toBeGreaterThan(0);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it("a flow file loads (and its schedule's next tick is found) or is E_FLOW_INVALID", async () => {
    let loaded = 0;
    const f = await fuzz(
      'flow front matter',
      flowText,
      (text) => {
        let def;
        try {
          def = parseFlowFile(text, '/p/.jaggers/flows/nightly.md');
        } catch (e) {
          expectOwnError(e, 'E_FLOW_INVALID');
          return;
        }
        loaded++;
        missedTick(checkSchedule(def.schedule, def.timezone ?? undefined, def.file), new Date('2026-01-01T00:00:00Z'), new Date('2026-06-01T00:00:00Z'));
      },
      { numRuns: 2500, timeLimitMs: 6000 },
    );
    console.log(`fuzz flow front matter: ${loaded} of ${f.cases} loaded`);
    expect(f.cases).toBeGreaterThan(200);
    expect(loaded).toBeGreaterThan(0);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });
});
