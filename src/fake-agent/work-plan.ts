// The planner's work reply: a short numbered plan built from the brief's own words. Pure.
import type { Source, Unit } from './work-text.js';
import { actionOf, actionPhrase, capitalize, clip, sourceOf, stepCountOf, subjectOf, unitOf } from './work-text.js';

const SOURCE_PHRASE: Record<Source, string> = {
  file: 'the file named on the command line',
  stdin: 'the text on standard input',
  url: 'the URL given on the command line',
};

const HOW: Record<Unit, string> = {
  words: 'split the text on runs of whitespace and skip empty pieces',
  lines: 'split the text on newlines and do not count a final empty line',
  characters: 'count code points, so é and 世 are one each',
  bytes: 'take the byte length of the raw input',
};

/** Steps a longer plan for a tool adds, in this order, before its last step. */
const EXTRA_STEPS = [
  'Add --help and an error message that names the bad argument.',
  'Stream large inputs instead of reading them whole.',
  'Document the usage in the README with one example.',
];

/** Steps a longer plan for other work adds, in this order, before its last step. */
const EXTRA_TASK_STEPS = [
  'List what is out of scope, so the change stays small.',
  'Note how to undo it if it goes wrong.',
  'Update the docs where they describe this.',
];

/** The plan's lines: its title, then `n` numbered steps (first, middle, extras, last; with two, middle and last merge). */
function numbered(subject: string, n: number, first: string, middle: string, extras: readonly string[], last: string): string[] {
  const lower = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);
  const steps = n === 2 ? [first, `${middle.slice(0, -1)}, then ${lower(last)}`] : [first, middle, ...extras.slice(0, n - 3), last];
  return [`Plan: ${subject}`, ...steps.map((s, i) => `${i + 1}. ${s}`)];
}

export function planReply(body: string): string[] {
  const subject = subjectOf(body);
  const n = stepCountOf(body);
  const text = `${subject}\n${body}`;
  if (!/\b(?:tool|script|command|cli|program|utility|app|filter)\b/i.test(text)) {
    const pin = `Pin down "${clip(subject, 50)}": what goes in, what should come out, one example.`;
    return numbered(
      subject,
      n,
      pin,
      'Make the smallest change that does it, in one place.',
      EXTRA_TASK_STEPS,
      'Check it: one test for the normal case and one for bad input.',
    );
  }
  const source = sourceOf(text);
  const unit = unitOf(subject) ?? unitOf(body);
  const action = actionOf(subject);
  const counting = unit !== undefined && /\bcount/i.test(text);

  const read =
    source === 'stdin'
      ? `Read ${SOURCE_PHRASE.stdin}; print a usage line when it is a terminal.`
      : `Read ${SOURCE_PHRASE[source]}; print a usage line and exit 1 when it is missing.`;
  const what = action ? capitalize(clip(actionPhrase(action), 50)) : `Do the core work of "${clip(subject, 40)}"`;
  const work = `${what}: ${counting && unit ? HOW[unit] : 'keep it in one pure function, text in and result out'}.`;
  const missing = source === 'url' ? 'an unreachable URL' : source === 'stdin' ? 'no input' : 'a missing file';
  const print = `Print ${counting ? 'the count' : 'the result'} to stdout; test an empty input, unicode text and ${missing}.`;
  return numbered(subject, n, read, work, EXTRA_STEPS, print);
}
