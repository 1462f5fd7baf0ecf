// The API's edge, before a route runs: a JSON body's shape bounded before it is parsed, and every
// answer that fastify or node's HTTP parser would write in a format of its own (a bad or too long URL,
// headers over the limit, a malformed request, a method the path does not take, a closing server)
// written in the one shape `{"error":{"code","message"}}` instead.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JaggersError, type ErrorCode } from '../errors.js';

/** The one error shape, with the message bounded (a message never grows with the request that caused it). */
export function errorBody(code: ErrorCode, message: string): { error: { code: ErrorCode; message: string } } {
  const MAX = 4000;
  const m = message.length > MAX ? `${message.slice(0, MAX)}... (${message.length - MAX} more characters)` : message;
  return { error: { code, message: m } };
}

/** `GET /v1/x` of a request, its path shortened (a URL may be 16 KB). */
export function routeOf(req: { method: string; url: string }): string {
  const p = req.url.split('?')[0] ?? '';
  return `${req.method} ${p.length > 200 ? `${p.slice(0, 200)}...` : p}`;
}

/**
 * Why a JSON text is nested deeper than `depth` or has more than `members` keys and array items in
 * all, or null: one pass over the text that stops at the first excess (strings are skipped by
 * searching for their closing quote), so a body of a million keys costs microseconds to refuse.
 * Malformed JSON is left for the parser to name.
 */
export function jsonShapeProblem(text: string, limits: { depth: number; members: number }): string | null {
  const inArray: boolean[] = [];
  const bs = { at: 0 };
  let members = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i, bs);
      if (i === -1) return null;
    } else if (c === 0x7b || c === 0x5b) {
      inArray.push(c === 0x5b);
      if (inArray.length > limits.depth) return `nested deeper than ${limits.depth} levels`;
      // A non-empty array's first item (the others are counted at their commas).
      if (c === 0x5b && nextNonSpace(text, i + 1) !== 0x5d && ++members > limits.members) return tooMany(limits.members);
    } else if (c === 0x7d || c === 0x5d) {
      inArray.pop();
    } else if (c === 0x3a || (c === 0x2c && inArray.at(-1) === true)) {
      if (++members > limits.members) return tooMany(limits.members);
    }
  }
  return null;
}

/**
 * The index of the quote that closes the string opened at `open` (-1: it never closes). `bs` keeps
 * where the next backslash is (-1: none left), found once and reused, so the text is searched once.
 */
function stringEnd(text: string, open: number, bs: { at: number }): number {
  const q = text.indexOf('"', open + 1);
  if (q === -1) return -1;
  if (bs.at !== -1 && bs.at <= open) bs.at = text.indexOf('\\', open + 1);
  // No backslash before that quote (most strings): it closes the string, found natively.
  if (bs.at === -1 || bs.at > q) return q;
  // Escapes: one character at a time from the first of them.
  for (let i = bs.at; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return -1;
}

function nextNonSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return -1;
}

const tooMany = (max: number) => `over ${max} keys and array items`;

/**
 * JSON bodies: the shape checked first (E_PAYLOAD_TOO_LARGE for too many members, E_USAGE for too
 * deep), then fastify's own parser (which refuses `__proto__` and `constructor.prototype` keys).
 */
export function installJsonParser(app: FastifyInstance, limits: { depth: number; members: number }): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, text, done) => {
    const problem = jsonShapeProblem(text as string, limits);
    if (problem) {
      const code = problem.startsWith('nested') ? 'E_USAGE' : 'E_PAYLOAD_TOO_LARGE';
      done(new JaggersError(code, `${routeOf(req)}: the JSON body is ${problem}`), undefined);
      return;
    }
    parse(req, text as string, done);
  });
}

/** fastify's router errors (a URL that does not decode, a path segment over `maxParamLength`), in the one shape. */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
  const why =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a part of the path is too long' : err.code === 'FST_ERR_BAD_URL' ? 'the URL does not decode' : err.message;
  void reply.code(status).send(errorBody('E_USAGE', `${routeOf(req)}: ${why}`));
}

/**
 * What node's HTTP parser refuses before fastify sees a request: headers over the limit (431; when
 * the request line alone is over half of it, a URL that long, 414), a timeout (408), anything
 * malformed (400). Written on the socket in the one shape, then the connection closes.
 */
export function clientErrorHandler(err: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let message = `malformed HTTP request: ${err.message} (${err.code ?? 'no code'})`;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1') : '';
    const lineEnd = raw.indexOf('\r\n');
    const urlTooLong = /^[A-Z]+ /.test(raw) && (lineEnd === -1 || lineEnd > 8192);
    status = urlTooLong ? 414 : 431;
    message = urlTooLong ? 'the URL is too long (over the 16 KB of the request head)' : 'the request headers are over 16 KB';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'the request did not arrive in time';
  }
  const text = JSON.stringify(errorBody('E_USAGE', message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

/**
 * The routes' paths and methods as they are added, so a request for a path that exists with another
 * method is a 405 naming the methods it takes (an `allow` header too), not a 404.
 */
export function methodTable(app: FastifyInstance): (method: string, url: string) => string[] {
  const routes: { re: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (r) => {
    const methods = (Array.isArray(r.method) ? r.method : [r.method]).filter((m) => m !== 'HEAD');
    const re = new RegExp(`^${r.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`);
    routes.push({ re, methods });
  });
  return (method, url) => {
    const p = url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.re.test(p)).flatMap((r) => r.methods))];
    return allowed.includes(method) ? [] : allowed;
  };
}
