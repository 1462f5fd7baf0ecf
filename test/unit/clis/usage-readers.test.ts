// The usage readers of each CLI folder on the real records in test/fixtures/usage (see the README there
// for the token counts the stub answered with), and on lines of other shapes.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeUsageFold } from '../../../src/clis/claude/usage.js';
import { codexUsageFold } from '../../../src/clis/codex/usage.js';
import { copilotUsageFold } from '../../../src/clis/copilot/usage.js';
import { geminiUsageFold } from '../../../src/clis/gemini/usage.js';
import { USAGE_READERS } from '../../../src/clis/kinds.js';
import { qwenUsageFold } from '../../../src/clis/qwen/usage.js';
import { foldText, followJsonl, forgetFollowed } from '../../../src/clis/shared/jsonl-follow.js';

const FIX = path.join(import.meta.dirname, '..', '..', 'fixtures', 'usage');
const fixture = (name: string) => readFileSync(path.join(FIX, name), 'utf8');

/** Requests 1 and 2 of the stub's table, as OpenAI-style and Gemini APIs report them (no cache writes). */
const TWO = { input: 1234 + 78, output: 56 + 910, cacheRead: 3072, cacheWrite: 0 };

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'jaggers-usage-'));
  forgetFollowed();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('claude (2.1.330)', () => {
  it('counts each API answer once (two entries share a message and request id), with cache reads and writes', () => {
    const f = foldText(claudeUsageFold, fixture('claude-2.1.330-two-turns.jsonl'));
    expect(f.state.byModel).toEqual({ 'claude-opus-5-5': { input: 1317, output: 973, cacheRead: 7072, cacheWrite: 2159 } });
    expect(f.state.records).toBe(3);
    expect(f.skipped).toBe(0);
  });

  it("follows ccusage's rules for entries of other shapes", () => {
    const e = (over: Record<string, unknown>, msg: Record<string, unknown> = {}) =>
      JSON.stringify({
        timestamp: '2026-11-26T12:00:00.000Z',
        requestId: 'r1',
        ...over,
        message: { id: 'm1', model: 'claude-x', usage: { input_tokens: 1, output_tokens: 2 }, ...msg },
      });
    const lines = [
      e({}),
      e({}), // the same answer again
      e({ requestId: 'r2' }, { usage: { input_tokens: 10, output_tokens: 20, cache_read_input_tokens: 5, speed: 'fast' } }),
      e({ requestId: undefined }, { id: 'm9', usage: { input_tokens: 100, output_tokens: 0 } }),
      e({ requestId: undefined }, { id: 'm9', usage: { input_tokens: 100, output_tokens: 0 } }), // no request id: counted again
      e({ timestamp: '2026-11-26 12:00' }), // not ccusage's ISO form
      e({ version: 'dev' }),
      e({ requestId: '' }),
      e({}, { content: 'text' }),
      e({}, { usage: { input_tokens: '1', output_tokens: 2 } }),
      e({ requestId: 'r3' }, { model: undefined }),
      '{"message":{"usage":{"input_tokens": 1', // torn while claude writes it
      '["usage"]',
      '{"type":"user","message":{"content":"not a usage line: never parsed"', // torn too, but without "usage": passed over
    ];
    const f = foldText(claudeUsageFold, lines.join('\n'));
    expect(f.state.byModel).toEqual({
      'claude-x': { input: 201, output: 2, cacheRead: 0, cacheWrite: 0 },
      'claude-x-fast': { input: 10, output: 20, cacheRead: 5, cacheWrite: 0 },
      unknown: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    });
    expect(f.skipped).toBe(2);
  });
});

describe('model names', () => {
  it("a model named as an object's own property is kept; `__proto__` counts as unknown", () => {
    const line = (model: string, id: string) =>
      JSON.stringify({ timestamp: '2026-11-26T12:00:00.000Z', requestId: id, message: { id, model, usage: { input_tokens: 1, output_tokens: 1 } } });
    const f = foldText(claudeUsageFold, [line('__proto__', 'a'), line('constructor', 'b'), line('__proto__', 'c')].join('\n'));
    expect(Object.getPrototypeOf(f.state.byModel)).toBe(Object.prototype);
    expect(f.state.byModel).toEqual({
      unknown: { input: 2, output: 2, cacheRead: 0, cacheWrite: 0 },
      constructor: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    });
  });
});

describe('codex (0.169.0)', () => {
  it("counts each token_count's last answer, input less its cached part", () => {
    const f = foldText(codexUsageFold, fixture('codex-0.169.0-two-turns.jsonl'));
    expect(f.state.byModel).toEqual({ 'stub-model': TWO });
    expect(f.state.records).toBe(2);
  });

  it('takes the difference of totals when there is no last usage, skips zeros, and falls back to gpt-5 for a model', () => {
    const tc = (info: unknown, more: Record<string, unknown> = {}) =>
      JSON.stringify({ timestamp: '2026-11-26T12:00:00Z', type: 'event_msg', payload: { type: 'token_count', info, ...more } });
    const lines = [
      tc({ total_token_usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 10 } }),
      tc({ total_token_usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 10 } }), // nothing new
      tc(null), // info null: not a record, skipped
      JSON.stringify({ timestamp: 'x', type: 'turn_context', payload: { model: 'gpt-9' } }),
      tc({ total_token_usage: { input_tokens: 300, cached_input_tokens: 240, output_tokens: 30 } }),
      tc({ last_token_usage: { input_tokens: 5, cached_input_tokens: 9, output_tokens: 1 }, model: 'own-model' }),
      JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: { last_token_usage: { input_tokens: 7 } } } }), // no timestamp
      '{"type":"event_msg","payload":{"type":"token_count"', // torn
      'not json',
    ];
    const f = foldText(codexUsageFold, lines.join('\n'));
    expect(f.state.byModel).toEqual({
      'gpt-5': { input: 60, output: 10, cacheRead: 40, cacheWrite: 0 },
      'gpt-9': { input: 0, output: 20, cacheRead: 200, cacheWrite: 0 },
      'own-model': { input: 0, output: 1, cacheRead: 5, cacheWrite: 0 },
    });
    expect(f.skipped).toBe(1);
  });
});

describe('gemini (0.61.0)', () => {
  it('counts each model message once by its id, though a resume writes the conversation again', () => {
    const f = foldText(geminiUsageFold, fixture('gemini-0.61.0-two-turns.jsonl'));
    expect(f.state.sessionId).toBe('53ce005d-04a7-40b5-92bb-bc455e1e1e95');
    expect([...f.state.messages.values()]).toHaveLength(2);
    const sum = [...f.state.messages.values()].reduce(
      (a, m) => ({
        input: a.input + m.tokens.input,
        output: a.output + m.tokens.output,
        cacheRead: a.cacheRead + m.tokens.cacheRead,
        cacheWrite: 0,
      }),
      { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    );
    expect(sum).toEqual(TWO);
    expect(new Set([...f.state.messages.values()].map((m) => m.model))).toEqual(new Set(['gemini-3.8-flash']));
  });

  it('adds thoughts to output and tool prompts to input', () => {
    const line = JSON.stringify({ id: 'a', type: 'gemini', model: 'g', tokens: { input: 100, output: 10, cached: 30, thoughts: 5, tool: 7, total: 122 } });
    const f = foldText(geminiUsageFold, line);
    expect(f.state.messages.get('a')?.tokens).toEqual({ input: 77, output: 15, cacheRead: 30, cacheWrite: 0 });
  });

  it('reads the session from its chats folder (the slug from projects.json), only the files that name it', async () => {
    const cwd = '/w/proj';
    const chats = path.join(root, '.gemini', 'tmp', 'proj-1', 'chats');
    mkdirSync(chats, { recursive: true });
    writeFileSync(path.join(root, '.gemini', 'projects.json'), JSON.stringify({ projects: { [cwd]: 'proj-1' } }));
    writeFileSync(path.join(chats, 'session-2026-11-26T12-44-53ce005d.jsonl'), fixture('gemini-0.61.0-two-turns.jsonl'));
    const other = '{"sessionId":"53ce005d-0000-0000-0000-000000000000"}\n' + JSON.stringify({ id: 'z', type: 'gemini', tokens: { input: 1 } }) + '\n';
    writeFileSync(path.join(chats, 'session-2026-11-26T12-50-53ce005d.jsonl'), other);
    const u = await USAGE_READERS.gemini({ home: root, cwd, sessionId: '53ce005d-04a7-40b5-92bb-bc455e1e1e95', env: {} });
    expect(u?.byModel).toEqual({ 'gemini-3.8-flash': TWO });
    expect(u?.files).toHaveLength(1);
    // The newest answer's prompt is the context (docs/usage.md): 3,150 prompt tokens, 3,072 of them cached.
    expect(u?.last).toEqual({ model: 'gemini-3.8-flash', tokens: { input: 78, output: 910, cacheRead: 3072, cacheWrite: 0 } });
  });
});

describe('qwen (0.24.4) and copilot (1.0.102)', () => {
  it('qwen: each assistant entry once, prompt less cached', () => {
    const f = foldText(qwenUsageFold, fixture('qwen-0.24.4-two-turns.jsonl'));
    expect(f.state.byModel).toEqual({ 'stub-model': TWO });
  });

  it('copilot: each session.usage_record once, input less cache reads', () => {
    const f = foldText(copilotUsageFold, fixture('copilot-1.0.102-two-turns.jsonl'));
    expect(f.state.byModel).toEqual({ 'stub-model-copilot': TWO });
    const again = fixture('copilot-1.0.102-two-turns.jsonl') + fixture('copilot-1.0.102-two-turns.jsonl');
    expect(foldText(copilotUsageFold, again).state.byModel).toEqual({ 'stub-model-copilot': TWO });
  });
});

describe('following a file as it grows', () => {
  it('reads only the bytes added, leaves a torn last line for later, and starts again when the file is replaced', async () => {
    const text = fixture('claude-2.1.330-two-turns.jsonl');
    const file = path.join(root, 'projects', '-w', 's.jsonl');
    mkdirSync(path.dirname(file), { recursive: true });
    const cut = text.length - 200;
    writeFileSync(file, text.slice(0, cut));
    const first = await followJsonl(file, 't', claudeUsageFold);
    expect(first?.skipped).toBe(0);
    appendFileSync(file, text.slice(cut));
    const whole = await followJsonl(file, 't', claudeUsageFold);
    expect(whole?.state.byModel).toEqual(foldText(claudeUsageFold, text).state.byModel);
    expect(whole?.skipped).toBe(0);
    // Replaced by a shorter file (another inode): folded again from its start.
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, text.split('\n').slice(0, 27).join('\n') + '\n');
    renameSync(tmp, file);
    const again = await followJsonl(file, 't', claudeUsageFold);
    expect(again?.state.records).toBe(2);
    expect(await followJsonl(path.join(root, 'none.jsonl'), 't', claudeUsageFold)).toBeNull();
  });

  it('claude: the session file and its subagents', async () => {
    const cwd = '/w/p';
    const dir = path.join(root, '.claude', 'projects', '-w-p');
    mkdirSync(path.join(dir, 's1', 'subagents'), { recursive: true });
    writeFileSync(path.join(dir, 's1.jsonl'), fixture('claude-2.1.330-two-turns.jsonl'));
    const sub = {
      timestamp: '2026-11-26T12:00:00.000Z',
      requestId: 'rs',
      message: { id: 'ms', model: 'claude-haiku', usage: { input_tokens: 3, output_tokens: 4 } },
    };
    writeFileSync(path.join(dir, 's1', 'subagents', 'agent-a1.jsonl'), JSON.stringify(sub) + '\n');
    const u = await USAGE_READERS.claude({ home: root, cwd, sessionId: 's1', env: {} });
    expect(u?.byModel).toEqual({
      'claude-opus-5-5': { input: 1317, output: 973, cacheRead: 7072, cacheWrite: 2159 },
      'claude-haiku': { input: 3, output: 4, cacheRead: 0, cacheWrite: 0 },
    });
    expect(u?.files).toHaveLength(2);
    expect(await USAGE_READERS.claude({ home: root, cwd, sessionId: 'nope', env: {} })).toBeNull();
  });

  it('codex: finds the rollout under CODEX_HOME by the session id', async () => {
    const dir = path.join(root, 'ch', 'sessions', '2026', '11', '26');
    mkdirSync(dir, { recursive: true });
    const id = '019ac0a0-0000-7000-8000-000000000001';
    writeFileSync(path.join(dir, `rollout-2026-11-26T12-44-41-${id}.jsonl`), fixture('codex-0.169.0-two-turns.jsonl'));
    const u = await USAGE_READERS.codex({ home: root, cwd: '/w', sessionId: id, env: { CODEX_HOME: path.join(root, 'ch') } });
    expect(u?.byModel).toEqual({ 'stub-model': TWO });
  });
});

describe('two reads of one file at once', () => {
  it('fold its bytes once', async () => {
    // codex's fold: no dedupe that would hide a second fold of the same lines.
    const file = path.join(root, 'c.jsonl');
    const lines = fixture('codex-0.169.0-two-turns.jsonl').split('\n');
    const cut = lines.findIndex((l) => l.includes('"token_count"')) + 1;
    writeFileSync(file, lines.slice(0, cut).join('\n') + '\n');
    expect((await followJsonl(file, 'race', codexUsageFold))?.state.records).toBe(1);
    appendFileSync(file, lines.slice(cut).join('\n'));
    const [a, b] = await Promise.all([followJsonl(file, 'race', codexUsageFold), followJsonl(file, 'race', codexUsageFold)]);
    expect(a?.state.byModel).toEqual({ 'stub-model': TWO });
    expect(b?.state.byModel).toEqual({ 'stub-model': TWO });
  });
});

describe('the last record says when the CLI wrote it (a turn tells its own answer from a late one of the turn before)', () => {
  /** The `timestamp` of the last line of `name` that holds `mark`, as ms. */
  const lastAt = (name: string, mark: string) =>
    Date.parse(
      (
        fixture(name)
          .split('\n')
          .filter((l) => l.includes(mark))
          .map((l) => JSON.parse(l) as { timestamp?: string })
          .at(-1) ?? {}
      ).timestamp ?? '',
    );

  it.each([
    ['qwen', qwenUsageFold, 'qwen-0.24.4-two-turns.jsonl', '"usageMetadata"'],
    ['claude', claudeUsageFold, 'claude-2.1.330-two-turns.jsonl', '"usage"'],
    ['codex', codexUsageFold, 'codex-0.169.0-two-turns.jsonl', '"token_count"'],
  ] as const)('%s', (_cli, fold, name, mark) => {
    const at = lastAt(name, mark);
    expect(Number.isFinite(at)).toBe(true);
    expect((foldText(fold as typeof qwenUsageFold, fixture(name)).state.last as { at?: number } | undefined)?.at).toBe(at);
  });

  it('a record without a readable time has none', () => {
    const line = JSON.stringify({
      type: 'assistant',
      uuid: 'u1',
      model: 'm',
      timestamp: 'yesterday',
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 },
    });
    expect(foldText(qwenUsageFold, line).state.last).toEqual({ model: 'm', tokens: { input: 5, output: 1, cacheRead: 0, cacheWrite: 0 } });
  });
});
