// Fuzz: the readers of what agent CLIs write (src/clis/): the transcripts of claude, qwen, copilot and
// the fake agent (each through src/clis/transcript.ts, from a file where the reader looks), state
// files, headless output, session lists. Lines shaped like the real entries (with names every object
// has among their ids and fields), torn lines, noise. A reader never throws (but the one documented to),
// never stalls, and answers in its own shape.
import fc from 'fast-check';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeReply, claudeTranscriptFile } from '../../src/clis/claude/transcript.js';
import { parseRolloutHead } from '../../src/clis/codex/rollout.js';
import { threadIdFromJson } from '../../src/clis/codex/headless.js';
import { copilotReply, copilotTranscriptFile } from '../../src/clis/copilot/transcript.js';
import { diffListedSessions, parseListedSessions } from '../../src/clis/gemini/list-sessions.js';
import { TRANSCRIPT_KINDS } from '../../src/clis/kinds.js';
import { opencodeRunJson } from '../../src/clis/opencode/headless.js';
import { parseOpencodeSessionList } from '../../src/clis/opencode/session-list.js';
import { qwenReply, qwenTranscriptFile } from '../../src/clis/qwen/transcript.js';
import { jsonObjects } from '../../src/clis/shared/jsonl.js';
import { parseStateFile } from '../../src/clis/shared/status-json.js';
import { readTranscriptReply } from '../../src/clis/transcript.js';
import { fuzz, STALL_BOUND_MS } from '../helpers/fuzz.js';

const TAG = '[jg:0123abcd]';
const OBJECT_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
const id = fc.constantFrom('u1', 'u2', 'u3', 'u4', 'u5', ...OBJECT_NAMES);
const text = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ maxLength: 20 }).map((s) => `${s} ${TAG} ${s}`), weight: 2 },
  { arbitrary: fc.constantFrom('[Request interrupted by user]', '', ' ', TAG, ...OBJECT_NAMES), weight: 1 },
);
const any = fc.jsonValue({ maxDepth: 3 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.oneof(a, any);
const time = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ maxLength: 10 }),
);

const claudeBlock = fc.record(
  { type: fc.constantFrom('text', 'tool_use', 'tool_result', 'thinking', 'image'), text, id, tool_use_id: id },
  { requiredKeys: ['type'] },
);
const claudeEntry = fc.record(
  {
    type: fc.constantFrom('user', 'assistant', 'system', 'attachment', 'last-prompt', 'ai-title', 'summary', ...OBJECT_NAMES),
    uuid: maybe(id),
    parentUuid: fc.oneof(id, fc.constant(null), any),
    isSidechain: maybe(fc.boolean()),
    isMeta: maybe(fc.boolean()),
    isCompactSummary: fc.boolean(),
    subtype: fc.constantFrom('turn_duration', 'other', ...OBJECT_NAMES),
    timestamp: time,
    leafUuid: id,
    message: maybe(
      fc.record(
        { id, stop_reason: fc.constantFrom('end_turn', 'tool_use', null), content: fc.oneof(text, fc.array(maybe(claudeBlock), { maxLength: 4 })) },
        { requiredKeys: [] },
      ),
    ),
    attachment: maybe(fc.record({ type: fc.constantFrom('queued_command', 'file'), prompt: text }, { requiredKeys: [] })),
  },
  { requiredKeys: ['type'] },
);
const copilotEvent = fc.record(
  {
    type: fc.constantFrom('user.message', 'assistant.message', 'assistant.turn_start', 'assistant.turn_end', 'abort', 'tool.execution_start', ...OBJECT_NAMES),
    data: maybe(fc.record({ content: maybe(text), toolRequests: maybe(fc.array(any, { maxLength: 2 })) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const qwenEntry = fc.record(
  {
    type: fc.constantFrom('user', 'assistant', 'tool_result', 'system', ...OBJECT_NAMES),
    message: maybe(
      fc.record(
        {
          parts: maybe(
            fc.array(maybe(fc.record({ text: maybe(text), thought: maybe(fc.boolean()), functionCall: any }, { requiredKeys: [] })), { maxLength: 4 }),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

/** A JSON-lines file of `entry`, with torn, blank and foreign lines among them. */
const jsonl = (entry: fc.Arbitrary<unknown>) =>
  fc
    .array(
      fc.oneof(
        { arbitrary: entry.map((e) => JSON.stringify(e)), weight: 8 },
        { arbitrary: entry.chain((e) => fc.nat().map((n) => JSON.stringify(e).slice(0, n % 40))), weight: 1 },
        {
          arbitrary: fc.oneof(
            any.map((v) => JSON.stringify(v)),
            fc.string({ maxLength: 30 }),
            fc.constant(''),
          ),
          weight: 1,
        },
      ),
      { maxLength: 40 },
    )
    .map((lines) => lines.join('\n'));

/** A long chain, or a prompt with many answers, as a long session would be (the walk is iterative, not quadratic). */
const bigClaude = fc.tuple(fc.integer({ min: 100, max: 1000 }), fc.boolean()).map(([n, chain]) => {
  const lines = [JSON.stringify({ type: 'user', uuid: 'p', parentUuid: null, message: { content: `go ${TAG}` } })];
  for (let i = 0; i < n; i++)
    lines.push(
      JSON.stringify({
        type: 'assistant',
        uuid: `a${i}`,
        parentUuid: chain && i > 0 ? `a${i - 1}` : 'p',
        message: { id: `m${i}`, content: [{ type: 'text', text: `t${i}` }] },
      }),
    );
  return lines.join('\n');
});

const replyShape = (r: unknown) => {
  if (r === null) return;
  expect(r).toMatchObject({ text: expect.any(String), finished: expect.any(Boolean) });
};

describe('fuzz: the readers of what agent CLIs write', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'jg-fuzz-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('claude transcripts: a reply or null, never a throw or a stall', async () => {
    const f = await fuzz(
      'claude transcript',
      fc.oneof({ arbitrary: jsonl(claudeEntry), weight: 9 }, { arbitrary: bigClaude, weight: 1 }),
      (t) => replyShape(claudeReply(t, TAG)),
      {
        numRuns: 2000,
        timeLimitMs: 6000,
      },
    );
    expect(f.cases).toBeGreaterThan(100);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it('qwen and copilot transcripts', async () => {
    const q = await fuzz('qwen transcript', jsonl(qwenEntry), (t) => replyShape(qwenReply(t, TAG)), { numRuns: 1500, timeLimitMs: 3000 });
    const c = await fuzz('copilot transcript', jsonl(copilotEvent), (t) => replyShape(copilotReply(t, TAG)), { numRuns: 1500, timeLimitMs: 3000 });
    expect(Math.max(q.slowestMs, c.slowestMs)).toBeLessThan(STALL_BOUND_MS);
  });

  it('every transcript kind through src/clis/transcript.ts, read from the file the CLI would write', async () => {
    const cwd = '/work/project';
    const sid = '6f1c1d5e-0000-4000-8000-000000000001';
    const fileOf: Record<string, string> = {
      claude: claudeTranscriptFile(home, cwd, sid),
      qwen: qwenTranscriptFile(home, cwd, sid),
      copilot: copilotTranscriptFile(home, sid),
      'fake-agent': path.join(home, '.fake-agent', 'sessions', `${sid}.json`),
    };
    expect(Object.keys(fileOf).sort()).toEqual([...TRANSCRIPT_KINDS].sort());
    for (const f of Object.values(fileOf)) await mkdir(path.dirname(f), { recursive: true });
    const fakeSession = fc.oneof(
      fc
        .record(
          { turns: maybe(fc.array(maybe(fc.record({ prompt: maybe(text), reply: maybe(text) }, { requiredKeys: [] })), { maxLength: 5 })) },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 50 }),
    );
    const input = fc.constantFrom(...TRANSCRIPT_KINDS).chain((kind) =>
      (kind === 'claude' ? jsonl(claudeEntry) : kind === 'qwen' ? jsonl(qwenEntry) : kind === 'copilot' ? jsonl(copilotEvent) : fakeSession).map((t) => ({
        kind,
        t,
      })),
    );
    const f = await fuzz(
      'transcript files, every kind',
      input,
      async ({ kind, t }) => {
        await writeFile(fileOf[kind]!, t);
        replyShape(await readTranscriptReply(kind, home, cwd, sid, '0123abcd'));
      },
      { numRuns: 400, timeLimitMs: 4000, loopDelay: true },
    );
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
  });

  it("gemini's session listing: the same sessions as the regular expression it replaced (on lines short enough for that one), in linear time", async () => {
    const OLD = /^\s*(\d+)\.\s+(.*?)(?:\s+\(([^()]*)\))?\s+\[([0-9a-fA-F][0-9a-fA-F-]{7,})\]\s*$/;
    const piece = fc.constantFrom(
      '1',
      '23',
      '.',
      ' ',
      '  ',
      '\t',
      '(',
      ')',
      '[',
      ']',
      'abcdef12',
      '0123abcd-ef',
      'x',
      'title',
      '(2 hours ago)',
      '[0123abcd-0000]',
      '\u00a0',
    );
    const f = await fuzz(
      'gemini session listing',
      fc.array(
        fc.array(piece, { maxLength: 12 }).map((ps) => ps.join('')),
        { maxLength: 6 },
      ),
      (lines) => {
        const want = lines.flatMap((l) => {
          const m = OLD.exec(l);
          return m ? [{ index: Number(m[1]), title: m[2] ?? '', when: m[3] ?? null, id: m[4]! }] : [];
        });
        expect(parseListedSessions(lines.join('\n'))).toEqual(want);
      },
      { numRuns: 3000, timeLimitMs: 3000 },
    );
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS);
    const t = performance.now();
    parseListedSessions(`1. ${' '.repeat(200_000)} x`);
    expect(performance.now() - t).toBeLessThan(STALL_BOUND_MS);
  });

  it('state files, headless output and session lists', async () => {
    const STATES = ['idle', 'busy', 'waiting_input', 'starting'];
    const state = fc.oneof(
      any,
      fc.record(
        { status: fc.oneof(fc.constantFrom('idle', 'busy', 'waiting', 'starting', ...OBJECT_NAMES), any), sessionId: maybe(text) },
        { requiredKeys: [] },
      ),
    );
    const s = await fuzz(
      'state files',
      state,
      (data) => {
        const r = parseStateFile(data, '/home/x/.claude/sessions/1.json');
        expect(r.classification === null || STATES.includes(r.classification.status), JSON.stringify(r.classification)).toBe(true);
        expect(r.sessionId === null || typeof r.sessionId === 'string').toBe(true);
      },
      { numRuns: 1500, timeLimitMs: 2000 },
    );
    const lines = fc.oneof(
      jsonl(
        fc.record(
          {
            type: fc.constantFrom('thread.started', 'text', 'step', ...OBJECT_NAMES),
            thread_id: maybe(text),
            sessionID: maybe(text),
            part: maybe(fc.record({ messageID: maybe(id), text: maybe(text) }, { requiredKeys: [] })),
          },
          { requiredKeys: [] },
        ),
      ),
      fc.string({ maxLength: 300 }),
      // Listings and repeated spaces, which a backtracking pattern would choke on.
      fc
        .tuple(fc.nat(99), fc.string({ maxLength: 30 }), fc.constantFrom('(2 hours ago)', '', '(('), fc.constantFrom('[0123abcd-ef]', '[', ''))
        .map(([n, t, w, u]) => `${n}. ${t} ${w} ${u}`),
      fc.tuple(fc.constantFrom(' ', '(', '1. ', '\t', 'a'), fc.integer({ min: 1000, max: 20_000 })).map(([c, n]) => `1. ${c.repeat(n)}`),
    );
    const h = await fuzz(
      'headless output and session lists',
      fc.tuple(lines, lines),
      ([a, b]) => {
        expect([null, 'string']).toContain(threadIdFromJson(a) === null ? null : typeof threadIdFromJson(a));
        expect(opencodeRunJson(a)).toMatchObject({ text: expect.any(String) });
        expect(Array.isArray(parseListedSessions(a))).toBe(true);
        expect(Array.isArray(diffListedSessions(a, b))).toBe(true);
        expect(Array.isArray(jsonObjects(a))).toBe(true);
        parseRolloutHead(a.split('\n')[0] ?? '', '/x/rollout-2026-01-01T00-00-00-0123abcd-0000-4000-8000-000000000001.jsonl');
        try {
          expect(Array.isArray(parseOpencodeSessionList(a))).toBe(true);
        } catch (e) {
          // Its documented failure: anything that is not a JSON list is named.
          expect((e as Error).message).toMatch(/^opencode session list: /);
        }
      },
      { numRuns: 1500, timeLimitMs: 4000 },
    );
    expect(Math.max(s.slowestMs, h.slowestMs)).toBeLessThan(STALL_BOUND_MS);
  });
});
