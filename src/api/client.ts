// A small HTTP/1.1 client for the supervisor's API, on its unix socket (or TCP with a bearer token).
// Light on purpose: every client command loads it, so no validation library and no process helpers.
import http from 'node:http';
import { isErrorCode, JaggersError } from '../errors.js';
import type { ApiErrorBody, StreamEvent } from './types.js';

export type Endpoint = { socketPath: string } | { host: string; port: number; token: string };

export interface CallOptions {
  signal?: AbortSignal;
}

/** The connection could not be made at all: nobody listens (yet). Not an error once the request was sent. */
export function isConnectFailure(e: unknown): boolean {
  return e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN' && (e.cause as { connect?: boolean } | undefined)?.connect === true;
}

/**
 * Nobody took the request: no connection could be made, or a stopping supervisor refused it
 * (E_SUPERVISOR_STOPPING). Sending it again, to a supervisor started anew, runs it once.
 */
export function notTaken(e: unknown): boolean {
  return isConnectFailure(e) || (e instanceof JaggersError && e.code === 'E_SUPERVISOR_STOPPING');
}

const CONNECT_ERRORS = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

/** No TLS server name (none is used): node works one out by its IPv6 pattern, compiled on first use, 3 ms of every command. */
const NO_SERVER_NAME = { servername: '' };

export class ApiClient {
  constructor(
    readonly endpoint: Endpoint,
    /** Sent as `x-jaggers-session`: a supervisor of another session refuses instead of answering for it. */
    readonly session?: string,
  ) {}

  get where(): string {
    return 'socketPath' in this.endpoint ? this.endpoint.socketPath : `http://${this.endpoint.host}:${this.endpoint.port}`;
  }

  private options(method: string, path: string, headers: Record<string, string>): http.RequestOptions {
    const h: Record<string, string> = { ...headers };
    if (this.session) h['x-jaggers-session'] = this.session;
    // No connection pooling: a pooled connection to a supervisor that died fails with ECONNRESET on its
    // next use, which cannot be told from a request the supervisor took and then died on.
    if ('socketPath' in this.endpoint) return { ...NO_SERVER_NAME, socketPath: this.endpoint.socketPath, method, path, headers: h, agent: false };
    h.authorization = `Bearer ${this.endpoint.token}`;
    return { ...NO_SERVER_NAME, host: this.endpoint.host, port: this.endpoint.port, method, path, headers: h, agent: false };
  }

  private failed(e: NodeJS.ErrnoException, sent: boolean): JaggersError {
    const connect = !sent && CONNECT_ERRORS.has(e.code ?? '');
    const message = connect
      ? `no supervisor answers at ${this.where} (${e.code})`
      : `the supervisor at ${this.where} closed the connection before answering (${e.code ?? e.message}): did it exit?`;
    return new JaggersError('E_SUPERVISOR_DOWN', message, { cause: { connect, error: e } });
  }

  /** One JSON request; an error answer becomes a JaggersError with the API's code and message. */
  call<T>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    return new Promise<T>((resolve, reject) => {
      let sent = false;
      const req = http.request({ ...this.options(method, path, headers), signal: opts.signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(this.failed(e, true)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : null;
          } catch {
            return reject(new JaggersError('E_API', `${method} ${path}: the supervisor answered ${res.statusCode} with non-JSON: ${text.slice(0, 200)}`));
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve(json as T);
          const err = (json as ApiErrorBody | null)?.error;
          const code = isErrorCode(err?.code) ? err.code : 'E_API';
          reject(new JaggersError(code, err?.message ?? `${method} ${path}: HTTP ${status}`));
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => reject(e.name === 'AbortError' ? e : this.failed(e, sent)));
      req.on('finish', () => (sent = true));
      req.end(payload);
    });
  }

  /**
   * Read the server-sent events at `path` until `signal` aborts or the server ends the stream;
   * `onEvent` sees each event. Resolves when the stream ends.
   */
  events(path: string, onEvent: (e: StreamEvent) => void, opts: { signal?: AbortSignal; lastEventId?: number } = {}): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);
    return new Promise<void>((resolve, reject) => {
      const req = http.request({ ...this.options('GET', path, headers), signal: opts.signal }, (res) => {
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () => {
            const err = (() => {
              try {
                return (JSON.parse(text) as ApiErrorBody).error;
              } catch {
                return undefined;
              }
            })();
            reject(new JaggersError(isErrorCode(err?.code) ? err.code : 'E_API', err?.message ?? `GET ${path}: HTTP ${res.statusCode}`));
          });
          return;
        }
        const parser = new SseParser(onEvent);
        res.setEncoding('utf8');
        res.on('data', (c: string) => parser.feed(c));
        res.on('end', () => resolve());
        res.on('error', () => resolve());
      });
      req.on('error', (e: NodeJS.ErrnoException) => (e.name === 'AbortError' ? resolve() : reject(this.failed(e, false))));
      req.end();
    });
  }
}

/** The `id:`/`event:`/`data:` lines of a text/event-stream, dispatched at each blank line. */
export class SseParser {
  private buf = '';
  private id: string | null = null;
  private type: string | null = null;
  private data: string[] = [];

  constructor(private readonly onEvent: (e: StreamEvent) => void) {}

  feed(chunk: string): void {
    this.buf += chunk;
    for (let nl = this.buf.indexOf('\n'); nl >= 0; nl = this.buf.indexOf('\n')) {
      const line = this.buf.slice(0, nl).replace(/\r$/, '');
      this.buf = this.buf.slice(nl + 1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        const data = JSON.parse(this.data.join('\n')) as Record<string, unknown>;
        this.onEvent({
          id: Number(this.id),
          type: (this.type ?? 'message') as StreamEvent['type'],
          at: String(data.at ?? ''),
          data: (data.data ?? data) as Record<string, unknown>,
        });
      }
      this.id = null;
      this.type = null;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') this.id = value;
    else if (field === 'event') this.type = value;
    else if (field === 'data') this.data.push(value);
  }
}
