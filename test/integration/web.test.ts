// The web dashboard's server side (issue 29) on a real supervisor, a private tmux server and the fake
// agent: `jaggers web` prints a login URL whose token works once and sets the session cookie; without it
// every route is a 401 in the one error shape; the terminal stream gives a snapshot, then the agent's
// reply as `output` after an input; keys typed arrive in the pane. And the page's files (an in-process
// supervisor with a page folder of the test's own): index.html, an asset and its .gz, a missing one.
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import stripAnsi from 'strip-ansi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/logger.js';
import { buildApp } from '../../src/supervisor/app.js';
import { ensureToken } from '../../src/supervisor/tcp.js';
import { WebListener } from '../../src/web/listener.js';
import type { HealthView } from '../../src/api/types.js';
import { api, raw, waitPidGone, type RawResponse } from '../helpers/api.js';
import { startInProcess, type InProcess } from '../helpers/in-process.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { errorShapeProblem } from '../helpers/routes.js';

interface SseEvent {
  type: string;
  data: Record<string, unknown>;
}

/** A server-sent-events stream read as it comes; `waitFor` resolves on the first event (since `from`) that satisfies `ok`. */
function openStream(port: number, urlPath: string, headers: Record<string, string>) {
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let status = 0;
  let ended = false;
  const req = http.request({ host: '127.0.0.1', port, path: urlPath, headers, agent: false }, (res) => {
    status = res.statusCode ?? 0;
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      buf += c;
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type && data) events.push({ type, data: JSON.parse(data) as Record<string, unknown> });
      }
      for (const w of waiters.splice(0)) w();
    });
    res.on('end', () => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
  });
  req.on('error', () => {});
  req.end();
  return {
    events,
    status: () => status,
    /** The output events' text so far (escape sequences removed). */
    text: () =>
      stripAnsi(
        events
          .filter((e) => e.type === 'output')
          .map((e) => e.data.data)
          .join(''),
      ),
    waitFor(ok: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs} ms; events: ${JSON.stringify(events).slice(-2000)}`)), timeoutMs);
        const check = () => {
          if (ok()) {
            clearTimeout(timer);
            resolve();
          } else if (ended) {
            clearTimeout(timer);
            reject(new Error(`${what}: the stream ended; events: ${JSON.stringify(events).slice(-2000)}`));
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => req.destroy(),
  };
}

const expectUnauthorized = (r: RawResponse, what: string) => {
  expect(r.status, `${what}: ${r.body}`).toBe(401);
  expect(errorShapeProblem(r.body), what).toBeNull();
  expect(r.json().error?.code).toBe('E_UNAUTHORIZED');
};

describe('jaggers web, on a real supervisor', () => {
  let rig: Rig;
  let port = 0;
  let cookie = '';
  const at = () => ({ host: '127.0.0.1', port });
  const get = (p: string, headers: Record<string, string> = { cookie }) => raw(at(), 'GET', p, undefined, headers);
  const post = (p: string, body: unknown, headers: Record<string, string> = { cookie }) =>
    raw(at(), 'POST', p, JSON.stringify(body), { 'content-type': 'application/json', ...headers });

  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await rig?.cleanup();
  });

  it('prints a login URL whose token works once and sets the HttpOnly session cookie', async () => {
    const r = await rig.run(['web', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as { url: string; address: string; token: string };
    port = Number(/^127\.0\.0\.1:(\d+)$/.exec(v.address)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(v.url).toBe(`http://127.0.0.1:${port}/login?token=${v.token}`);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).web).toBe(v.address);
    const login = await get(`/login?token=${v.token}`, {});
    expect(login.status, login.body).toBe(303);
    expect(login.headers.location).toBe('/');
    const set = String(login.headers['set-cookie']);
    expect(set).toMatch(new RegExp(`^jaggers_web_${port}=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/$`));
    cookie = set.split(';')[0]!;
    expectUnauthorized(await get(`/login?token=${v.token}`, {}), 'the same token again');
    expectUnauthorized(await get('/login?token=nonsense', {}), 'a token never issued');

    // A second `jaggers web` keeps the address and issues a new token; the session stays.
    const again = await rig.run(['web']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${port}/login\\?token=[0-9a-f]{64}\\n`));
    expect(again.stdout).not.toContain(v.token);
    expect((await get('/v1/terminals')).status).toBe(200);
  });

  it('401 in the one error shape on every route without the cookie; 403 for a Host not its own; JSON bodies only', async () => {
    for (const p of ['/', '/assets/x.js', '/v1/terminals', '/v1/events', '/v1/terminals/alpha/stream', '/v1/health', '/nowhere'])
      expectUnauthorized(await get(p, {}), `GET ${p}`);
    expectUnauthorized(await post('/v1/terminals/alpha/keys', { data: 'x' }, {}), 'POST keys');
    expectUnauthorized(await get('/v1/terminals', { cookie: `${cookie.split('=')[0]}=${'0'.repeat(64)}` }), 'a session never made');
    const rebound = await get('/v1/terminals', { cookie, host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.json().error?.code).toBe('E_FORBIDDEN');
    const form = await raw(at(), 'POST', '/v1/jobs', 'target=alpha&text=hi', { cookie, 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(errorShapeProblem(form.body)).toBeNull();
    // With the cookie: the API's own answers, the same as on its socket.
    const missing = await get('/assets/missing-0000.js');
    expect(missing.status).toBe(404);
    expect(missing.json().error?.code).toBe('E_NOT_FOUND');
    const ghost = await post('/v1/terminals/ghost/keys', { data: 'x' });
    expect(ghost.status).toBe(404);
    expect(ghost.json().error?.code).toBe('E_AGENT_UNKNOWN');
  });

  it("the terminal stream gives a snapshot, then the agent's reply as output; keys typed arrive in the pane", async () => {
    const idle = await get('/v1/terminals/alpha/wait?state=idle&timeout=30');
    expect(idle.status, idle.body).toBe(200);
    // The streams' own tmux control client: attached while a stream is open, gone with the last one.
    const clients = async () => (await rig.tmux(['list-clients', '-F', '#{client_control_mode}'])).split('\n').filter((l) => l === '1').length;
    const watch = await rig.control();
    const before = await clients();
    const detached = new Promise<void>((resolve) => watch.onNotification((n) => n === 'client-detached' && resolve()));
    const s = openStream(port, '/v1/terminals/alpha/stream', { cookie });
    try {
      await s.waitFor(() => s.events.length > 0, 'the first event');
      expect(s.status()).toBe(200);
      const first = s.events[0]!;
      expect(first.type).toBe('snapshot');
      expect(await clients()).toBe(before + 1);
      expect(first.data).toMatchObject({ cols: expect.any(Number), rows: expect.any(Number), cursor: { x: expect.any(Number), y: expect.any(Number) } });
      expect(stripAnsi(String(first.data.data))).toMatch(/\S/);

      const input = await post('/v1/terminals/alpha/input', { text: 'hello from the dashboard' });
      expect(input.status, input.body).toBe(200);
      await s.waitFor(() => /turn \d+ of session/.test(s.text()), "the agent's reply in the output");

      const typed = await post('/v1/terminals/alpha/keys', { data: 'typed by the web é' });
      expect(typed.status, typed.body).toBe(200);
      expect(typed.json()).toMatchObject({ agent: 'alpha', bytes: 19 });
      await rig.waitForScreen('alpha', /typed by the web é/);
      await s.waitFor(() => s.text().includes('typed by the web é'), 'the typed keys echoed in the output');
      // Ctrl-U clears the input line again, as a person would.
      expect((await post('/v1/terminals/alpha/keys', { data: '\u0015' })).status).toBe(200);

      // The window resized: a size event (tmux checks once a second). The program killed: exit, and the end.
      const pane = await rig.paneOf('alpha');
      const [cols, rows] = [Number(first.data.cols) - 10, Number(first.data.rows) - 5];
      await rig.tmux(['resize-window', '-t', pane, '-x', String(cols), '-y', String(rows)]);
      await s.waitFor(() => s.events.some((e) => e.type === 'size' && e.data.cols === cols && e.data.rows === rows), 'the size event');
      const pid = Number((await rig.tmux(['display-message', '-p', '-t', pane, '#{pane_pid}'])).trim());
      const open = await clients();
      process.kill(pid, 'SIGKILL');
      await s.waitFor(() => s.events.at(-1)?.type === 'exit', 'the exit event');
      expect(s.events.at(-1)?.data.reason).toMatch(/exited|gone/);
      await detached;
      expect(await clients()).toBe(open - 1);
    } finally {
      s.close();
    }
  });

  it('the event stream, with the cookie', async () => {
    const s = openStream(port, '/v1/events?types=state', { cookie });
    try {
      await s.waitFor(() => s.status() === 200, 'the event stream to answer');
    } finally {
      s.close();
    }
  });

  it('a new supervisor listens on the same address again; the old session is gone, a new URL logs in', async () => {
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    const r = await rig.run(['web', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as { address: string; token: string };
    expect(v.address).toBe(`127.0.0.1:${port}`);
    expectUnauthorized(await get('/v1/terminals'), 'the old session after a restart');
    const login = await get(`/login?token=${v.token}`, {});
    expect(login.status).toBe(303);
    cookie = String(login.headers['set-cookie']).split(';')[0]!;
    expect((await get('/v1/terminals')).status).toBe(200);
  });

  it('jaggers web --stop stops the listener', async () => {
    const r = await rig.run(['web', '--stop']);
    expect(r.code, r.stderr).toBe(0);
    await expect(get('/v1/terminals')).rejects.toThrow(/ECONNREFUSED/);
    expect((await api(rig).call<HealthView>('GET', '/v1/health')).web).toBeNull();
  });
});

describe("the page's files", () => {
  let rig: Rig;
  let sup: InProcess;
  let web: WebListener;
  let port = 0;
  let cookie = '';

  beforeAll(async () => {
    rig = await Rig.create();
    sup = await startInProcess(rig);
    const root = path.join(rig.root, 'page');
    await mkdir(path.join(root, 'assets'), { recursive: true });
    await writeFile(path.join(root, 'index.html'), '<!doctype html><title>jaggers</title>');
    await writeFile(path.join(root, 'assets', 'app-1234.js'), 'console.log("page")');
    await writeFile(path.join(root, 'assets', 'app-1234.js.gz'), gzipSync('console.log("page")'));
    web = new WebListener({
      build: (parts) => buildApp({ supervisor: sup.supervisor, hub: sup.hub, log: silentLog, session: sup.ctx.session, web: { ...parts, root } }),
      jaggersDir: sup.ctx.jaggersDir,
      token: () => ensureToken(sup.ctx.jaggersDir),
      log: silentLog,
    });
    const opened = await web.open({}, 'test');
    port = Number(opened.address.split(':')[1]);
    const login = await raw({ host: '127.0.0.1', port }, 'GET', `/login?token=${opened.token}`);
    cookie = String(login.headers['set-cookie']).split(';')[0]!;
  }, 60_000);
  afterAll(async () => {
    await web?.close();
    await sup?.stop();
    await rig?.cleanup();
  });

  const get = (p: string, headers: Record<string, string> = {}) => raw({ host: '127.0.0.1', port }, 'GET', p, undefined, { cookie, ...headers });

  it('serves index.html at /, an asset and its .gz, and 404 in the one shape for a missing or unsafe name', async () => {
    const index = await get('/');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['x-frame-options']).toBe('DENY');
    expect(index.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(index.body).toContain('<title>jaggers</title>');

    const zipped = await get('/assets/app-1234.js', { 'accept-encoding': 'gzip' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const plain = await get('/assets/app-1234.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe('console.log("page")');

    for (const p of ['/assets/nope.js', '/assets/..%2f..%2fjaggers.json', '/assets/.hidden']) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
      expect(errorShapeProblem(r.body), p).toBeNull();
    }
  });
});
