// The model services' limit answers, as they send them (status, headers, body), for the stub model server:
// a script that returns a LimitReply gets, for the request's wire format, the service's own answer. Each is
// shaped on the real answers kept in test/fixtures/limits/http/ (with where each was captured), and
// stub-limits.test.ts checks the two agree (status, header names and formats, body fields).
// - `rate`: the per-minute rate limit (HTTP 429). anthropic: `rate_limit_error` with retry-after and its
//   `anthropic-ratelimit-*` headers (resets in RFC 3339); openai: `rate_limit_exceeded` with the
//   `x-ratelimit-*` headers (resets as durations, `30s`); gemini: `RESOURCE_EXHAUSTED` with a
//   `RetryInfo` delay and no retry-after (Google sends none).
// - `plan`: the plan's or the day's limit. anthropic: the subscription's `unified` headers (status
//   `rejected`, its 5-hour window rejected, resets as epoch seconds) with retry-after; openai (codex's ChatGPT plan): `usage_limit_reached` with
//   `resets_at` and the `x-codex-*` window headers codex reads; gemini: the daily quota (a per-day quota id).
//   All three follow captures (anthropic's subscription headers: a 200's and two 429s, none whole).
// qwen, opencode and copilot talk to the stub as an OpenAI-compatible provider, so they get openai's answer
// (what such a provider sends); DashScope's and Copilot's own answers are fixtures only.
import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './stub-requests.js';

export interface LimitReply {
  kind: 'limit';
  limit: 'rate' | 'plan';
  /** Seconds until the limit resets (default 30 for a rate limit, 5 hours for a plan's). */
  resetInS?: number;
}

export interface LimitAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function anthropic(reply: LimitReply, now: number, requestId: string): LimitAnswer {
  const inS = reply.resetInS ?? (reply.limit === 'rate' ? 30 : 5 * 3600);
  const reset = now + inS * 1000;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'request-id': requestId,
    server: 'cloudflare',
    'x-should-retry': reply.limit === 'rate' ? 'true' : 'false',
  };
  if (reply.limit === 'rate') {
    Object.assign(headers, {
      'retry-after': String(inS),
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': iso(reset),
      'anthropic-ratelimit-input-tokens-limit': '30000',
      'anthropic-ratelimit-input-tokens-remaining': '0',
      'anthropic-ratelimit-input-tokens-reset': iso(reset),
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': '8000',
      'anthropic-ratelimit-output-tokens-reset': iso(now),
      'anthropic-ratelimit-tokens-limit': '38000',
      'anthropic-ratelimit-tokens-remaining': '8000',
      'anthropic-ratelimit-tokens-reset': iso(reset),
    });
    return {
      status: 429,
      headers,
      body: {
        type: 'error',
        error: {
          type: 'rate_limit_error',
          message:
            'This request would exceed the rate limit for your organization (00000000-0000-0000-0000-000000000000) of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.',
        },
        request_id: requestId,
      },
    };
  }
  // As the captures have them (anthropic-429-unified-*.json, anthropic-200-unified-allowed-headers.json): the
  // 5-hour window rejected (utilization past 1), the 7-day windows allowed, every window's reset in epoch
  // seconds, the unified reset that of the representative claim's window, and retry-after in seconds.
  const resetS = String(Math.floor(reset / 1000));
  const weekS = String(Math.floor((reset + 3 * 86400_000) / 1000));
  Object.assign(headers, {
    'retry-after': String(inS),
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': resetS,
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
    'anthropic-ratelimit-unified-5h-status': 'rejected',
    'anthropic-ratelimit-unified-5h-reset': resetS,
    'anthropic-ratelimit-unified-5h-utilization': '1.08',
    'anthropic-ratelimit-unified-7d-status': 'allowed',
    'anthropic-ratelimit-unified-7d-reset': weekS,
    'anthropic-ratelimit-unified-7d-utilization': '0.69',
    'anthropic-ratelimit-unified-7d_oi-status': 'allowed',
    'anthropic-ratelimit-unified-7d_oi-reset': weekS,
    'anthropic-ratelimit-unified-7d_oi-utilization': '0.0',
    'anthropic-ratelimit-unified-fallback-percentage': '0.5',
    'anthropic-ratelimit-unified-overage-status': 'rejected',
    'anthropic-ratelimit-unified-overage-disabled-reason': 'org_level_disabled',
  });
  return {
    status: 429,
    headers,
    body: {
      type: 'error',
      // The message of the subscription's refusal claude printed (anthropic-429-account-rate-limit-body.json).
      error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." },
      request_id: requestId,
    },
  };
}

function openai(reply: LimitReply, now: number, requestId: string): LimitAnswer {
  const inS = reply.resetInS ?? (reply.limit === 'rate' ? 30 : 5 * 3600);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': requestId };
  if (reply.limit === 'rate') {
    Object.assign(headers, {
      // The API's own headers on a 429 (openai-429-responses-api-headers.json).
      'openai-organization': 'org-stub',
      'openai-processing-ms': '12',
      'openai-version': '2020-10-01',
      server: 'cloudflare',
      'strict-transport-security': 'max-age=31536000; includeSubDomains; preload',
      'x-content-type-options': 'nosniff',
      'retry-after': String(inS),
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-remaining-requests': '499',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-limit-tokens': '30000',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': `${inS}s`,
    });
    return {
      status: 429,
      headers,
      body: {
        error: {
          message: `Rate limit reached for gpt-5 in organization org-stub on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in ${inS}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    };
  }
  const resetsAt = Math.floor((now + inS * 1000) / 1000);
  // The windows as codex-429-usage-limit-reached-plus.json has them: the 5-hour one spent, the weekly not.
  Object.assign(headers, {
    'x-codex-active-limit': 'premium',
    'x-codex-plan-type': 'plus',
    'x-codex-primary-used-percent': '100',
    'x-codex-secondary-used-percent': '80',
    'x-codex-primary-window-minutes': '300',
    'x-codex-primary-over-secondary-limit-percent': '0',
    'x-codex-secondary-window-minutes': '10080',
    'x-codex-primary-reset-after-seconds': String(inS),
    'x-codex-secondary-reset-after-seconds': String(inS + 3 * 86400),
    'x-codex-primary-reset-at': String(resetsAt),
    'x-codex-secondary-reset-at': String(resetsAt + 3 * 86400),
    'x-codex-credits-has-credits': 'False',
    'x-codex-credits-balance': '0',
    'x-codex-credits-unlimited': 'False',
  });
  return {
    status: 429,
    headers,
    body: {
      error: {
        type: 'usage_limit_reached',
        message: 'The usage limit has been reached',
        plan_type: 'plus',
        resets_at: resetsAt,
        eligible_promo: null,
        resets_in_seconds: inS,
      },
    },
  };
}

function gemini(reply: LimitReply): LimitAnswer {
  const daily = reply.limit === 'plan';
  const inS = reply.resetInS ?? (daily ? 6 * 3600 : 43);
  const model = 'gemini-2.5-pro';
  const help = {
    '@type': 'type.googleapis.com/google.rpc.Help',
    links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
  };
  const quota = {
    '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
    violations: [
      {
        quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
        quotaId: daily ? 'GenerateRequestsPerDayPerProjectPerModel-FreeTier' : 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
        quotaDimensions: { location: 'global', model },
        quotaValue: daily ? '100' : '5',
      },
    ],
  };
  return {
    status: 429,
    // As gemini-429-headers.json: Google's front end, no retry-after.
    headers: {
      'content-type': 'application/json; charset=UTF-8',
      vary: 'Origin, X-Origin, Referer',
      server: 'ESF',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
    },
    body: {
      error: {
        code: 429,
        // As gemini-429-free-tier-per-day.json (2026): the quota named in the message, then when to retry.
        message: `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: ${daily ? 100 : 5}, model: ${model}\nPlease retry in ${inS}.${String(inS * 7919).slice(-6)}s.`,
        status: 'RESOURCE_EXHAUSTED',
        details: [help, quota, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${inS}s` }],
      },
    },
  };
}

/** The service's limit answer for this request's wire format. */
export function limitAnswer(req: Pick<RecordedRequest, 'api'>, reply: LimitReply, now: number, requestId: string): LimitAnswer {
  switch (req.api) {
    case 'anthropic':
      return anthropic(reply, now, requestId);
    case 'openai-chat':
    case 'openai-responses':
      return openai(reply, now, requestId);
    case 'gemini':
      return gemini(reply);
    default:
      return { status: 404, headers: { 'content-type': 'application/json' }, body: { error: { message: 'stub: no limit answer for this route' } } };
  }
}

export function sendLimit(res: ServerResponse, a: LimitAnswer): void {
  res.writeHead(a.status, a.headers);
  res.end(JSON.stringify(a.body));
}
