// The model services' real limit answers (test/fixtures/limits/http/, each with where it was captured) read
// by jaggers' recognisers: the HTTP answer as a whole (src/detect/limit-answer.ts `limitOfAnswer`, with
// `resetFromHeaders`), and the body as a CLI prints it on a failed headless run (headlessLimit, then
// readReset on its lines, as the runner reads it).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { headlessLimit } from '../../../src/clis/shared/headless-limit.js';
import { limitOfAnswer } from '../../../src/detect/limit-answer.js';
import { readReset, resetFromHeaders } from '../../../src/detect/limit.js';

interface Fixture {
  service: string;
  source: string[];
  at: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: unknown;
  expect: { limit: 'rate' | 'plan' | null; resetAt: string | null };
}

const dir = path.join(import.meta.dirname, '..', '..', 'fixtures', 'limits', 'http');
const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => [f, JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Fixture] as const);
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

describe('the services real limit answers', () => {
  it('are there, each with its source', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(25);
    for (const [, f] of fixtures) expect(f.source.every((s) => /^https:\/\/github\.com\//.test(s))).toBe(true);
  });

  it.each(fixtures)('%s: the kind of limit and when it resets', (_, f) => {
    const at = Date.parse(f.at);
    // A status the capture did not show (null) is read as no status at all.
    const limit = limitOfAnswer({ status: f.status ?? 0, headers: f.headers, body: f.body }, at);
    expect(limit?.kind ?? null).toBe(f.expect.limit);
    expect(iso(limit?.resetAt ?? null)).toBe(f.expect.resetAt);
    if (limit) expect(limit.said).toMatch(/^429 /);
  });

  it.each(fixtures.filter(([, f]) => f.headers !== null))('%s: its headers alone', (_, f) => {
    const at = Date.parse(f.at);
    expect(iso(resetFromHeaders(f.headers!, at))).toBe(f.body === null ? f.expect.resetAt : iso(resetFromHeaders(f.headers!, at)));
  });

  it.each(fixtures.filter(([, f]) => f.body !== null))('%s: the body a failed headless run printed', (_, f) => {
    const at = Date.parse(f.at);
    // As gemini-cli and the SDKs print it: `ApiError: <the body>` on stderr, exit 1.
    const lines = headlessLimit({ stdout: '', stderr: `ApiError: ${JSON.stringify(f.body)}\n`, status: 1, rules: [], at });
    if (f.expect.limit === null) {
      expect(lines).toBeNull();
      return;
    }
    expect(lines).not.toBeNull();
    // A reset the body gives (not the headers) is read from the lines as from a screen's.
    if (f.headers === null) expect(iso(readReset(lines!, at, 'UTC').resetAt)).toBe(f.expect.resetAt);
  });
});

describe('resetFromHeaders', () => {
  const AT = Date.UTC(2026, 10, 26, 12);
  it('takes the latest reset of the limits with nothing left, not one that still has some', () => {
    const headers = {
      'anthropic-ratelimit-requests-remaining': '3',
      'anthropic-ratelimit-requests-reset': '2026-11-26T12:00:05Z',
      'anthropic-ratelimit-input-tokens-remaining': '0',
      'anthropic-ratelimit-input-tokens-reset': '2026-11-26T12:00:40Z',
    };
    expect(iso(resetFromHeaders(headers, AT))).toBe('2026-11-26T12:00:40.000Z');
    expect(resetFromHeaders({ ...headers, 'anthropic-ratelimit-input-tokens-remaining': '1' }, AT)).toBeNull();
  });
  it("reads anthropic's subscription reset from a rejected window, else the unified reset, and none while allowed", () => {
    const u = 'anthropic-ratelimit-unified';
    // The unified reset follows the representative claim (here the 7-day window); the 5-hour one refused.
    const fiveHourSpent = {
      [`${u}-status`]: 'rejected',
      [`${u}-representative-claim`]: 'seven_day',
      [`${u}-reset`]: '1795500000',
      [`${u}-5h-status`]: 'rejected',
      [`${u}-5h-reset`]: '1795000000',
      [`${u}-7d-status`]: 'allowed',
      [`${u}-7d-reset`]: '1795500000',
    };
    expect(resetFromHeaders(fiveHourSpent, AT)).toBe(1795000000 * 1000);
    // Both refused: the latest, since the limiter needs both.
    expect(resetFromHeaders({ ...fiveHourSpent, [`${u}-7d-status`]: 'rejected' }, AT)).toBe(1795500000 * 1000);
    // No window named: the unified reset.
    expect(resetFromHeaders({ [`${u}-status`]: 'rejected', [`${u}-reset`]: '1795500000', 'retry-after': '60' }, AT)).toBe(1795500000 * 1000);
    // Allowed (or warned) answers wait for nothing: their reset is only when the window rolls over.
    for (const status of ['allowed', 'allowed_warning']) {
      expect(resetFromHeaders({ [`${u}-status`]: status, [`${u}-reset`]: '1795000000' }, AT)).toBeNull();
      expect(resetFromHeaders({ [`${u}-status`]: status, [`${u}-reset`]: '1795000000', 'retry-after': '60' }, AT)).toBe(AT + 60_000);
    }
  });
  it("reads a 429 with a rejected window as the plan's limit, not one whose overage alone says rejected", () => {
    const u = 'anthropic-ratelimit-unified';
    const weekly = limitOfAnswer({ status: 429, headers: { [`${u}-7d-status`]: 'rejected', [`${u}-7d-reset`]: '1795000000' } }, AT);
    expect(weekly).toMatchObject({ kind: 'plan', resetAt: 1795000000 * 1000 });
    const overage = { [`${u}-status`]: 'allowed', [`${u}-overage-status`]: 'rejected', [`${u}-overage-disabled-reason`]: 'org_level_disabled' };
    expect(limitOfAnswer({ status: 429, headers: { ...overage, 'retry-after': '30' } }, AT)).toMatchObject({ kind: 'rate', resetAt: AT + 30_000 });
  });
  it('reads retry-after-ms before retry-after, and openai durations', () => {
    expect(resetFromHeaders({ 'retry-after-ms': '1500', 'retry-after': '2' }, AT)).toBe(AT + 1500);
    expect(resetFromHeaders({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0s' }, AT)).toBe(AT + 360_000);
    expect(resetFromHeaders({ 'X-Codex-Primary-Used-Percent': '100', 'X-Codex-Primary-Reset-At': '1795000000' }, AT)).toBe(1795000000 * 1000);
    expect(resetFromHeaders({ 'x-codex-primary-used-percent': '99', 'x-codex-primary-reset-at': '1795000000' }, AT)).toBeNull();
  });
});
