import type { DetectRule } from '../profiles/schema.js';

import type { Classification } from './reading.js';

export type { Classification, ScreenStatus } from './reading.js';

export interface DetectInput {
  /** The rendered screen (capture-pane text). */
  screen: string;
  /** Recent raw output with escape sequences removed (read only where a rule looks at it: a getter may stand here). */
  readonly raw: string;
  rules: readonly DetectRule[];
}

/** The last `n` non-empty lines of a screen: prompts and menus are judged here, not in scrollback. */
export function bottomLines(screen: string, n: number): string[] {
  return bottomOf(screen.split('\n'), n);
}

function bottomOf(lines: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (let i = lines.length - 1; i >= 0 && out.length < n; i--) {
    const l = lines[i]!.trimEnd();
    if (l.trim() !== '') out.push(l);
  }
  return out.reverse();
}

/** The first `n` non-empty lines of a screen: what a CLI draws above everything else. */
export function topLines(screen: string, n: number): string[] {
  return topOf(screen.split('\n'), n);
}

function topOf(lines: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (out.length >= n) break;
    const l = line.trimEnd();
    if (l.trim() !== '') out.push(l);
  }
  return out;
}

const compiled = new Map<string, RegExp>();
/** A rule pattern compiled once (multi-line, unicode). */
export function regexOf(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(pattern, 'mu');
    compiled.set(pattern, re);
  }
  return re;
}

/**
 * Decide a pane's status from its screen: rules are checked in order (profiles put busy evidence
 * before idle evidence) and the first that matches a line of its region decides.
 */
export function classify(input: DetectInput): Classification {
  // The screen is split once, the raw output read only if a rule looks at it.
  let lines: string[] | undefined;
  let rawLines: string[] | undefined;
  for (const rule of input.rules) {
    const region =
      rule.region === 'bottom'
        ? bottomOf((lines ??= input.screen.split('\n')), rule.lines)
        : rule.region === 'top'
          ? topOf((lines ??= input.screen.split('\n')), rule.lines)
          : rule.region === 'screen'
            ? (lines ??= input.screen.split('\n'))
            : (rawLines ??= input.raw.split('\n'));
    const re = regexOf(rule.pattern);
    const hits = region.filter((l) => re.test(l));
    if (hits.length > 0) return { status: rule.status, rule: rule.name, lines: hits.slice(0, 5) };
  }
  return { status: 'unknown', rule: null, lines: [] };
}

/**
 * The done evidence (a turn summary) a screen shows, whatever else it shows: what the first done rule
 * that matches finds, as the terminal machine keeps it (its lines joined), or null for none.
 */
export function doneEvidence(input: DetectInput): string | null {
  const c = classify(
    withRules(
      input,
      input.rules.filter((r) => r.status === 'done'),
    ),
  );
  return c.status === 'done' ? c.lines.join('\n') : null;
}

/**
 * Classify, where a usage limit whose reset already passed (its matched lines `passed`) may still be on
 * screen: that old line says nothing now, and the screen reads as the other rules say (busy, idle).
 */
export function classifyAfterLimit(input: DetectInput, passed: string | null): Classification {
  const c = classify(input);
  if (c.status !== 'limited' || passed === null || c.lines.join('\n') !== passed) return c;
  return classify(
    withRules(
      input,
      input.rules.filter((r) => r.status !== 'limited'),
    ),
  );
}

/** The same input with other rules (its raw output still read only when asked: a spread would read it now). */
function withRules(input: DetectInput, rules: readonly DetectRule[]): DetectInput {
  return {
    screen: input.screen,
    rules,
    get raw() {
      return input.raw;
    },
  };
}

/** A reply no longer than this (non-empty lines) can be a CLI's limit message; a longer one is an answer that may talk about limits. */
const LIMIT_REPLY_LINES = 3;

/**
 * The lines of a turn's reply (from the CLI's transcript, its hook or its headless output) that the
 * profile's `limited` rules match: a turn that ended at a usage limit, whatever the screen shows. Only a
 * short reply counts (the limit's message alone), never an answer that quotes one. Null for none.
 */
export function limitInReply(reply: string, rules: readonly DetectRule[]): string[] | null {
  const lines = reply.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0 || lines.length > LIMIT_REPLY_LINES) return null;
  const limits = rules.filter((r) => r.status === 'limited').map((r) => regexOf(r.pattern));
  const hits = lines.filter((l) => limits.some((re) => re.test(l)));
  return hits.length > 0 ? hits : null;
}
