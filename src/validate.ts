import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { describeValue, JaggersError, type ErrorCode } from './errors.js';

/** Walk `path` into `data` to show the bad value in an error message. */
export function valueAt(data: unknown, p: readonly PropertyKey[]): unknown {
  let v: unknown = data;
  for (const k of p) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

export function formatPath(p: readonly PropertyKey[]): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('') || '(top level)';
}

/** At most this many problems are listed in one error, and this many unknown keys in one problem; the rest are counted. */
export const PROBLEMS_SHOWN = 10;
export const KEYS_SHOWN = 5;

/**
 * An issue's message, bounded: unknown keys are named up to KEYS_SHOWN (each shortened) and the rest
 * counted, so a body or file with a million unknown keys gives an error of a few lines.
 */
export function issueMessage(i: { code: string; message: string; keys?: unknown }): string {
  if (i.code !== 'unrecognized_keys' || !Array.isArray(i.keys)) return i.message.length > 500 ? `${i.message.slice(0, 500)}...` : i.message;
  const keys = i.keys as unknown[];
  const shown = keys.slice(0, KEYS_SHOWN).map((k) => JSON.stringify(String(k).length > 40 ? `${String(k).slice(0, 37)}...` : String(k)));
  const more = keys.length > KEYS_SHOWN ? ` and ${keys.length - KEYS_SHOWN} more` : '';
  return `Unrecognized key${keys.length === 1 ? '' : 's'}: ${shown.join(', ')}${more}`;
}

/** The first PROBLEMS_SHOWN lines, and a last one counting the others. */
export function boundedLines(lines: readonly string[], max = PROBLEMS_SHOWN): string[] {
  return lines.length <= max ? [...lines] : [...lines.slice(0, max), `(and ${lines.length - max} more problems)`];
}

/** `file: field `a.b` must be ..., got 42 (number)`, one line per problem. */
export function formatIssues(source: string, issues: readonly z.core.$ZodIssue[], data: unknown): string {
  return boundedLines(
    issues.map((i) => {
      const at = formatPath(i.path);
      const got = i.code === 'unrecognized_keys' ? '' : `, got ${describeValue(valueAt(data, i.path))}`;
      return `${source}: field \`${at}\`: ${issueMessage(i)}${got}`;
    }),
  ).join('\n');
}

export function validate<S extends z.ZodType>(schema: S, data: unknown, source: string, code: ErrorCode): z.output<S> {
  const r = schema.safeParse(data);
  if (!r.success) throw new JaggersError(code, formatIssues(source, r.error.issues, data));
  return r.data;
}

/** JSON.parse that names the file, line and column of a syntax error. */
export async function parseJsonText(text: string, file: string, code: ErrorCode): Promise<unknown> {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const { jsonSyntaxError } = await import('./json-syntax.js');
    throw new JaggersError(code, `${file}: not valid JSON: ${jsonSyntaxError(text) ?? (e as Error).message}`);
  }
}

/** Read a JSON file; a missing file is `null`, a syntax error names the file, line and column. */
export async function readJsonFile(file: string, code: ErrorCode): Promise<unknown | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new JaggersError(code, `${file}: cannot read: ${(e as Error).message}`);
  }
  return parseJsonText(text, file, code);
}
