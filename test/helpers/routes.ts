// The API's routes as the app itself lists them (so a table of cases can be checked to cover every
// route), and the one error shape every failed request must answer in.
import type { FastifyInstance } from 'fastify';

export interface Route {
  method: string;
  /** The route's pattern, `/v1/jobs/:id`. */
  url: string;
}

/** Every route of `app` but the HEAD twins fastify adds to GET routes, from its own printout. */
export function listRoutes(app: FastifyInstance): Route[] {
  const out: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    for (const method of m[3]?.split(', ') ?? []) if (method !== 'HEAD') out.push({ method, url: stack.join('') });
  }
  return out;
}

/** `/v1/jobs/:id` with `:id` (every param) replaced by `value`, URI-encoded. */
export function fillParams(url: string, value: string | ((param: string) => string)): string {
  return url.replace(/:([A-Za-z_]+)/g, (_, p: string) => encodeURIComponent(typeof value === 'string' ? value : value(p)));
}

/** Why `text` is not `{"error":{"code":"E_...","message":"..."}}` and nothing else; null when it is. */
export function errorShapeProblem(text: string): string | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
  const e = (v as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown } | undefined;
  if (v === null || typeof v !== 'object' || Object.keys(v).join() !== 'error') return `not {"error": ...}: ${text.slice(0, 200)}`;
  if (!e || typeof e !== 'object' || Object.keys(e).sort().join() !== 'code,message') return `error is not {code, message}: ${text.slice(0, 200)}`;
  if (typeof e.code !== 'string' || !/^E_[A-Z_]+$/.test(e.code)) return `code is not E_...: ${text.slice(0, 200)}`;
  if (typeof e.message !== 'string' || e.message === '') return `message is not a text: ${text.slice(0, 200)}`;
  return null;
}
