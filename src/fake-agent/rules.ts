// Reply rules: user rules from --rules first (first match wins), then the defaults: a prompt that
// names a readable file gets that file's hash and first body line, anything else is echoed.
import { createHash } from 'node:crypto';
import { firstLine, takeCodePoints } from './text.js';

export interface Rule {
  re: RegExp;
  reply: string;
}

/** Reads a file named in a prompt; undefined when it is not a readable regular file. */
export type ReadFile = (path: string) => Buffer | undefined;

export type RulesResult = { ok: true; rules: Rule[] } | { ok: false; message: string };

/** How many whitespace-separated tokens of a prompt are tried as file paths. */
const MAX_PATH_TOKENS = 200;

export function parseRules(data: unknown, where: string): RulesResult {
  if (!Array.isArray(data)) return { ok: false, message: `${where}: must be a JSON array of {"match", "reply"}, got ${kindOf(data)}` };
  const rules: Rule[] = [];
  for (const [i, item] of data.entries()) {
    const at = `${where}: [${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return { ok: false, message: `${at} must be an object, got ${kindOf(item)}` };
    }
    const { match, reply, flags } = item as Record<string, unknown>;
    if (typeof match !== 'string') return { ok: false, message: `${at}.match must be a string, got ${kindOf(match)}` };
    if (typeof reply !== 'string') return { ok: false, message: `${at}.reply must be a string, got ${kindOf(reply)}` };
    if (flags !== undefined && typeof flags !== 'string') {
      return { ok: false, message: `${at}.flags must be a string, got ${kindOf(flags)}` };
    }
    try {
      rules.push({ re: new RegExp(match, flags ?? ''), reply });
    } catch (e) {
      return { ok: false, message: `${at}.match is not a valid regular expression: ${(e as Error).message}` };
    }
  }
  return { ok: true, rules };
}

function kindOf(v: unknown): string {
  const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  const shown = JSON.stringify(v) ?? String(v);
  return `${shown.length > 40 ? `${shown.slice(0, 37)}...` : shown} (${type})`;
}

/** `$1`..`$99` become capture groups, `$&` the whole match, `$$` a dollar sign. */
export function expandReply(template: string, m: RegExpExecArray): string {
  return template.replace(/\$(\$|&|\d{1,2})/g, (whole, ref: string) => {
    if (ref === '$') return '$';
    if (ref === '&') return m[0];
    const n = Number(ref);
    return n < m.length ? (m[n] ?? '') : whole;
  });
}

export interface Digest {
  bytes: number;
  sha256: string;
}

export function digest(data: string | Buffer): Digest {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return { bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex') };
}

/** The first non-empty line after an optional leading `---` front-matter block. */
export function firstBodyLine(content: string): string | undefined {
  const lines = content.split(/\r?\n/);
  let start = 0;
  if (lines[0]?.trim() === '---') {
    const close = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    start = close === -1 ? lines.length : close + 1;
  }
  return lines
    .slice(start)
    .find((l) => l.trim() !== '')
    ?.trimEnd();
}

/** Candidate paths in a prompt: each token as written, then without quotes, `@` and trailing punctuation. */
export function pathCandidates(prompt: string): string[] {
  const out: string[] = [];
  const tokens = prompt
    .slice(0, 64 * 1024)
    .split(/\s+/)
    .slice(0, MAX_PATH_TOKENS);
  for (const token of tokens) {
    if (token === '' || token.length > 1024) continue;
    const stripped = token.replace(/^[@('"`[]+/, '').replace(/[.,;:!?)'"`\]]+$/, '');
    for (const c of [token, stripped]) if (c !== '' && !out.includes(c)) out.push(c);
  }
  return out;
}

export function findNonces(prompt: string): string[] {
  const found = prompt.match(/\[jg:[A-Za-z0-9_-]+\]/g) ?? [];
  return [...new Set(found)];
}

/** The rule-chosen reply lines (without the turn header and the received/nonce lines). */
export function ruleReply(prompt: string, rules: readonly Rule[], readFile: ReadFile): string[] {
  const ruled = userRuleReply(prompt, rules);
  if (ruled) return ruled;
  const file = namedFile(prompt, readFile);
  if (file) {
    const d = digest(file.content);
    const answer = firstBodyLine(file.content.toString('utf8')) ?? '(empty)';
    return [`read ${file.path} (${d.bytes} bytes, sha256:${d.sha256})`, `answer: ${answer}`];
  }
  return [`You said: ${takeCodePoints(oneLine(prompt), 200)}`];
}

/** The reply of the first user rule that matches the prompt, if one does. */
export function userRuleReply(prompt: string, rules: readonly Rule[]): string[] | undefined {
  for (const rule of rules) {
    rule.re.lastIndex = 0;
    const m = rule.re.exec(prompt);
    if (m) return expandReply(rule.reply, m).split(/\r?\n/);
  }
  return undefined;
}

/** The first path in the prompt that is a readable file, and its content. */
export function namedFile(prompt: string, readFile: ReadFile): { path: string; content: Buffer } | undefined {
  for (const candidate of pathCandidates(prompt)) {
    const content = readFile(candidate);
    if (content !== undefined) return { path: candidate, content };
  }
  return undefined;
}

/** The prompt as one line: line breaks become spaces. */
export function oneLine(prompt: string): string {
  return prompt.slice(0, 4096).replace(/\r?\n/g, ' ');
}

/**
 * How a prompt is shown in the transcript and in /history, and kept in the session: its first line, whole
 * (of its first 4096 characters), as the real CLIs echo and record a prompt. A shorter cut hid the
 * `[jg:<nonce>]` at the end of a long pointer (a host's agent reads `.jaggers/hosted/<session>/...`)
 * from the screen and the session both, so a supervisor started after a crash found the prompt nowhere
 * and typed it again.
 */
export function promptPreview(prompt: string): string {
  return firstLine(prompt.slice(0, 4096));
}
