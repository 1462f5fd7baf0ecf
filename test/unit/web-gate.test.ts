// The dashboard listener's gate and logins, without a server: the Host rule (DNS rebinding), the cookie
// or the bearer token on every route but the login, JSON bodies only, and one-time tokens.
import { describe, expect, it } from 'vitest';
import { cookieName, cookieValue, hostProblem, webGate, type GateRequest } from '../../src/web/gate.js';
import { WebSessions } from '../../src/web/sessions.js';

describe('hostProblem', () => {
  it.each(['127.0.0.1:4000', 'localhost:4000', 'LOCALHOST:4000', '[::1]:4000', '192.168.1.5:4000', '[fe80::1]:4000'])('takes %s', (h) => {
    expect(hostProblem(h, 4000)).toBeNull();
  });
  it.each([undefined, '', 'evil.example:4000', 'localhost.evil.example:4000', '127.0.0.1:4001', '127.0.0.1', 'localhost', '[::1]', 'a:b:c'])(
    'refuses %s',
    (h) => {
      expect(hostProblem(h, 4000)).toMatch(/Host|no Host header/);
    },
  );
  it('a host without a port is port 80', () => {
    expect(hostProblem('127.0.0.1', 80)).toBeNull();
  });
});

describe('cookieValue', () => {
  it('finds the named cookie among others', () => {
    expect(cookieValue('a=1; jaggers_web_4000=abc ; b=2', 'jaggers_web_4000')).toBe('abc');
    expect(cookieValue('jaggers_web_4001=abc', 'jaggers_web_4000')).toBeNull();
    expect(cookieValue(undefined, 'x')).toBeNull();
  });
});

describe('webGate', () => {
  const sessions = new WebSessions();
  const session = sessions.login(sessions.issueToken())!;
  const gate = webGate({ port: () => 4000, cookie: () => cookieName(4000), sessions, token: () => 'api-token' });
  const req = (method: string, url: string, headers: GateRequest['headers'] = {}): GateRequest => ({
    method,
    url,
    headers: { host: '127.0.0.1:4000', ...headers },
  });
  const cookie = { cookie: `jaggers_web_4000=${session}` };

  it('refuses a Host not of this listener before anything else (403)', () => {
    expect(gate(req('GET', '/', { ...cookie, host: 'evil.example:4000' }))).toMatchObject({ status: 403, code: 'E_FORBIDDEN' });
  });

  it.each(['/', '/assets/app.js', '/v1/terminals', '/v1/events', '/v1/terminals/alpha/stream', '/nowhere'])('401 without the cookie on %s', (url) => {
    const r = gate(req('GET', url));
    expect(r).toMatchObject({ status: 401, code: 'E_UNAUTHORIZED' });
    expect(r!.message).toMatch(/not logged in.*jaggers web/);
  });

  it('takes the session cookie or the bearer token; not another port cookie, a wrong session or token', () => {
    expect(gate(req('GET', '/v1/terminals', cookie))).toBeNull();
    expect(gate(req('GET', '/v1/terminals', { authorization: 'Bearer api-token' }))).toBeNull();
    expect(gate(req('GET', '/v1/terminals', { cookie: `jaggers_web_4001=${session}` }))).toMatchObject({ status: 401 });
    expect(gate(req('GET', '/v1/terminals', { cookie: 'jaggers_web_4000=nope' }))!.message).toMatch(/not one of this supervisor/);
    expect(gate(req('GET', '/v1/terminals', { authorization: 'Bearer nope' }))).toMatchObject({ status: 401 });
  });

  it('lets GET /login through without a cookie (its token is checked by the route)', () => {
    expect(gate(req('GET', '/login?token=x'))).toBeNull();
    expect(gate(req('POST', '/login?token=x'))).toMatchObject({ status: 401 });
  });

  it('a request with a body must be JSON (no cross-site form post)', () => {
    for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
      expect(gate(req('POST', '/v1/jobs', { ...cookie, ...(type ? { 'content-type': type } : {}) }))).toMatchObject({ status: 415, code: 'E_USAGE' });
    expect(gate(req('POST', '/v1/jobs', { ...cookie, 'content-type': 'application/json; charset=utf-8' }))).toBeNull();
  });
});

describe('WebSessions', () => {
  it('a login token works once', () => {
    const s = new WebSessions();
    const t = s.issueToken();
    const session = s.login(t);
    expect(session).toMatch(/^[0-9a-f]{64}$/);
    expect(s.has(session!)).toBe(true);
    expect(s.login(t)).toBeNull();
    expect(s.login('')).toBeNull();
    expect(s.has('')).toBe(false);
  });

  it('keeps a bounded number of tokens and sessions, the oldest going first', () => {
    let n = 0;
    const s = new WebSessions(() => `secret-${n++}`, { tokens: 2, sessions: 2 });
    const [a, b, c] = [s.issueToken(), s.issueToken(), s.issueToken()];
    expect(s.login(a)).toBeNull();
    const sb = s.login(b)!;
    const sc = s.login(c)!;
    const sd = s.login(s.issueToken())!;
    expect([s.has(sb), s.has(sc), s.has(sd)]).toEqual([false, true, true]);
  });
});
