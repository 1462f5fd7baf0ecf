// The supervisor's web listener (`jaggers web`, `POST /v1/web`): started on the first ask, reused after,
// moved only when asked for another address (the new one listens before the old one is let go). Its
// address is kept in .jaggers/web.json, so the next supervisor listens there again (a port taken by then:
// a free one). Each ask issues a fresh one-time login token.
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { writeFileAtomic } from '../fs/durable.js';
import type { Log } from '../logger.js';
import { checkExposure, formatAddress, isLoopback, listenFailed, parseListen, type ListenAddress } from '../supervisor/tcp.js';
import type { GateRequest, Refusal } from './gate.js';
import { cookieName, webGate } from './gate.js';
import { WebSessions } from './sessions.js';

export const webConfigPath = (jaggersDir: string): string => path.join(jaggersDir, 'web.json');

/** What `POST /v1/web` answers: the login URL (with its one-time token), the address, the token. */
export interface WebOpened {
  url: string;
  address: string;
  token: string;
  /** Reachable beyond this machine (--allow-remote). */
  remote: boolean;
}

/** The app of one listener: the API with the gate and the page's routes (buildApp with `web`). */
export interface WebAppParts {
  gate(req: GateRequest): Refusal | null;
  /** The session cookie's name. */
  cookie(): string;
  sessions: WebSessions;
}

export interface WebListenerDeps {
  build(parts: WebAppParts): FastifyInstance;
  jaggersDir: string;
  /** The API's bearer token, also taken by the gate. */
  token(): Promise<string>;
  log: Log;
  /** Told the address listened on whenever it changes (null: stopped). */
  moved?(address: string | null): void;
}

const DEFAULT: ListenAddress = { host: '127.0.0.1', port: 0 };

/** The host a person on this machine types for `a` (a wildcard address is reached on loopback). */
function urlHost(a: ListenAddress): string {
  if (a.host === '0.0.0.0') return '127.0.0.1';
  if (a.host === '::') return '[::1]';
  return a.host.includes(':') ? `[${a.host}]` : a.host;
}

export class WebListener {
  readonly sessions = new WebSessions();
  private current: { app: FastifyInstance; at: ListenAddress; remote: boolean } | null = null;
  private busy: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: WebListenerDeps) {}

  /** The address listened on, or null. */
  get address(): string | null {
    return this.current ? formatAddress(this.current.at) : null;
  }

  /** Listen (or keep listening) and issue a login token. `source` names where `listen` came from, for errors. */
  open(o: { listen?: string; allowRemote?: boolean }, source: string): Promise<WebOpened> {
    const run = this.busy.then(() => this.openNow(o, source));
    this.busy = run.catch(() => {});
    return run;
  }

  /** Listen again where .jaggers/web.json says (a supervisor's start); a problem is logged, not thrown. */
  async restore(): Promise<string | null> {
    const saved = await this.saved();
    if (!saved) return null;
    try {
      await this.open({}, webConfigPath(this.d.jaggersDir));
      return null;
    } catch (e) {
      this.d.log.error({ err: (e as Error).message }, 'could not start the web dashboard again');
      return (e as Error).message;
    }
  }

  /** Stop listening, and forget the address (`jaggers web --stop`). */
  stop(): Promise<void> {
    const run = this.busy.then(async () => {
      await this.close();
      await rm(webConfigPath(this.d.jaggersDir), { force: true });
    });
    this.busy = run.catch(() => {});
    return run;
  }

  async close(): Promise<void> {
    const c = this.current;
    this.current = null;
    if (c) this.d.moved?.(null);
    await c?.app.close();
  }

  private async openNow(o: { listen?: string; allowRemote?: boolean }, source: string): Promise<WebOpened> {
    if (o.listen !== undefined) {
      const a = parseListen(o.listen, source);
      checkExposure(a, o.allowRemote === true, source);
      const c = this.current;
      const same = c && c.at.host === a.host && (a.port === 0 || a.port === c.at.port);
      if (!same) await this.listen(a, o.allowRemote === true);
    } else if (!this.current) {
      const saved = await this.saved();
      if (saved) {
        const a = parseListen(saved.listen, webConfigPath(this.d.jaggersDir));
        // Another program took the port meanwhile: a free one (the URL is new anyway).
        await this.listen(a, saved.allowRemote).catch(async (e) => {
          this.d.log.warn({ err: (e as Error).message }, 'the web dashboard listens on a free port instead');
          await this.listen({ ...a, port: 0 }, saved.allowRemote);
        });
      } else await this.listen(DEFAULT, false);
    }
    const c = this.current!;
    const token = this.sessions.issueToken();
    const address = formatAddress(c.at);
    return { url: `http://${urlHost(c.at)}:${c.at.port}/login?token=${token}`, address, token, remote: c.remote };
  }

  private async listen(a: ListenAddress, allowRemote: boolean): Promise<void> {
    checkExposure(a, allowRemote, 'the web listener');
    const token = await this.d.token();
    // The port (a: 0, any free one) and the cookie named by it are known once the app listens.
    let port = a.port;
    const cookie = () => cookieName(port);
    const gate = webGate({ port: () => port, cookie, sessions: this.sessions, token: () => token });
    const app = this.d.build({ gate, cookie, sessions: this.sessions });
    try {
      await app.listen({ host: a.host, port: a.port });
    } catch (e) {
      await app.close().catch(() => {});
      throw listenFailed(a, e, this.address, { what: 'the web dashboard', file: 'web.json', stop: 'jaggers web --stop' });
    }
    const addr = app.server.address();
    port = typeof addr === 'object' && addr ? addr.port : a.port;
    const old = this.current;
    this.current = { app, at: { host: a.host, port }, remote: !isLoopback(a.host) };
    await old?.app.close().catch(() => {});
    const address = formatAddress(this.current.at);
    this.d.moved?.(address);
    await writeFileAtomic(webConfigPath(this.d.jaggersDir), `${JSON.stringify({ listen: address, ...(allowRemote ? { allowRemote: true } : {}) })}\n`);
    this.d.log.info({ listen: address }, 'web dashboard listening');
    if (!isLoopback(a.host))
      this.d.log.warn({ listen: address }, 'the web dashboard listens beyond this machine (--allow-remote): its login travels unencrypted');
  }

  private async saved(): Promise<{ listen: string; allowRemote: boolean } | null> {
    const text = await readFile(webConfigPath(this.d.jaggersDir), 'utf8').catch(() => null);
    if (text === null) return null;
    try {
      const v = JSON.parse(text) as { listen?: unknown; allowRemote?: unknown };
      return typeof v.listen === 'string' ? { listen: v.listen, allowRemote: v.allowRemote === true } : null;
    } catch {
      return null;
    }
  }
}
