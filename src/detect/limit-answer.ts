// A model service's HTTP answer read as a usage or rate limit (pure): the status, headers and body as the
// services send them (real ones in test/fixtures/limits/http/, each with its source). anthropic's 429
// `rate_limit_error` (a subscription's when `anthropic-ratelimit-unified-status` or a window's status is
// `rejected`), openai's `rate_limit_exceeded` / `insufficient_quota`, codex's ChatGPT plan
// `usage_limit_reached` with `resets_at`, gemini's `RESOURCE_EXHAUSTED` (an object, or an array of one on a
// Google login) with its QuotaFailure and RetryInfo, DashScope's throttle worded as `insufficient_quota`,
// Copilot's `user_*_rate_limited`. A 529 (anthropic overloaded) or any other status is no limit.
import { goDuration, resetFromHeaders, unifiedRejectedWindows } from './limit.js';

export interface HttpAnswer {
  status: number;
  /** Header names in any case; null when not known. */
  headers?: Record<string, string | undefined> | null;
  /** The parsed JSON body, or null. */
  body?: unknown;
}

export interface AnswerLimit {
  /** `plan`: a plan's, a day's or an account's credit (hours away, or until paid); `rate`: a short one. */
  kind: 'rate' | 'plan';
  /** When the answer says to try again (ms since the epoch), or null when it does not say. */
  resetAt: number | null;
  /** `429 <type or code>: <the message's first line>`. */
  said: string;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** gemini's `details` entries of one `@type` (`QuotaFailure`, `RetryInfo`, `ErrorInfo`). */
function details(err: Obj, type: string): Obj[] {
  const all = Array.isArray(err.details) ? err.details : [];
  return all.map(obj).filter((d): d is Obj => d !== null && String(d['@type']).endsWith(`.${type}`));
}

/** Whether a gemini error names a per-day quota (the free tier's QuotaFailure, or Code Assist's ErrorInfo). */
function perDay(err: Obj): boolean {
  const ids = details(err, 'QuotaFailure').flatMap((d) => (Array.isArray(d.violations) ? d.violations.map((v) => str(obj(v)?.quotaId)) : []));
  const limits = details(err, 'ErrorInfo').map((d) => str(obj(d.metadata)?.quota_limit));
  return [...ids, ...limits].some((id) => id !== null && /PerDay/i.test(id));
}

/** Whether codex's headers say one of its plan windows is spent. */
function codexSpent(headers: Record<string, string | undefined>): boolean {
  return Object.entries(headers).some(([k, v]) => /^x-codex-(primary|secondary)-used-percent$/i.test(k) && Number(v) >= 100);
}

/** When the body says to try again: codex's `resets_at` / `resets_in_seconds`, gemini's RetryInfo, or the message's `try again in 18.642s`. */
export function resetFromBody(err: Obj, message: string, at: number): number | null {
  if (typeof err.resets_at === 'number') return err.resets_at * 1000;
  if (typeof err.resets_in_seconds === 'number') return at + err.resets_in_seconds * 1000;
  for (const d of details(err, 'RetryInfo')) {
    const delay = goDuration(str(d.retryDelay) ?? '');
    if (delay !== null) return at + delay;
  }
  const inMessage = /\b(?:retry|try again) in (\d[\d.hms]*)/i.exec(message)?.[1]?.replace(/\.$/, '');
  const d = inMessage ? goDuration(inMessage) : null;
  return d === null ? null : at + d;
}

/** The limit an HTTP answer says, seen at `at`; null when it says none (not a 429). */
export function limitOfAnswer(a: HttpAnswer, at: number): AnswerLimit | null {
  if (a.status !== 429) return null;
  const headers = a.headers ?? {};
  const body = Array.isArray(a.body) ? a.body[0] : a.body;
  const err = obj(obj(body)?.error) ?? {};
  const message = str(err.message) ?? '';
  const type = str(err.type) ?? str(err.status);
  const code = str(err.code) ?? (typeof err.code === 'number' ? String(err.code) : null);
  const header = (k: string) => Object.entries(headers).find(([n]) => n.toLowerCase() === k)?.[1];
  const plan =
    // A subscription's limit: its unified status, or one of its windows (5h, 7d, 7d_oi), rejected; not its
    // overage (extra usage) alone, which an allowed answer carries as `rejected` when it is switched off.
    header('anthropic-ratelimit-unified-status') === 'rejected' ||
    unifiedRejectedWindows(headers).length > 0 ||
    type === 'usage_limit_reached' ||
    codexSpent(headers) ||
    // openai's spent credit; DashScope words its per-minute throttle the same way and links its own docs.
    ((type === 'insufficient_quota' || code === 'insufficient_quota') && !/aliyun/i.test(message)) ||
    perDay(err) ||
    /^user_(weekly|monthly)_/.test(code ?? '') ||
    /free allocated quota exceeded/i.test(message);
  const name = [type, code].find((x) => x !== null && !/^\d+$/.test(x)) ?? 'Too Many Requests';
  return {
    kind: plan ? 'plan' : 'rate',
    resetAt: resetFromBody(err, message, at) ?? resetFromHeaders(headers, at),
    said: `429 ${name}${message ? `: ${message.split('\n')[0]!}` : ''}`,
  };
}
