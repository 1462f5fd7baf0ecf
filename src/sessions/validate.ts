// Zod validation with messages that name the file, the field and the value that was wrong.
import type { z } from 'zod';
import { JaggersError, describeValue } from '../errors.js';

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** `sessions.json: field `terminals.jg-1.agent`: Invalid input: expected string, received number, got 42 (number)` */
export function formatIssues(issues: readonly z.core.$ZodIssue[], where: string, max = 5): string {
  const lines = issues.slice(0, max).map((issue) => {
    const got = 'input' in issue && issue.input !== undefined ? `, got ${describeValue(issue.input)}` : '';
    return `field \`${formatPath(issue.path)}\`: ${issue.message}${got}`;
  });
  const more = issues.length > max ? ` (and ${issues.length - max} more)` : '';
  return `${where}: ${lines.join('; ')}${more}`;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

/** Validate without throwing; `where` names the source (`/p/.jaggers/sessions.json`, `events.jsonl line 7`). */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where: string): Validated<z.output<S>> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, message: formatIssues(result.error.issues, where) };
}

/** Validate or throw a JaggersError with the given code. */
export function validateOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: string, code: 'E_REGISTRY' | 'E_FILE' = 'E_REGISTRY'): z.output<S> {
  const result = validate(schema, value, where);
  if (!result.ok) throw new JaggersError(code, result.message);
  return result.value;
}

/** JSON.parse that reports where and why instead of a bare SyntaxError. */
export function parseJson(text: string, where: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { ok: false, message: `${where}: not valid JSON (${why})` };
  }
}
