// The demo's work replies (`--replies work`): a plan, a diff or a review made from the handover text
// alone, the same every time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringWidth } from '../../src/fake-agent/text.js';
import { parseDiff } from '../../src/fake-agent/work-review.js';
import { detectRole, roleOfName, workReply } from '../../src/fake-agent/work-reply.js';
import { handoverBody, slugOf, subjectOf } from '../../src/fake-agent/work-text.js';

/** The demo's brief (src/commands/demo.ts). */
const BRIEF = `Plan a small command-line tool that counts the words in a file.
Write the plan as three numbered steps.`;

/** A handover file as jaggers writes it: front matter, then the body. */
const handover = (turn: number, target: string, body: string): string =>
  `---\ntask: t-0a1b2c3d\nworkflow: demo\nturn: ${turn}\nsource_agent: null\ntarget_agent: ${target}\ncreated: 2025-01-01T00:00:00.000Z\n---\n${body}\n`;

/** planner -> coder -> reviewer, each reply the next handover's body, as `jaggers demo` hands them on. */
function chain(brief = BRIEF): { plan: string[]; diff: string[]; review: string[] } {
  const plan = workReply(handover(1, 'planner', brief), { agentName: 'planner' });
  const diff = workReply(handover(3, 'coder', plan.join('\n')), { agentName: 'coder' });
  const review = workReply(handover(5, 'reviewer', diff.join('\n')), { agentName: 'reviewer' });
  return { plan, diff, review };
}

/** Drawn in a 200x50 pane with the prompt, header and input box around it: well under 40 lines, no wrapping. */
function expectCompact(lines: readonly string[]): void {
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.length).toBeLessThanOrEqual(30);
  for (const l of lines) {
    expect(stringWidth(l), l).toBeLessThanOrEqual(190);
    expect(l).not.toMatch(/[\x00-\x08\x0a-\x1f\x7f-\x9f]/);
  }
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('work replies: the planner', () => {
  it('answers the demo brief with a numbered plan in its words', () => {
    expect(chain().plan).toEqual([
      'Plan: a small command-line tool that counts the words in a file',
      '1. Read the file named on the command line; print a usage line and exit 1 when it is missing.',
      '2. Count the words: split the text on runs of whitespace and skip empty pieces.',
      '3. Print the count to stdout; test an empty input, unicode text and a missing file.',
    ]);
  });

  it('takes the number of steps and the input from the brief', () => {
    const plan = workReply('Outline a tool that counts the lines on standard input, in five steps.');
    expect(plan[0]).toBe('Plan: a tool that counts the lines on standard input');
    expect(plan.slice(1).map((l) => /^(\d)\. /.exec(l)?.[1])).toEqual(['1', '2', '3', '4', '5']);
    expect(plan[1]).toContain('standard input');
    expect(plan[2]).toMatch(/^2\. Count the lines: split the text on newlines/);
    expect(workReply('Plan a tool that fetches a web page, in two steps.')).toEqual([
      'Plan: a tool that fetches a web page',
      '1. Read the URL given on the command line; print a usage line and exit 1 when it is missing.',
      '2. Fetch a web page: keep it in one pure function, text in and result out, then print the result to stdout; test an empty input, unicode text and an unreachable URL.',
    ]);
  });
});

describe('work replies: the planner (not a tool)', () => {
  it('plans other work in general steps that name it', () => {
    expect(workReply('Fix the crash in parse.ts when the input is empty. Four steps.', { agentName: 'planner' })).toEqual([
      'Plan: Fix the crash in parse.ts when the input is empty',
      '1. Pin down "Fix the crash in parse.ts when the input is empty": what goes in, what should come out, one example.',
      '2. Make the smallest change that does it, in one place.',
      '3. List what is out of scope, so the change stays small.',
      '4. Check it: one test for the normal case and one for bad input.',
    ]);
  });
});

describe('work replies: the coder', () => {
  it('turns the plan into a unified diff of a script named after it, its steps as comments', () => {
    const { diff } = chain();
    expect(diff[0]).toBe("Implemented the 3-step plan as bin/count-words.js and added it to package.json's bin.");
    expect(diff).toContain('--- /dev/null');
    expect(diff).toContain('+++ b/bin/count-words.js');
    expect(diff).toContain('--- a/package.json');
    expect(diff).toContain('+++ b/package.json');
    expect(diff).toContain('+// 1. Read the file named on the command line');
    expect(diff).toContain('+// 2. Count the words');
    expect(diff).toContain('+// 3. Print the count to stdout');
    expect(diff).toContain('+const result = text.split(/\\s+/).filter(Boolean).length;');
    expect(diff).toContain("+  console.error('usage: count-words <file>');");
    expect(diff).toContain('+  "bin": { "count-words": "bin/count-words.js" },');
  });

  it('writes hunks whose line counts match their lines', () => {
    for (const brief of [BRIEF, 'Plan a tool that counts the bytes from stdin in six steps.', 'Plan a tool that reverses each line']) {
      const diff = chain(brief).diff;
      const headers = diff.flatMap((l, i) => {
        const m = /^@@ -\d+,(\d+) \+\d+,(\d+) @@$/.exec(l);
        return m ? [{ at: i, old: Number(m[1]), new: Number(m[2]) }] : [];
      });
      expect(headers).toHaveLength(2);
      for (const h of headers) {
        const body: string[] = [];
        for (const l of diff.slice(h.at + 1)) {
          if (l.startsWith('--- ') || l.startsWith('@@')) break;
          body.push(l);
        }
        expect(body.filter((l) => !l.startsWith('+')).length).toBe(h.old);
        expect(body.filter((l) => !l.startsWith('-')).length).toBe(h.new);
      }
    }
  });

  it('implements what the plan counts and reads: lines on stdin', () => {
    const diff = workReply('Plan: a filter that counts the lines on standard input\n1. Read standard input.\n2. Count the lines.\n3. Print the count.', {
      agentName: 'coder',
    });
    expect(diff[0]).toContain('bin/count-lines.js');
    expect(diff).toContain("+const text = readFileSync(0, 'utf8');");
    expect(diff).toContain("+const result = text.split('\\n').length - (text.endsWith('\\n') ? 1 : 0);");
    expect(diff.join('\n')).not.toContain('process.argv');
  });

  it('without numbered steps, implements the request from its sentences', () => {
    const diff = workReply('Implement a tool that shouts its input. It upper-cases the text.');
    expect(diff[0]).toBe("Implemented the request as bin/shout-input.js and added it to package.json's bin.");
    expect(diff).toContain('+// 1. It upper-cases the text');
  });
});

describe('work replies: the reviewer', () => {
  it('gives a verdict and findings that point at the lines they are about', () => {
    const { diff, review } = chain();
    expect(review[0]).toBe('Verdict: approve with changes (3 should-fix, 1 nit)');
    expect(review[1]).toBe('Reviewed bin/count-words.js (+15 -0), package.json (+1 -0).');
    const findings = review.slice(2);
    expect(findings.map((f) => /^(\d)\. \[(\w+)\]/.exec(f)?.slice(1).join(' '))).toEqual(['1 should', '2 should', '3 should', '4 nit']);
    // Every file:line a finding names holds what the finding talks about.
    const script = new Map(parseDiff(diff.join('\n')).lines.map((l) => [`${l.file}:${l.line}`, l.text]));
    const cited = findings.flatMap((f) => [...(/(bin\/count-words\.js:\d+) (\S+)/.exec(f)?.slice(1) ?? [])]);
    expect(cited).toEqual(['bin/count-words.js:11', 'readFileSync()', 'bin/count-words.js:1', 'is', 'bin/count-words.js:9', 'process.exit()']);
    expect(script.get('bin/count-words.js:11')).toContain('readFileSync(');
    expect(script.get('bin/count-words.js:1')).toBe('#!/usr/bin/env node');
    expect(script.get('bin/count-words.js:9')).toContain('process.exit(');
    expect(findings[2]).toContain('no test covers bin/count-words.js');
  });

  it('reads line numbers from the hunk headers of any diff, and a TODO is a must-fix', () => {
    const diff = [
      'diff --git a/src/app.js b/src/app.js',
      '--- a/src/app.js',
      '+++ b/src/app.js',
      '@@ -10,3 +10,4 @@ function main() {',
      '   const a = 1;',
      '-  const b = 2;',
      '+  const b = 3;',
      '+  // TODO: handle the empty case',
      '   return a + b;',
      'diff --git a/test/app.test.js b/test/app.test.js',
      '--- a/test/app.test.js',
      '+++ b/test/app.test.js',
      '@@ -1 +1 @@',
      "-it('x')",
      "+it('y')",
    ].join('\n');
    const review = workReply(diff);
    expect(review[0]).toBe('Verdict: request changes (1 must-fix, 1 nit)');
    expect(review[1]).toBe('Reviewed src/app.js (+2 -1), test/app.test.js (+1 -1).');
    expect(review[2]).toBe('1. [must] src/app.js:12 leaves a TODO ("handle the empty case"): finish it before merging.');
    expect(review).toHaveLength(4);
  });

  it('reviews code in a fence, and a plan, by line', () => {
    const code = workReply('Review this:\n```py\ndef f(x):\n    if x == None:\n        return 1\n    return open(x).read()\n```', { agentName: 'reviewer' });
    expect(code[1]).toBe('Reviewed the snippet.py (4 lines).');
    expect(code).toContain(
      '1. [should] snippet.py:4 open() throws a raw stack trace for a missing or unreadable file; catch it and print one line naming the path.',
    );
    expect(code.join('\n')).toContain('snippet.py:2 uses ==; prefer ===.');
    const plan = workReply('Review this plan:\n1. Build the thing.\n2. Release it?', { agentName: 'reviewer' });
    expect(plan).toEqual([
      'Verdict: approve with changes (2 should-fix, 1 nit)',
      'Reviewed the 2-step plan.',
      '1. [should] line 3: nothing says how the result is tested; add a step for it.',
      '2. [should] line 2: nothing covers bad input (a missing file, empty text).',
      '3. [nit] line 3 asks "2. Release it?" and nothing answers it.',
    ]);
  });

  it('always gives two to four findings', () => {
    const inputs = ['--- a/x\n+++ b/x\n@@ -1,2 +0,0 @@\n-a\n-b', '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+// ok', 'some prose', 'x'];
    for (const input of inputs) {
      const n = workReply(input, { agentName: 'reviewer' }).filter((l) => /^\d\. \[/.test(l)).length;
      expect(n, input).toBeGreaterThanOrEqual(2);
      expect(n, input).toBeLessThanOrEqual(4);
    }
  });
});

describe('work replies: which role', () => {
  it('the handover decides: a request for a plan, numbered steps, a diff', () => {
    const { plan, diff } = chain();
    expect(detectRole(handoverBody(BRIEF))).toBe('planner');
    expect(detectRole(plan.join('\n'))).toBe('coder');
    expect(detectRole(diff.join('\n'))).toBe('reviewer');
    // The body outweighs the agent's name.
    expect(detectRole(diff.join('\n'), 'planner')).toBe('reviewer');
    expect(detectRole(plan.join('\n'), 'reviewer')).toBe('coder');
    expect(detectRole(plan.join('\n'), 'planner')).toBe('coder');
  });

  it('JAGGERS_AGENT decides when the handover does not', () => {
    expect(detectRole('hello there')).toBeUndefined();
    expect(detectRole('hello there', 'planner')).toBe('planner');
    expect(detectRole('hello there', 'coder-2')).toBe('coder');
    expect(detectRole('hello there', 'code-reviewer')).toBe('reviewer');
    expect(roleOfName('alpha')).toBeUndefined();
    expect(workReply('hello there', { agentName: 'planner' })[0]).toBe('Plan: hello there');
  });

  it('a generic answer for anything else, an empty or odd handover included', () => {
    expect(workReply('hello there')).toEqual([
      'Read it: 2 words in 1 line, starting "hello there".',
      'It does not ask for a plan, code or a review. Ask me to plan something, hand me numbered steps to implement, or a diff to review.',
    ]);
    const empty = ['The handover is empty: there is nothing to do yet.', 'Ask me to plan something, hand me numbered steps to implement, or a diff to review.'];
    expect(workReply('')).toEqual(empty);
    expect(workReply('---\ntask: t-1\nturn: 1\n---\n\n  \n')).toEqual(empty);
    expect(workReply('\r\n\r\n')).toEqual(empty);
    const odd = workReply('\x00\x1b[31mred\x07\tbell');
    expect(odd[0]).toBe('Read it: 2 words in 1 line, starting "[31mred bell".');
    expectCompact(odd);
    // Front matter that never closes is body, not front matter.
    expect(workReply('---\ntask: t-1\nno closing line')[0]).toMatch(/^Read it: 6 words in 3 lines/);
  });
});

describe('work replies: determinism, unicode, size', () => {
  it('the same handover always gets the same reply, whatever the clock or the random source say', () => {
    const first = chain();
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2031-07-04T12:00:00Z'));
    const random = vi.spyOn(Math, 'random');
    expect(chain()).toEqual(first);
    expect(random).not.toHaveBeenCalled();
  });

  it('keeps unicode words whole, in the plan, the file name and the review', () => {
    const { plan, diff, review } = chain('Plan a tool that zählt die Wörter in 日本語のファイル 👋 café.');
    expect(plan[0]).toBe('Plan: a tool that zählt die Wörter in 日本語のファイル 👋 café');
    expect(slugOf(subjectOf(plan[0]!))).toBe('zählt-die');
    expect(diff[0]).toBe("Implemented the 3-step plan as bin/zählt-die.js and added it to package.json's bin.");
    expect(diff).toContain('+// zählt-die: a tool that zählt die Wörter in 日本語のファイル 👋 café');
    expect(review[1]).toBe('Reviewed bin/zählt-die.js (+15 -0), package.json (+1 -0).');
    for (const r of [plan, diff, review]) expectCompact(r);
    // Long words are cut at a character, never inside a surrogate pair, and shown with an ellipsis.
    const wide = workReply(`Plan a tool that ${'世'.repeat(120)}👋 things.`);
    expect(wide[0]!.endsWith('…')).toBe(true);
    expect(wide[0]).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expectCompact(wide);
  });

  it('stays compact for a large handover', () => {
    const big = `Plan a tool that counts the words in a file.\n${Array.from({ length: 500 }, (_, i) => `${i + 1}. step ${'word '.repeat(40)}`).join('\n')}`;
    for (const agentName of [undefined, 'planner', 'coder', 'reviewer']) expectCompact(workReply(big, { agentName }));
    const hugeDiff = `--- a/x\n+++ b/x\n@@ -1,0 +1,2000 @@\n${'+const a = 1;\n'.repeat(2000)}`;
    expectCompact(workReply(hugeDiff));
    expect(workReply(`${'\n \t'.repeat(50_000)}x${'\n  '.repeat(50_000)}`)[0]).toBe('Read it: 1 word in 1 line, starting "x".');
  });
});
