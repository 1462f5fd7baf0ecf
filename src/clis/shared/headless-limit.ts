// A usage or rate limit in what a headless run printed (docs/limits.md), read for every CLI alike: the
// service's 429, gemini's RESOURCE_EXHAUSTED, a plan's "usage limit". Where a CLI prints JSON events
// (claude --output-format json, codex exec --json, opencode run --format json, gemini's error bodies on
// stderr), their error events are read; else the plain lines of a failed run, or a reply that is a
// limit's message alone. Pure: the run's text in, the lines that say so out (each CLI's own words,
// `readReset` reads their reset time; a JSON delay or reset instant becomes `try again in N seconds`).
import { resetFromBody } from '../../detect/limit-answer.js';
import { jsonObjects } from './jsonl.js';

export interface HeadlessOutput {
  stdout: string;
  stderr: string;
  /** The run's exit status. */
  status: number;
  /** The profile's `limited` rules' patterns. */
  rules: readonly RegExp[];
  /** When the run ended (ms since the epoch): a reset instant is said as a duration from it. */
  at: number;
  /** A run that exited 0: the reply read from it. An error event of a run that still answered (a retry) is no limit. */
  reply?: string;
}

/** What services and CLIs say at a limit, besides a profile's own rules. */
const LIMIT_WORDS =
  /\b429\b|RESOURCE_EXHAUSTED|usage[ _]limit|rate[ _]limit|hit your [\w-]+ limit|exhausted your (?:daily )?quota|quota exceeded|exceeded your (?:current )?quota|insufficient_quota|Too Many Requests/i;

/** A reply no longer than this (non-empty lines) can be a limit's message alone; a longer one is an answer. */
const ALONE_LINES = 3;
const LINE_MAX = 300;

/** The lines of a headless run's output that say it stopped at a usage or rate limit; null when none do. */
export function headlessLimit(o: HeadlessOutput): string[] | null {
  const says = (t: string) => LIMIT_WORDS.test(t) || o.rules.some((r) => r.test(t));
  const plain = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('{'));
  const answered = o.status === 0 && o.reply !== undefined && o.reply.trim() !== '' && !alone(plain(o.reply), says);
  const fromJson = answered ? [] : [...jsonObjects(o.stdout), ...stderrObjects(o.stderr)].flatMap((e) => errorLines(e, o.at)).filter(says);
  if (fromJson.length > 0) return cut(fromJson);
  if (o.status !== 0) {
    const hits = [...plain(o.stderr), ...plain(o.stdout)].filter(says);
    return hits.length > 0 ? cut(hits) : null;
  }
  const hits = alone(plain(o.reply ?? o.stdout), says);
  return hits ? cut(hits) : null;
}

/** The lines of a reply that is a limit's message alone (a few lines, one of them saying so), or null. */
function alone(lines: string[], says: (t: string) => boolean): string[] | null {
  if (lines.length === 0 || lines.length > ALONE_LINES) return null;
  const hits = lines.filter(says);
  return hits.length > 0 ? hits : null;
}

const cut = (lines: string[]) => [...new Set(lines.map((l) => l.trim().slice(0, LINE_MAX)))].slice(0, ALONE_LINES);

/** JSON objects on stderr lines, also after a prefix (`ApiError: {"error":...}`). */
function stderrObjects(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').flatMap((l) => {
    const i = l.indexOf('{');
    return i < 0 ? [] : jsonObjects(l.slice(i));
  });
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/**
 * An error event's words: its message (codex `error` / `turn.failed`, opencode `error.data.message`,
 * gemini's `error.message` and `status`, claude's `result` when `is_error`), its HTTP status, and how
 * long until it resets where the event says (gemini's RetryInfo `retryDelay`, codex's `resets_at`,
 * `resets_in_seconds`). None for an event that is no error.
 */
function errorLines(e: Obj, at: number): string[] {
  const err = obj(e.error);
  const data = obj(err?.data);
  const isError = e.type === 'error' || e.type === 'turn.failed' || e.is_error === true || err !== null;
  if (!isError) return [];
  const words = [str(e.message), str(err?.message), str(data?.message), e.is_error === true ? str(e.result) : null, str(err?.status), str(err?.type)].filter(
    (w): w is string => w !== null,
  );
  const code = [e.api_error_status, err?.code, data?.statusCode, e.status].find((c) => typeof c === 'number');
  const text = [...new Set(words)].join(' · ') + (code !== undefined && !words.some((w) => w.includes(String(code))) ? ` (HTTP ${String(code)})` : '');
  const wait = waitOf(e, err, at);
  // The wait goes last and is kept whole when a long message (gemini's names each quota on its own line) is cut.
  const tail = wait === null ? '' : ` · try again in ${wait} seconds`;
  return text === '' ? [] : [text.replace(/\s*\n\s*/g, ' ').slice(0, LINE_MAX - tail.length) + tail];
}

/** Seconds until the limit resets, where the event gives it (as an HTTP answer's body does); null when it does not. */
function waitOf(e: Obj, err: Obj | null, at: number): number | null {
  const t = resetFromBody(err ?? {}, '', at) ?? resetFromBody(e, '', at);
  return t === null ? null : Math.max(0, Math.ceil((t - at) / 1000));
}
