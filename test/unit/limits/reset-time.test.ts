import { describe, expect, it } from 'vitest';
import { readReset, resetFromHeaders } from '../../../src/detect/limit.js';

// 2026-11-26 13:30:00 UTC
const AT = Date.UTC(2026, 10, 26, 13, 30);
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

describe('reading a limit reset time from what the CLI printed', () => {
  it("claude's session limit: a time of day with its zone", () => {
    expect(iso(readReset(["  ⎿  You've hit your session limit · resets 10:14pm (UTC)"], AT, 'Europe/Paris').resetAt)).toBe('2026-11-26T22:14:00.000Z');
  });

  it('a time already past today is tomorrow', () => {
    expect(iso(readReset(['resets 9am (UTC)'], AT).resetAt)).toBe('2026-11-27T09:00:00.000Z');
  });

  it("a named IANA zone (claude's older wording), and the pane's zone when none is named", () => {
    expect(iso(readReset(['Claude usage limit reached. Your limit will reset at 5pm (America/Santiago).'], AT, 'UTC').resetAt)).toBe(
      '2026-11-26T20:00:00.000Z',
    );
    expect(iso(readReset(['■ You’ve hit your usage limit. Upgrade to Pro, or try again at 11:53 PM.'], AT, 'Europe/Paris').resetAt)).toBe(
      '2026-11-26T22:53:00.000Z',
    );
    expect(iso(readReset(['⚠ 5h limit: 100% used · resets at 23:53'], AT, 'Asia/Tokyo').resetAt)).toBe('2026-11-26T14:53:00.000Z');
  });

  it("gemini's `Access resets at 8:43 PM UTC.`", () => {
    expect(iso(readReset(['Access resets at 8:43 PM UTC.'], AT, 'Asia/Tokyo').resetAt)).toBe('2026-11-26T20:43:00.000Z');
  });

  it('a date before the time', () => {
    expect(iso(readReset(['Weekly limit reached · resets Dec 2, 3pm (UTC)'], AT).resetAt)).toBe('2026-12-02T15:00:00.000Z');
  });

  it('a reset on another day as codex and copilot write it (codex-rs core/src/error.rs `%b %-d{suffix}, %Y %-I:%M %p`)', () => {
    expect(
      iso(
        readReset(['■ You’ve hit your usage limit. Upgrade to Plus to continue using Codex, or try again at Dec 3rd, 2026 11:52 AM.'], AT, 'Europe/Paris')
          .resetAt,
      ),
    ).toBe('2026-12-03T10:52:00.000Z');
    // https://github.com/github/copilot-cli/issues/2828
    expect(
      iso(
        readReset(
          ["✗ You've reached your weekly rate limit. Please wait for your limit to reset on April 20, 2027 at 2:00 AM or switch to auto model"],
          AT,
          'UTC',
        ).resetAt,
      ),
    ).toBe('2027-04-20T02:00:00.000Z');
    // https://github.com/github/copilot-cli/issues/2144
    expect(
      iso(
        readReset(
          [
            "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.",
          ],
          AT,
        ).resetAt,
      ),
    ).toBe('2026-11-26T15:30:00.000Z');
  });

  it('durations and the headless epoch', () => {
    expect(iso(readReset(['try again in 2 hours 5 minutes.'], AT).resetAt)).toBe('2026-11-26T15:35:00.000Z');
    expect(iso(readReset(['↻ Retrying in 60 seconds… (attempt 1/10)'], AT).resetAt)).toBe('2026-11-26T13:31:00.000Z');
    expect(iso(readReset(['Claude AI usage limit reached|1795000000'], AT).resetAt)).toBe(new Date(1795000000 * 1000).toISOString());
  });

  it('no time: null', () => {
    expect(readReset(['● API Error: Request rejected (429) · Rate limited'], AT)).toEqual({ resetAt: null, said: null });
    expect(readReset(['✕ [API Error: You have exhausted your daily quota on this model.]'], AT).resetAt).toBeNull();
  });

  it('HTTP headers: retry-after in seconds or as a date, anthropic unified reset', () => {
    expect(resetFromHeaders({ 'retry-after': '30' }, AT)).toBe(AT + 30_000);
    expect(resetFromHeaders({ 'retry-after': 'Thu, 26 Nov 2026 14:00:00 GMT' }, AT)).toBe(Date.UTC(2026, 10, 26, 14));
    expect(resetFromHeaders({ 'anthropic-ratelimit-unified-reset': '1795000000', 'retry-after': '5' }, AT)).toBe(1795000000 * 1000);
    expect(resetFromHeaders({}, AT)).toBeNull();
  });
});
