// The reviewer's work reply: a verdict line and 2-4 numbered findings that point at files and lines of
// the diff (or code, or plan) it was handed. The findings come from a few fixed checks. Pure.
import { clean, clip, numberedSteps } from './work-text.js';

export interface CodeLine {
  file: string;
  /** Line number in the new version of the file (or in the snippet). */
  line: number;
  text: string;
}

export interface FileChange {
  file: string;
  added: number;
  removed: number;
  isNew: boolean;
  /** The `new file mode` the diff gives, if it gives one. */
  mode: string | undefined;
}

export interface ParsedCode {
  files: FileChange[];
  /** The lines the change adds (for a snippet: all its lines). */
  lines: CodeLine[];
  /** A unified diff, not a snippet. */
  diff: boolean;
}

export function hasDiff(body: string): boolean {
  return /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/m.test(body) || (/^--- \S/m.test(body) && /^\+\+\+ \S/m.test(body));
}

/** The files and added lines of a unified diff, with each added line's number in the new file. */
export function parseDiff(body: string): ParsedCode {
  const files: FileChange[] = [];
  const lines: CodeLine[] = [];
  const all = body.split('\n');
  let current: FileChange | undefined;
  let pendingNew = false;
  let pendingMode: string | undefined;
  let next = 0;
  // Lines left in the current hunk, old and new side, from its `@@ -a,b +c,d @@` header.
  let oldLeft = 0;
  let newLeft = 0;
  for (const [i, l] of all.entries()) {
    const inHunk = (oldLeft > 0 || newLeft > 0) && !(l.startsWith('--- ') && all[i + 1]?.startsWith('+++ '));
    if (inHunk && current) {
      if (l.startsWith('+')) {
        lines.push({ file: current.file, line: next++, text: l.slice(1) });
        current.added++;
        newLeft--;
      } else if (l.startsWith('-')) {
        current.removed++;
        oldLeft--;
      } else if (l.startsWith(' ') || l === '') {
        next++;
        oldLeft--;
        newLeft--;
      } else if (!l.startsWith('\\')) {
        oldLeft = newLeft = 0; // prose after a hunk whose counts were wrong
      }
      continue;
    }
    oldLeft = newLeft = 0;
    const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(l);
    const mode = /^new file mode (\d+)/.exec(l);
    if (l.startsWith('diff --git ')) {
      pendingNew = false;
      pendingMode = undefined;
    } else if (mode) {
      pendingNew = true;
      pendingMode = mode[1];
    } else if (l.startsWith('--- ')) {
      pendingNew ||= /^--- \/dev\/null\b/.test(l);
    } else if (l.startsWith('+++ ')) {
      current = { file: clip(clean(l.slice(4).split('\t')[0]!).replace(/^b\//, ''), 60), added: 0, removed: 0, isNew: pendingNew, mode: pendingMode };
      files.push(current);
      pendingNew = false;
      pendingMode = undefined;
    } else if (hunk && current) {
      next = Number(hunk[2]);
      oldLeft = Number(hunk[1] ?? 1);
      newLeft = Number(hunk[3] ?? 1);
    }
  }
  return { files, lines, diff: true };
}

const CODE_LIKE = /[;{}]\s*$|^\s*(?:def|function|const|let|var|import|export|class|return|if|for|while|fn|func)\b|=>|^\s*#include/;

/** Code that is not a diff: the first fenced block, else the whole body when most of it looks like code. */
export function parseSnippet(body: string): ParsedCode | undefined {
  const fence = /^```([\w+-]*)[^\n]*\n([\s\S]*?)^```/m.exec(body);
  let name: string;
  let code: string[];
  if (fence) {
    name = `snippet${fence[1] ? `.${fence[1]}` : ''}`;
    code = fence[2]!.replace(/\n$/, '').split('\n');
  } else {
    code = body.split('\n');
    const codeLike = code.filter((l) => CODE_LIKE.test(l)).length;
    if (codeLike < 3 || codeLike * 5 < code.filter((l) => l.trim() !== '').length * 2) return undefined;
    name = 'snippet';
  }
  const lines = code.map((text, i) => ({ file: name, line: i + 1, text }));
  return { files: [{ file: name, added: lines.length, removed: 0, isNew: false, mode: undefined }], lines, diff: false };
}

export type Severity = 'must' | 'should' | 'nit';

export interface Finding {
  severity: Severity;
  text: string;
}

const at = (l: CodeLine): string => `${l.file}:${l.line}`;

/** Findings for code, strongest first, at most four, at least two. */
export function codeFindings(code: ParsedCode): Finding[] {
  const { lines, files } = code;
  const found: Finding[] = [];
  const first = (re: RegExp): CodeLine | undefined => lines.find((l) => re.test(l.text));
  const inFile = (file: string, re: RegExp): boolean => lines.some((l) => l.file === file && re.test(l.text));

  const todo = first(/\b(?:TODO|FIXME|XXX)\b/);
  if (todo)
    found.push({
      severity: 'must',
      text: `${at(todo)} leaves a TODO ("${clip(clean(todo.text.replace(/^.*?\b(?:TODO|FIXME|XXX)\b:?\s*/, '')), 40)}"): finish it before merging.`,
    });
  const stdin = first(/readFileSync\(\s*0\b/);
  const read = first(/\b(?:readFileSync|readFile|open)\(/);
  if (stdin) found.push({ severity: 'nit', text: `${at(stdin)} reading stdin blocks when run on a terminal; print the usage when process.stdin.isTTY.` });
  else if (read && !inFile(read.file, /\btry\b|\.catch\(/)) {
    const call = /\b(readFileSync|readFile|open)\(/.exec(read.text)![1];
    found.push({
      severity: 'should',
      text: `${at(read)} ${call}() throws a raw stack trace for a missing or unreadable file; catch it and print one line naming the path.`,
    });
  }
  const fetched = first(/\bfetch\(/);
  if (fetched && !inFile(fetched.file, /\.ok\b|\.status\b/))
    found.push({ severity: 'should', text: `${at(fetched)} fetch() resolves on a 404 too; check res.ok and exit 1 with the status.` });
  const emptyCatch = first(/catch\s*(?:\([^)]*\))?\s*\{\s*\}/);
  if (emptyCatch) found.push({ severity: 'should', text: `${at(emptyCatch)} swallows the error; log it or let it through.` });
  for (const f of files) {
    const shebang = lines.find((l) => l.file === f.file && l.line === 1 && l.text.startsWith('#!'));
    if (code.diff && f.isNew && shebang && f.mode !== '100755') {
      found.push({ severity: 'should', text: `${f.file}:1 is a new script with no executable mode in the diff; chmod +x it or running it fails with EACCES.` });
    }
  }
  const tested = files.some((f) => /(?:^|\/)(?:tests?|spec|__tests__)\/|[._-](?:test|spec)\.\w+$/.test(f.file));
  const main = files.find((f) => f.added > 0 && f.file !== 'package.json');
  if (!tested && main) found.push({ severity: 'should', text: `no test covers ${main.file}: add one for an empty input, unicode text and a missing path.` });
  const exit = first(/\bprocess\.exit\(/);
  if (exit) found.push({ severity: 'nit', text: `${at(exit)} process.exit() can cut off output still buffered for a pipe; set process.exitCode = 1 instead.` });
  const split = first(/\.split\(\/\\s\+\/\)/);
  if (split) found.push({ severity: 'nit', text: `${at(split)} split(/\\s+/) counts "don't" and "well-known" as one word each; say so in the usage line.` });
  const loose = first(/[^=!<>]==[^=]|\bvar\s/);
  if (loose) found.push({ severity: 'nit', text: `${at(loose)} uses ${/\bvar\s/.test(loose.text) ? 'var; prefer const or let' : '==; prefer ==='}.` });
  const long = lines.find((l) => l.text.length > 100);
  if (long) found.push({ severity: 'nit', text: `${at(long)} is ${long.text.length} characters long; wrap it.` });

  const fallbacks: Finding[] = [];
  const firstLine = lines.find((l) => l.text.trim() !== '');
  const lastLine = lines.findLast((l) => l.text.trim() !== '');
  if (firstLine && !lines.some((l) => /^\s*(?:\/\/|#(?!!)|\/\*|\*)/.test(l.text)))
    fallbacks.push({ severity: 'nit', text: `${at(firstLine)} starts ${lines.length} lines without one comment saying why; add one.` });
  if (lastLine) fallbacks.push({ severity: 'nit', text: `${at(lastLine)} looks right; pin it with a test so it stays that way.` });
  for (const f of files.filter((x) => x.removed > 0 && x.added === 0))
    fallbacks.push({ severity: 'should', text: `${f.file} only loses ${f.removed} lines; check nothing still uses them.` });
  fallbacks.push({ severity: 'nit', text: 'the change has no description of how it was tested; add one.' });
  fallbacks.push({ severity: 'nit', text: 'nothing else stands out.' });
  return pick(found, fallbacks);
}

/** Findings for a plan or other prose handed to the reviewer: they point at lines of the handover. */
export function textFindings(body: string): Finding[] {
  const found: Finding[] = [];
  const steps = numberedSteps(body);
  const all = body.split('\n').map((text, i) => ({ line: i + 1, text }));
  const subject = steps.length > 0 ? steps : all.filter((l) => l.text.trim() !== '');
  const lastAt = subject.at(-1)?.line ?? 1;
  const firstAt = subject[0]?.line ?? 1;
  if (!subject.some((s) => /\btests?\b|\bcheck/i.test(s.text)))
    found.push({ severity: 'should', text: `line ${lastAt}: nothing says how the result is tested; add a step for it.` });
  if (!subject.some((s) => /\b(?:missing|error|invalid|fail|empty|usage)\b/i.test(s.text)))
    found.push({ severity: 'should', text: `line ${firstAt}: nothing covers bad input (a missing file, empty text).` });
  const question = all.find((l) => l.text.includes('?'));
  if (question) found.push({ severity: 'nit', text: `line ${question.line} asks "${clip(clean(question.text), 40)}" and nothing answers it.` });
  const wordy = steps.find((s) => s.text.split(/\s+/).length > 20);
  if (wordy) found.push({ severity: 'nit', text: `line ${wordy.line} does more than one thing; split it into two steps.` });
  const fallbacks: Finding[] = [
    { severity: 'nit', text: `line ${firstAt}: say what output is expected, so the result can be checked.` },
    { severity: 'nit', text: `line ${lastAt}: name who takes the next step.` },
  ];
  return pick(found, fallbacks);
}

const ORDER: Record<Severity, number> = { must: 0, should: 1, nit: 2 };

/** The strongest four findings; fallbacks fill up to two. */
function pick(found: Finding[], fallbacks: Finding[]): Finding[] {
  const sorted = found
    .map((f, i) => ({ f, i }))
    .sort((a, b) => ORDER[a.f.severity] - ORDER[b.f.severity] || a.i - b.i)
    .map((x) => x.f)
    .slice(0, 4);
  for (const f of fallbacks) if (sorted.length < 2 && !sorted.some((s) => s.text === f.text)) sorted.push(f);
  return sorted;
}

export function verdictLine(findings: readonly Finding[]): string {
  const count = (s: Severity): number => findings.filter((f) => f.severity === s).length;
  const parts = [
    count('must') ? `${count('must')} must-fix` : '',
    count('should') ? `${count('should')} should-fix` : '',
    count('nit') ? `${count('nit')} nit${count('nit') === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  const verdict = count('must') ? 'request changes' : count('should') ? 'approve with changes' : 'approve';
  return `Verdict: ${verdict} (${parts.join(', ')})`;
}

function summary(code: ParsedCode): string {
  const files = code.files.filter((f) => f.added + f.removed > 0);
  if (!code.diff) return `Reviewed the ${files[0]?.file ?? 'snippet'} (${code.lines.length} lines).`;
  const named = files.slice(0, 3).map((f) => `${f.file} (+${f.added} -${f.removed})`);
  const more = files.length > 3 ? ` and ${files.length - 3} more` : '';
  return `Reviewed ${named.join(', ')}${more}.`;
}

export function reviewReply(body: string): string[] {
  const code = hasDiff(body) ? parseDiff(body) : parseSnippet(body);
  if (code) {
    const findings = codeFindings(code);
    return [verdictLine(findings), summary(code), ...findings.map((f, i) => `${i + 1}. [${f.severity}] ${f.text}`)];
  }
  const findings = textFindings(body);
  const steps = numberedSteps(body).length;
  const what = steps > 0 ? `the ${steps}-step plan` : `the ${body.split('\n').length}-line handover`;
  return [verdictLine(findings), `Reviewed ${what}.`, ...findings.map((f, i) => `${i + 1}. [${f.severity}] ${f.text}`)];
}
