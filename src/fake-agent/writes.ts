// `write: <path> "<text>"` lines in a prompt, or in the file it names: the fake agent writes the text (a
// JSON string) to that file under its working folder, as a coding agent edits code (the worktree tests).
// A path that is absolute, leaves the folder or points into `.git` is refused in the reply.
import fs from 'node:fs';
import path from 'node:path';

const LINE = /^[ \t]*write:[ \t]+(\S+)[ \t]+("(?:[^"\\\n]|\\.)*")[ \t]*$/gm;

export interface FileWrite {
  path: string;
  text: string;
}

/** The writes a text asks for, in order; a line whose text is not a JSON string is an error line. */
export function writesIn(text: string): (FileWrite | { error: string })[] {
  const out: (FileWrite | { error: string })[] = [];
  for (const m of text.slice(0, 65_536).matchAll(LINE)) {
    try {
      out.push({ path: m[1]!, text: JSON.parse(m[2]!) as string });
    } catch (e) {
      out.push({ error: `write: ${m[1]}: the text is not a JSON string: ${(e as Error).message}` });
    }
  }
  return out;
}

/** Where a write goes under `cwd`, or why it may not. */
export function writeTarget(cwd: string, file: string): { full: string } | { error: string } {
  if (path.isAbsolute(file)) return { error: `write: ${file}: must be a path inside the working folder, not an absolute one` };
  const rel = path.normalize(file);
  if (rel === '..' || rel.startsWith(`..${path.sep}`)) return { error: `write: ${file}: leaves the working folder` };
  if (rel.split(path.sep)[0] === '.git') return { error: `write: ${file}: is inside .git` };
  return { full: path.join(cwd, rel) };
}

/** Carry out the writes; the reply's lines (`wrote <path> (<n> bytes)`, or why not). */
export function applyWrites(writes: (FileWrite | { error: string })[], cwd: string, write: (full: string, text: string) => void): string[] {
  return writes.map((w) => {
    if ('error' in w) return w.error;
    const t = writeTarget(cwd, w.path);
    if ('error' in t) return t.error;
    try {
      write(t.full, w.text);
      return `wrote ${w.path} (${Buffer.byteLength(w.text)} bytes)`;
    } catch (e) {
      return `write: ${w.path}: ${(e as Error).message}`;
    }
  });
}

/** A `write:` line's file, its folders made as needed. */
export function writeWorkFile(full: string, text: string): void {
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
}
