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

/** `file: field `a.b` must be ..., got 42 (number)`, one line per problem. */
export function formatIssues(source: string, issues: readonly z.core.$ZodIssue[], data: unknown): string {
  return issues
    .map((i) => {
      const at = formatPath(i.path);
      const got = i.code === 'unrecognized_keys' ? '' : `, got ${describeValue(valueAt(data, i.path))}`;
      return `${source}: field \`${at}\`: ${i.message}${got}`;
    })
    .join('\n');
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
