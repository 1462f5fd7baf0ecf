// The stub model server's limit answers on their own (no CLI needed): each service's status, headers and
// body as it sends them, and what jaggers reads from them (src/detect/limit.ts `resetFromHeaders`).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitOfAnswer } from '../../src/detect/limit-answer.js';
import { resetFromHeaders } from '../../src/detect/limit.js';
import { limitAnswer } from './stub-limits.js';
import { startStubServer, type StubServer } from './stub-server.js';

describe('stub model server: the services limit answers', () => {
  let stub: StubServer;
  beforeEach(async () => {
    stub = await startStubServer();
  });
  afterEach(async () => {
    await stub.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${stub.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the services' bodies, read field by field below
    return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: (await res.json()) as Record<string, any> };
  };
  const anthropicTurn = {
    model: 'm',
    stream: true,
    tools: [{ name: 'Bash', input_schema: { type: 'object' } }],
    messages: [{ role: 'user', content: 'hello' }],
  };
  const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }];

  it('anthropic: 429 rate_limit_error with retry-after and the anthropic-ratelimit-* headers', async () => {
    stub.setScript(() => ({ kind: 'limit', limit: 'rate', resetInS: 30 }));
    const before = Date.now();
    const r = await post('/v1/messages?beta=true', anthropicTurn);
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(r.body.request_id).toBe(r.headers['request-id']);
    expect(r.headers).toMatchObject({ 'retry-after': '30', 'anthropic-ratelimit-requests-remaining': '0', 'x-should-retry': 'true' });
    expect(Date.parse(r.headers['anthropic-ratelimit-requests-reset']!)).toBeGreaterThan(before);
    const reset = resetFromHeaders(r.headers, before);
    expect(reset).toBe(before + 30_000);
  });

  it("anthropic: the subscription's limit (unified status rejected, reset as epoch seconds)", async () => {
    stub.setScript(() => ({ kind: 'limit', limit: 'plan', resetInS: 3600 }));
    const r = await post('/v1/messages?beta=true', anthropicTurn);
    expect(r.status).toBe(429);
    expect(r.headers).toMatchObject({
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-5h-status': 'rejected',
      'retry-after': '3600',
    });
    expect(r.body.error).toEqual({ type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." });
    const reset = Number(r.headers['anthropic-ratelimit-unified-reset']) * 1000;
    expect(resetFromHeaders(r.headers, Date.now())).toBe(reset);
    expect(reset - Date.now()).toBeGreaterThan(3590_000);
  });

  it('openai: 429 rate_limit_exceeded (chat and responses), and the ChatGPT plan usage_limit_reached with resets_at', async () => {
    stub.setScript(() => ({ kind: 'limit', limit: 'rate', resetInS: 20 }));
    const chat = await post('/v1/chat/completions', { model: 'm', stream: true, tools, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(429);
    expect(chat.body).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'tokens', param: null } });
    expect(chat.headers).toMatchObject({ 'retry-after': '20', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '20s' });
    stub.setScript(() => ({ kind: 'limit', limit: 'plan', resetInS: 7200 }));
    const resp = await post('/v1/responses', {
      model: 'm',
      stream: true,
      tools: [{ type: 'function', name: 'exec_command', parameters: {} }],
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
    });
    expect(resp.status).toBe(429);
    expect(resp.body.error).toMatchObject({ type: 'usage_limit_reached', resets_in_seconds: 7200 });
    expect(resp.body.error.resets_at * 1000 - Date.now()).toBeGreaterThan(7190_000);
  });

  it('gemini: 429 RESOURCE_EXHAUSTED with a RetryInfo delay, per minute or per day', async () => {
    stub.setScript(() => ({ kind: 'limit', limit: 'rate' }));
    const r = await post('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(r.status).toBe(429);
    expect(r.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    const details = r.body.error.details as { '@type': string; retryDelay?: string; violations?: { quotaId: string }[] }[];
    expect(details.find((d) => d['@type'].endsWith('RetryInfo'))?.retryDelay).toBe('43s');
    expect(details.find((d) => d['@type'].endsWith('QuotaFailure'))!.violations![0]!.quotaId).toMatch(/PerMinute/);
    stub.setScript(() => ({ kind: 'limit', limit: 'plan' }));
    const day = await post('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect((day.body.error.details as { violations?: { quotaId: string }[] }[]).find((d) => d.violations)!.violations![0]!.quotaId).toMatch(/PerDay/);
  });
});

// The stub's answers beside the real ones (test/fixtures/limits/http/): the same status, the header names
// (and the formats of their values) and body fields the real answer has, and read as the same kind of limit.
describe("stub model server: its limit answers have the real answers' shape", () => {
  const fixtureDir = path.join(import.meta.dirname, '..', 'fixtures', 'limits', 'http');
  const real = (name: string) =>
    JSON.parse(readFileSync(path.join(fixtureDir, `${name}.json`), 'utf8')) as { status: number | null; headers: Record<string, string> | null; body: unknown };
  /** Every path of keys in a JSON value (`error.details.RetryInfo.retryDelay`...): gemini's details by their type (their order varies), other items by position. */
  const keys = (v: unknown, at = ''): string[] =>
    typeof v === 'object' && v !== null
      ? Object.entries(v).flatMap(([k, x]) => {
          const name = at.endsWith('details.')
            ? String((x as Record<string, unknown>)['@type'])
                .split('.')
                .pop()!
            : k;
          return [`${at}${name}`, ...keys(x, `${at}${name}.`)];
        })
      : [];
  /** A header value's format: digits, an RFC 3339 instant, a duration, or the value itself. */
  const format = (v: string) =>
    /^\d+$/.test(v) ? 'integer' : /^\d{4}-\d\d-\d\dT[\d:]+Z$/.test(v) ? 'rfc3339' : /^(\d+(\.\d+)?(ms|h|m|s))+$/.test(v) ? 'duration' : v;
  const NOW = Date.UTC(2026, 10, 26, 12);
  const transport = /^(date|content-length|connection|server-timing|alt-svc|cf-.*|via|x-cloud-trace-context|request-id|x-oai-request-id|set-cookie)$/;

  it.each([
    ['anthropic', 'rate', 'anthropic-429-requests-per-minute-headers', 'headers'],
    ['anthropic', 'rate', 'anthropic-429-account-rate-limit-body', 'body'],
    ['anthropic', 'plan', 'anthropic-429-unified-5h-rejected', 'headers'],
    ['anthropic', 'plan', 'anthropic-429-unified-7d-oi-rejected', 'headers'],
    ['anthropic', 'plan', 'anthropic-200-unified-allowed-headers', 'headers'],
    ['openai-chat', 'rate', 'openai-ratelimit-headers', 'headers'],
    ['openai-chat', 'rate', 'openai-429-tokens-per-minute-message', 'body'],
    ['openai-responses', 'rate', 'openai-429-responses-api-headers', 'headers'],
    ['openai-responses', 'plan', 'codex-429-usage-limit-reached-plus', 'headers'],
    ['openai-responses', 'plan', 'codex-429-usage-limit-reached-free', 'body'],
    ['gemini', 'rate', 'gemini-429-headers', 'headers'],
    ['gemini', 'rate', 'gemini-429-free-tier-per-minute', 'body'],
    ['gemini', 'plan', 'gemini-429-free-tier-per-day', 'body'],
  ] as const)('%s %s limit beside %s (%s)', (api, limit, name, part) => {
    const stubbed = limitAnswer({ api }, { kind: 'limit', limit }, NOW, 'req_stub');
    const f = real(name);
    // A capture of an answer that was not refused (a 200, or one whose status was not shown) gives the names
    // and formats of the headers the limit's answer carries too; it is no limit: status and kind not compared.
    const refused = f.status === 429;
    expect(stubbed.status).toBe(refused ? f.status : 429);
    if (part === 'headers') {
      const want = Object.entries(f.headers!).filter(([k]) => !transport.test(k));
      // The same names; the same values' formats (an epoch, an instant, a duration) or, for content-type, the same value.
      const got = want.map(([k, v]) => [k, k in stubbed.headers, k === 'content-type' || format(v) !== v ? format(stubbed.headers[k] ?? '') : 'a value']);
      expect(got).toEqual(want.map(([k, v]) => [k, true, k === 'content-type' || format(v) !== v ? format(v) : 'a value']));
    } else {
      const body = f.body;
      expect(keys(stubbed.body)).toEqual(
        expect.arrayContaining(keys(body).filter((k) => !/\.links\.|quotaDimensions\.|^error\.param$|^error\.type$/.test(k) || keys(stubbed.body).includes(k))),
      );
    }
    const read = limitOfAnswer({ status: stubbed.status, headers: stubbed.headers, body: stubbed.body }, NOW);
    expect(read?.kind).toBe(refused ? limitOfAnswer({ status: 429, headers: f.headers, body: f.body }, NOW)?.kind : limit);
  });
});
