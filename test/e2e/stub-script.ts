// The stub model's default behaviour, enough for a handoff round trip and an approval prompt.

import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { RecordedRequest } from './stub-requests.js';
import type { Reply } from './stub-wire.js';

/** First non-empty line of a file's body, after any `---` front matter. */
export function firstBodyLine(text: string): string {
  let lines = text.split(/\r?\n/);
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (end > 0) lines = lines.slice(end + 1);
  }
  return lines.find((l) => l.trim() !== '')?.trim() ?? '';
}

/** A file named in the text (relative to cwd, or absolute) that exists. */
export function namedFile(text: string, cwd: string | undefined): string | undefined {
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(/^[`'"(@]+|[`'")\],.;:!?]+$/g, '');
    if (!/[/.]/.test(word) || word.length < 3) continue;
    const path = isAbsolute(word) ? word : cwd !== undefined ? resolve(cwd, word) : undefined;
    if (path === undefined) continue;
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // not a file
    }
  }
  return undefined;
}

export function defaultScript(req: RecordedRequest, cwd: string | undefined): Reply {
  if (req.hasToolResult) return { kind: 'text', text: 'stub: the command ran.' };
  const text = req.lastUserText ?? '';
  const file = namedFile(text, cwd);
  if (file !== undefined) return { kind: 'text', text: `answer: ${firstBodyLine(readFileSync(file, 'utf8'))}` };
  if (text.includes('needs-approval')) return { kind: 'tool', command: 'touch approved.txt' };
  return { kind: 'text', text: `stub reply to: ${text.replace(/\s+/g, ' ').trim().slice(0, 80)}` };
}
