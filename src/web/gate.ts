// What every request to the dashboard's listener must pass before any route runs: a Host header of this
// listener (a page of another site that resolves its name to 127.0.0.1 is refused: DNS rebinding), the
// session cookie or the API's bearer token (only `GET /login` goes without: it trades a one-time token for
// the cookie), and a JSON content type on a request with a body (no cross-site form post).
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { ErrorCode } from '../errors.js';

export interface GateRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface Refusal {
  status: number;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

export interface GateOptions {
  /** The port the listener listens on (known once it listens). */
  port(): number;
  /** The session cookie's name (known once the listener listens). */
  cookie(): string;
  sessions: { has(session: string): boolean };
  /** The API's bearer token (`.jaggers/token`), also taken here (tools, tests). */
  token(): string | null;
}

/** The session cookie of the listener on `port`: one name per port, as browsers keep cookies per host, not per port. */
export const cookieName = (port: number): string => `jaggers_web_${port}`;

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Why `host` (a Host header) is not this listener's, or null: `localhost` or an IP address, with the listener's port. */
export function hostProblem(host: string | undefined, port: number): string | null {
  const where = `127.0.0.1:${port} or localhost:${port}`;
  if (!host) return `no Host header: the dashboard answers only requests for ${where}`;
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(host);
  const name = m ? (m[1] ?? m[2] ?? '') : '';
  const given = m?.[3] ? Number(m[3]) : 80;
  const ok = m !== null && given === port && (name.toLowerCase() === 'localhost' || isIP(name) !== 0);
  if (ok) return null;
  return `Host ${JSON.stringify(host.slice(0, 200))} is not this dashboard's address (${where}, or the IP address it listens on): a page of another site cannot reach it by a name of its own (DNS rebinding)`;
}

/** The value of cookie `name` in a Cookie header, or null. */
export function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The check of the dashboard's listener: a refusal in the one error shape's terms, or null to go on. */
export function webGate(o: GateOptions): (req: GateRequest) => Refusal | null {
  return (req) => {
    const path = req.url.split('?')[0] ?? '';
    const route = `${req.method} ${path.length > 200 ? `${path.slice(0, 200)}...` : path}`;
    const host = hostProblem(one(req.headers.host), o.port());
    if (host) return { status: 403, code: 'E_FORBIDDEN', message: `${route}: ${host}` };
    const login = (req.method === 'GET' || req.method === 'HEAD') && path === '/login';
    if (!login) {
      const session = cookieValue(one(req.headers.cookie), o.cookie());
      const bearer = /^Bearer (.+)$/.exec(one(req.headers.authorization) ?? '')?.[1];
      const token = o.token();
      const ok = (session !== null && o.sessions.has(session)) || (bearer !== undefined && token !== null && sameSecret(bearer, token));
      if (!ok)
        return {
          status: 401,
          code: 'E_UNAUTHORIZED',
          message: `${route}: not logged in${session !== null ? ' (the session cookie is not one of this supervisor: it restarted, or the cookie is old)' : ''}: open the URL \`jaggers web\` prints (its login token works once)`,
        };
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const type = one(req.headers['content-type']);
      const bare = type?.split(';')[0]?.trim().toLowerCase();
      if (bare !== 'application/json')
        return {
          status: 415,
          code: 'E_USAGE',
          message: `${route}: the dashboard's listener takes only JSON bodies (Content-Type: application/json; \`{}\` for a route that takes none), got ${type === undefined ? 'no Content-Type' : JSON.stringify(type.slice(0, 100))}`,
        };
    }
    return null;
  };
}
