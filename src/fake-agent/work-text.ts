// Reading a handover for the work replies (`--replies work`): its body, its sentences, the task's
// subject and the few words (words, lines, file, stdin...) that steer the templates. Pure.
import { fitWidth, stringWidth } from './text.js';

/** The text after a leading `---` front-matter block, line breaks as `\n`, blank lines off both ends. */
export function handoverBody(text: string): string {
  const t = text.replace(/\r\n?/g, '\n');
  const m = /^---\n[\s\S]*?\n---(?:\n|$)/.exec(t);
  const lines = (m ? t.slice(m[0].length) : t).split('\n');
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === '') start++;
  while (end > start && lines[end - 1]!.trim() === '') end--;
  return lines.slice(start, end).join('\n');
}

/** One line of input made safe to echo: control characters and tabs become spaces, runs of spaces one. */
export function clean(s: string): string {
  return s
    .replace(/[\x00-\x1f\x7f-\x9f]/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/** `s` cut to `cells` terminal cells, with `…` when something was cut. */
export function clip(s: string, cells: number): string {
  if (stringWidth(s) <= cells) return s;
  return `${fitWidth(s, cells - 1).trimEnd()}…`;
}

export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The body's sentences: split at line breaks and after `.`, `!` or `?` followed by a space. */
export function sentences(body: string): string[] {
  return body
    .split('\n')
    .flatMap((line) => line.split(/(?<=[.!?])\s+/))
    .map(clean)
    .filter((s) => s !== '');
}

export interface NumberedStep {
  /** 1-based line of the handover body the step is on. */
  line: number;
  text: string;
}

/** Lines written as `1. ...`, `2) ...` or `- 3. ...`, with markdown bold taken off. */
export function numberedSteps(body: string): NumberedStep[] {
  const out: NumberedStep[] = [];
  body.split('\n').forEach((l, i) => {
    const m = /^\s*(?:[-*]\s+)?\d{1,2}[.)]\s+(.*\S)/.exec(l);
    const text = m ? clean(m[1]!.replace(/\*\*/g, '')) : '';
    if (text !== '') out.push({ line: i + 1, text });
  });
  return out;
}

const IMPERATIVE = /^(?:please\s+)?(?:plan|design|outline|sketch|write|build|create|make|implement|add|code|propose)\s+(?:out\s+|up\s+)?(?:me\s+)?/iu;

/** What the task is about: the first sentence without its leading verb (`Plan a tool that...` -> `a tool that...`). */
export function subjectOf(body: string): string {
  const first = sentences(body)[0] ?? '';
  const bare = first.replace(/^(?:#+\s*|(?:plan|title|goal|task)\s*:\s*)/iu, '');
  const subject = bare
    .replace(IMPERATIVE, '')
    .replace(/[.!?:;,]+$/u, '')
    .replace(/,?\s+(?:in|as|with)\s+(?:two|three|four|five|six|[2-6])\s+(?:\p{L}+\s+)?steps?$/iu, '')
    .trim();
  return clip(subject || bare.replace(/[.!?:;,]+$/u, '') || 'the task', 90);
}

export interface Action {
  /** The verb in the imperative: `counts` -> `count`. */
  verb: string;
  /** What follows the verb: `the words in a file`. */
  rest: string;
}

/** The tool's job, from `...that counts the words in a file` or `...to count the words`. */
export function actionOf(subject: string): Action | undefined {
  const m = /(?:^|\s)(that|which|to)\s+(\p{L}+)\s+(\S.*)$/iu.exec(subject);
  if (!m) return undefined;
  const verb = m[1]!.toLowerCase() === 'to' ? m[2]!.toLowerCase() : baseForm(m[2]!.toLowerCase());
  return { verb, rest: m[3]!.replace(/[.!?:;,]+$/u, '') };
}

/** `counts` -> `count`, `fetches` -> `fetch`, `copies` -> `copy`, `parses` -> `parse`. */
export function baseForm(verb: string): string {
  if (/ies$/u.test(verb)) return `${verb.slice(0, -3)}y`;
  if (/(?:ch|sh|ss|x|z|o)es$/u.test(verb)) return verb.slice(0, -2);
  if (/[^s]s$/u.test(verb)) return verb.slice(0, -1);
  return verb;
}

/** The action without a trailing `in a file` / `from standard input`: the input is said elsewhere. */
export function actionPhrase(action: Action): string {
  const rest = action.rest.replace(
    /\s+(?:in|from|of|inside|within|on)\s+(?:an?|the|each|every|one|any)?\s*(?:given\s+)?(?:files?|inputs?|text|stdin|standard input|urls?|pages?)\b.*$/iu,
    '',
  );
  return `${action.verb} ${rest}`.trim();
}

export type Unit = 'words' | 'lines' | 'characters' | 'bytes';

/** What a counting tool counts, if the text says. */
export function unitOf(text: string): Unit | undefined {
  if (/\bwords?\b/i.test(text)) return 'words';
  if (/\blines?\b/i.test(text)) return 'lines';
  if (/\b(?:characters?|chars?|letters?)\b/i.test(text)) return 'characters';
  if (/\bbytes?\b/i.test(text)) return 'bytes';
  return undefined;
}

export type Source = 'file' | 'stdin' | 'url';

/** Where the tool's input comes from; a file unless the text says standard input or a URL. */
export function sourceOf(text: string): Source {
  if (/\b(?:stdin|standard input|piped?)\b/i.test(text)) return 'stdin';
  if (/\b(?:urls?|https?|web ?pages?)\b/i.test(text)) return 'url';
  return 'file';
}

const NUMBER_WORDS: Record<string, number> = { two: 2, three: 3, four: 4, five: 5, six: 6 };

/** How many steps a plan should have: `three numbered steps` -> 3; 3 when the text does not say. */
export function stepCountOf(text: string): number {
  const m = /\b(two|three|four|five|six|[2-6])\s+(?:\p{L}+\s+)?steps?\b/iu.exec(text);
  if (!m) return 3;
  const word = m[1]!.toLowerCase();
  return NUMBER_WORDS[word] ?? Number(word);
}

const FILLER = new Set(
  (
    'a an the this that these those which who to for of in on at by with and or but from into as is are be ' +
    'small simple tiny little quick basic new command-line command line cli tool tools script program app ' +
    'utility plan steps step numbered write please each every all some its their my your our one'
  ).split(' '),
);

/** A file name for the tool: verb and object (`count-words`), else the subject's first two words. */
export function slugOf(subject: string): string {
  const action = actionOf(subject);
  const words = (s: string): string[] => (s.toLowerCase().match(/[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu) ?? []).filter((w) => !FILLER.has(w));
  const picked = action ? [action.verb, ...words(action.rest)].slice(0, 2) : words(subject).slice(0, 2);
  const slug = picked.join('-').replace(/-+/g, '-');
  return [...slug].slice(0, 24).join('').replace(/-$/, '') || 'tool';
}
