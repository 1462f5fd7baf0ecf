// When a usage or rate limit resets, read from what the CLI printed (pure). The CLIs print it as a time
// of day in the pane's time zone (claude `resets 10:14pm (UTC)`, codex `try again at 11:53 PM.`, gemini
// `Access resets at 8:43 PM UTC.`), a duration (`try again in 2 hours 5 minutes`, `Retrying in 60
// seconds`), or claude's headless `usage limit reached|<epoch seconds>`. docs/limits.md lists them.

export interface LimitReading {
  /** When the limit resets (ms since the epoch), or null when the text does not say. */
  resetAt: number | null;
  /** The words that said so, for `why`. */
  said: string | null;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** The offset of `zone` from UTC at `at`, in ms (positive east of Greenwich); 0 for a zone Intl does not know. */
export function zoneOffset(at: number, zone: string): number {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(new Date(at));
  } catch {
    return 0;
  }
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour') % 24, n('minute'), n('second'));
  return wall - Math.floor(at / 1000) * 1000;
}

/** The instant that reads `y-m-d h:mi` on a wall clock in `zone`. */
function wallToInstant(y: number, m: number, d: number, h: number, mi: number, zone: string): number {
  const guess = Date.UTC(y, m, d, h, mi);
  const first = guess - zoneOffset(guess, zone);
  return guess - zoneOffset(first, zone);
}

function wallDate(at: number, zone: string): { y: number; m: number; d: number } {
  const t = new Date(at + zoneOffset(at, zone));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth(), d: t.getUTCDate() };
}

/** A zone named in the text (`UTC`, `(Europe/Paris)`), else the pane's. */
function zoneIn(text: string, fallback: string): string {
  const named = /\(([A-Za-z_]+(?:\/[A-Za-z_+-]+)+)\)/.exec(text)?.[1];
  if (named && zoneOffsetKnown(named)) return named;
  if (/\bUTC\b|\bGMT\b/.test(text)) return 'UTC';
  return fallback;
}

function zoneOffsetKnown(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `2 hours 5 minutes`, `60 seconds`, `3d 4h`: a duration in ms, or null. */
function durationOf(text: string): number | null {
  let ms = 0;
  let found = false;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(d(?:ays?)?|h(?:ours?|rs?)?|m(?:in(?:ute)?s?)?|s(?:ec(?:ond)?s?)?)\b/gi)) {
    ms += Number(m[1]) * UNIT_MS[m[2]![0]!.toLowerCase()]!;
    found = true;
  }
  return found ? ms : null;
}

/**
 * The reset time in `lines` (what a limit rule matched), seen at `at`, for a pane whose clock runs in
 * `zone` (an IANA name; the supervisor's own by default). A time of day is its next occurrence after
 * `at` (a limit never resets in the past); a date before it (`resets Dec 2, 3pm`) is taken as written.
 */
export function readReset(lines: readonly string[], at: number, zone = Intl.DateTimeFormat().resolvedOptions().timeZone): LimitReading {
  const text = lines.join(' ');
  // claude -p: `Claude AI usage limit reached|1736427600`.
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(text);
  if (epoch) return { resetAt: Number(epoch[1]) * 1000, said: epoch[0] };
  // A duration: `try again in 2 hours 5 minutes`, `resets in 3h`, `retry after 30s`, `Retrying in 60 seconds`.
  const dur = /\b(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:days?|hours?|hrs?|minutes?|mins?|seconds?|secs?|[dhms])\b[\s,]*(?:and\s+)?)+)/i.exec(text);
  if (dur) {
    const ms = durationOf(dur[1]!);
    if (ms !== null) return { resetAt: at + ms, said: dur[0].trim() };
  }
  // A time of day, maybe after a date: `resets 10:14pm`, `at 11:53 PM`, `resets at 23:53`, `resets Dec 2, 3pm`,
  // codex's `try again at Jul 10th, 2026 11:52 AM` (a reset on another day), copilot's `reset on April 20, 2026 at 2:00 AM`.
  const tod =
    /\b(?:resets?|reset at|try again at|again at|until)\b[^0-9]{0,12}?(?:\b([A-Z][a-z]{2,8})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?![\d:])/i.exec(
      text,
    );
  if (tod) {
    let h = Number(tod[4]);
    const mi = Number(tod[5] ?? 0);
    const ampm = tod[6]?.toLowerCase().replace(/\./g, '');
    // A bare number with neither minutes nor am/pm is no time of day (`resets in 5`).
    if ((tod[5] !== undefined || ampm) && h <= 23 && mi <= 59 && (!ampm || (h >= 1 && h <= 12))) {
      if (ampm === 'pm' && h < 12) h += 12;
      if (ampm === 'am' && h === 12) h = 0;
      const z = zoneIn(text, zone);
      const month = tod[1] ? MONTHS.indexOf(tod[1].slice(0, 3).toLowerCase()) : -1;
      const said = tod[0].trim();
      if (month >= 0) {
        const y = tod[3] ? Number(tod[3]) : wallDate(at, z).y;
        let t = wallToInstant(y, month, Number(tod[2]), h, mi, z);
        // `Jan 2` seen on Dec 30 is next year's (when no year is written).
        if (!tod[3] && t < at - 86_400_000) t = wallToInstant(y + 1, month, Number(tod[2]), h, mi, z);
        return { resetAt: t, said };
      }
      const { y, m, d } = wallDate(at, z);
      let t = wallToInstant(y, m, d, h, mi, z);
      if (t <= at) t = wallToInstant(y, m, d + 1, h, mi, z);
      return { resetAt: t, said };
    }
  }
  return { resetAt: null, said: null };
}

/** A Go-style duration as openai's headers and messages write it (`120ms`, `6m0s`, `18.642s`, `1h2m`), in ms; null when it is none. */
export function goDuration(text: string): number | null {
  const t = text.trim();
  if (!/^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/.test(t)) return null;
  let ms = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) ms += Number(m[1]) * (m[2] === 'ms' ? 1 : UNIT_MS[m[2]!]!);
  return Math.round(ms);
}

/** anthropic's subscription windows (`5h`, `7d`, `7d_oi`...) whose `anthropic-ratelimit-unified-<window>-status` is `rejected`. */
export function unifiedRejectedWindows(headers: Record<string, string | undefined>): string[] {
  return Object.entries(headers).flatMap(([k, v]) => {
    const w = /^anthropic-ratelimit-unified-(\d[a-z0-9_]*)-status$/i.exec(k)?.[1];
    return w && v?.trim() === 'rejected' ? [w.toLowerCase()] : [];
  });
}

/**
 * When anthropic's subscription limit lifts (epoch seconds in the headers), from lower-cased headers; null
 * when they say none. A rejected window's own `-reset` (the latest, when several are: the limiter needs them
 * all), else `anthropic-ratelimit-unified-reset`, which follows the representative claim's window. An answer
 * whose unified status is `allowed` or `allowed_warning` with no window rejected waits for nothing: its
 * reset is only when the window rolls over.
 */
function unifiedReset(lower: Record<string, string | undefined>): number | null {
  const epoch = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) * 1000 : null);
  const rejected = unifiedRejectedWindows(lower)
    .map((w) => epoch(lower[`anthropic-ratelimit-unified-${w}-reset`]))
    .filter((t): t is number => t !== null);
  if (rejected.length > 0) return Math.max(...rejected);
  if (/^allowed(_warning)?$/.test(lower['anthropic-ratelimit-unified-status'] ?? '')) return null;
  return epoch(lower['anthropic-ratelimit-unified-reset']);
}

/**
 * How an HTTP answer's headers say when to try again (test/fixtures/limits/http/ holds real ones), or null:
 * anthropic's subscription reset (`unifiedReset`); `retry-after-ms`;
 * `retry-after` (seconds or an HTTP date); codex's plan windows spent (`x-codex-primary-used-percent: 100`
 * with `x-codex-primary-reset-at`, epoch seconds); else the latest reset of the limits with nothing left:
 * anthropic's `anthropic-ratelimit-<limit>-remaining: 0` with its `-reset` (RFC 3339), openai's
 * `x-ratelimit-remaining-<limit>: 0` with `x-ratelimit-reset-<limit>` (a duration, `6m0s`).
 */
export function resetFromHeaders(headers: Record<string, string | undefined>, at: number): number | null {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v?.trim()]));
  const h = (k: string) => lower[k] || undefined;
  const unified = unifiedReset(lower);
  if (unified !== null) return unified;
  const afterMs = h('retry-after-ms');
  if (afterMs && /^\d+(\.\d+)?$/.test(afterMs)) return at + Math.round(Number(afterMs));
  const after = h('retry-after');
  if (after !== undefined) {
    if (/^\d+(\.\d+)?$/.test(after)) return at + Number(after) * 1000;
    const t = Date.parse(after);
    if (!Number.isNaN(t)) return t;
  }
  const spent: number[] = [];
  for (const w of ['primary', 'secondary']) {
    const used = Number(h(`x-codex-${w}-used-percent`));
    const resetAt = h(`x-codex-${w}-reset-at`);
    const afterS = h(`x-codex-${w}-reset-after-seconds`);
    if (!(used >= 100)) continue;
    if (resetAt && /^\d+$/.test(resetAt)) spent.push(Number(resetAt) * 1000);
    else if (afterS && /^\d+$/.test(afterS)) spent.push(at + Number(afterS) * 1000);
  }
  for (const [k, v] of Object.entries(lower)) {
    const anthropic = /^anthropic-ratelimit-(.+)-remaining$/.exec(k);
    if (anthropic && v === '0') {
      const t = Date.parse(h(`anthropic-ratelimit-${anthropic[1]!}-reset`) ?? '');
      if (!Number.isNaN(t)) spent.push(t);
    }
    const openai = /^x-ratelimit-remaining-(.+)$/.exec(k);
    if (openai && v === '0') {
      const d = goDuration(h(`x-ratelimit-reset-${openai[1]!}`) ?? '');
      if (d !== null) spent.push(at + d);
    }
  }
  return spent.length > 0 ? Math.max(...spent) : null;
}
