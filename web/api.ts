// The page's one way to the API: same origin, the session cookie, JSON both ways, and the API's own
// error (`{"error":{"code","message"}}`) thrown with its code and message for the page to show as is.
import type { ApiErrorBody } from './types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Every POST carries a JSON body (the web listener refuses any other content type), `{}` when it has nothing to say. */
export async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
      ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
    });
  } catch (e) {
    throw new ApiError(0, 'E_NETWORK', `the supervisor did not answer: ${(e as Error).message}`);
  }
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = (data as Partial<ApiErrorBody> | null)?.error;
    throw new ApiError(res.status, err?.code ?? 'E_HTTP', err?.message ?? `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export const get = <T>(path: string): Promise<T> => call<T>('GET', path);
export const post = <T>(path: string, body?: unknown): Promise<T> => call<T>('POST', path, body);

/** A path segment: agent names, ids and `agent+task` keys, encoded. */
export const seg = (s: string): string => encodeURIComponent(s);
