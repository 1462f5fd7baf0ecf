// The coder's work reply: a one-line summary and a small unified diff that implements the plan it was
// handed, a script named after the plan whose comments are the plan's steps. Pure.
import type { Source, Unit } from './work-text.js';
import { clip, numberedSteps, sentences, slugOf, sourceOf, subjectOf, unitOf } from './work-text.js';

const COMPUTE: Record<Unit, string> = {
  words: 'const result = text.split(/\\s+/).filter(Boolean).length;',
  lines: "const result = text.split('\\n').length - (text.endsWith('\\n') ? 1 : 0);",
  characters: 'const result = [...text].length;',
  bytes: 'const result = Buffer.byteLength(text);',
};

/** What a tool that does not count does to its text, by the verb the plan uses. */
const TRANSFORMS: [RegExp, string][] = [
  [/\bsort/i, "const result = text.split('\\n').sort().join('\\n');"],
  [/\brevers/i, "const result = text.split('\\n').map((line) => [...line].reverse().join('')).join('\\n');"],
  [/\b(?:upper|shout)/i, 'const result = text.toUpperCase();'],
  [/\blower/i, 'const result = text.toLowerCase();'],
  [/\b(?:unique|dedup|duplicate)/i, "const result = [...new Set(text.split('\\n'))].join('\\n');"],
];

export interface ParsedPlan {
  title: string;
  steps: string[];
  /** Whether the steps were numbered in the handover (else they are its sentences). */
  numbered: boolean;
}

/** The plan's title (its first line that is not a step) and its numbered steps, else its sentences. */
export function parsePlan(body: string): ParsedPlan {
  const numbered = numberedSteps(body);
  const stepLines = new Set(numbered.map((s) => s.line));
  const titleLine = body.split('\n').find((l, i) => !stepLines.has(i + 1) && l.trim() !== '') ?? '';
  const title = subjectOf(titleLine);
  if (numbered.length > 0) return { title, steps: numbered.map((s) => s.text).slice(0, 6), numbered: true };
  return { title, steps: sentences(body).slice(1, 5), numbered: false };
}

/** A step as a code comment: its first clause. */
function comment(step: string, n: number): string {
  const clause = step.split(/[;:]\s|,\s+then\s/u)[0]!.replace(/[.!?]+$/u, '');
  return `// ${n}. ${clip(clause, 64)}`;
}

function readInput(source: Source, slug: string): string[] {
  const usage = (arg: string): string[] => [
    `const ${arg} = process.argv[2];`,
    `if (!${arg}) {`,
    `  console.error('usage: ${slug} <${arg}>');`,
    '  process.exit(1);',
    '}',
  ];
  switch (source) {
    case 'file':
      return [...usage('file'), "const text = readFileSync(file, 'utf8');"];
    case 'stdin':
      return ["const text = readFileSync(0, 'utf8');"];
    case 'url':
      return [...usage('url'), 'const text = await (await fetch(url)).text();'];
  }
}

/** The script's lines: read (first step), compute (the middle steps), print (the last step). */
export function scriptLines(plan: ParsedPlan, slug: string): string[] {
  const text = [plan.title, ...plan.steps].join('\n');
  const source = sourceOf(text);
  const unit = unitOf(plan.title) ?? unitOf(text);
  const steps = plan.steps.length > 0 ? plan.steps : ['Read the input', plan.title, 'Print the result'];
  const comments = steps.map((s, i) => comment(s, i + 1));
  const [first, ...others] = comments;
  const last = others.length > 0 ? others.pop() : undefined;
  const transform = TRANSFORMS.find(([re]) => re.test(text))?.[1];
  const compute = unit && /\bcount/i.test(text) ? COMPUTE[unit] : (transform ?? `const result = text.trim(); // TODO: ${clip(steps[1] ?? plan.title, 48)}`);
  return [
    '#!/usr/bin/env node',
    `// ${slug}: ${clip(plan.title, 70)}`,
    ...(source === 'url' ? [] : ["import { readFileSync } from 'node:fs';"]),
    '',
    ...(last === undefined ? [] : [first!]),
    ...readInput(source, slug),
    ...(last === undefined ? [first!] : others),
    compute,
    ...(last === undefined ? [] : [last]),
    'console.log(result);',
  ];
}

export function codeReply(body: string): string[] {
  const plan = parsePlan(body);
  const slug = slugOf(plan.title);
  const file = `bin/${slug}.js`;
  const script = scriptLines(plan, slug);
  const what = plan.numbered ? `the ${plan.steps.length}-step plan` : 'the request';
  return [
    `Implemented ${what} as ${file} and added it to package.json's bin.`,
    '',
    '--- /dev/null',
    `+++ b/${file}`,
    `@@ -0,0 +1,${script.length} @@`,
    ...script.map((l) => `+${l}`),
    '--- a/package.json',
    '+++ b/package.json',
    '@@ -2,3 +2,4 @@',
    '   "name": "tools",',
    '   "type": "module",',
    `+  "bin": { "${slug}": "${file}" },`,
    '   "version": "0.1.0"',
  ];
}
