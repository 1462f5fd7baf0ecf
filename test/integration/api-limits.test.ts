// Hostile sizes and malformed requests at the API's edge (issue 26, items 3 and 8): a body of a million
// unknown keys is refused at once with a small answer, without stalling the event loop; nesting,
// key count, body size and error size are bounded; and every status fastify or node's HTTP parser
// would answer in a format of its own (414, 431, 413, 405, 404, a bad URL, a malformed request,
// nested JSON) answers in the one shape. A real supervisor in this process, listening on a unix socket.
import net from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_LIMITS } from '../../src/supervisor/schemas.js';
import { raw } from '../helpers/api.js';
import { startInProcess, type InProcess } from '../helpers/in-process.js';
import { Rig } from '../helpers/rig.js';
import { errorShapeProblem } from '../helpers/routes.js';

/** Bytes written on a fresh connection; the whole answer until the server closes it (or `ms` ran out). */
function rawSocket(socketPath: string, data: string, ms = 10_000): Promise<{ status: number; body: string; head: string }> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socketPath, () => c.write(data));
    let got = '';
    c.setEncoding('latin1');
    c.on('data', (d: string) => {
      got += d;
      // One answer is enough: its Content-Length says when it is whole (keep-alive leaves the socket open).
      const end = got.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(got.slice(0, end))?.[1];
      if (end >= 0 && len !== undefined && Buffer.byteLength(got.slice(end + 4), 'latin1') >= Number(len)) c.destroy();
    });
    c.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? undefined : reject(e)));
    c.on('close', () => {
      const end = got.indexOf('\r\n\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0),
        head: got.slice(0, end),
        body: Buffer.from(got.slice(end + 4), 'latin1').toString('utf8'),
      });
    });
    c.setTimeout(ms, () => c.destroy(new Error(`no whole answer in ${ms} ms; got ${got.slice(0, 300)}`)));
  });
}

/** The event loop's longest delay while `fn` runs (sampled every 10 ms), with `fn`'s result. */
async function withLoopDelay<T>(fn: () => Promise<T>): Promise<{ result: T; maxMs: number; wallMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t = performance.now();
  const result = await fn();
  const wallMs = performance.now() - t;
  // One more sample after the last piece of work, so a stall at the very end is counted too.
  await sleep(20);
  h.disable();
  return { result, maxMs: h.max / 1e6, wallMs };
}

/** `{"key-0000000":true,...}`: `n` unknown keys, 19 bytes each. */
function manyKeys(n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`"key-${String(i).padStart(7, '0')}":true`);
  return `{${parts.join(',')}}`;
}

describe('the API edge: bounded sizes, one error shape', () => {
  let rig: Rig;
  let sup: InProcess;
  let socketPath: string;
  beforeAll(async () => {
    rig = await Rig.create();
    sup = await startInProcess(rig);
    socketPath = path.join(rig.root, 'api-test.sock');
    await sup.app.listen({ path: socketPath });
  }, 60_000);
  afterAll(async () => {
    await sup?.stop();
    await rig?.cleanup();
  });

  const shape = (r: { body: string }) => errorShapeProblem(r.body);

  it('a 31 MB body of 1.6 million unknown keys: a small 413 at once, the event loop never stalls (four at once too)', async () => {
    const body = manyKeys(1_600_000);
    expect(body.length).toBeGreaterThan(30_000_000);
    const one = await withLoopDelay(() => raw({ socketPath }, 'POST', '/v1/jobs', body));
    expect(one.result.status).toBe(413);
    expect(shape(one.result)).toBeNull();
    expect(one.result.json().error).toEqual({
      code: 'E_PAYLOAD_TOO_LARGE',
      message: `POST /v1/jobs: the JSON body is over ${JSON_LIMITS.members} keys and array items`,
    });
    expect(one.result.body.length).toBeLessThan(1000);
    const four = await withLoopDelay(() => Promise.all([1, 2, 3, 4].map(() => raw({ socketPath }, 'POST', '/v1/messages', body))));
    for (const r of four.result) {
      expect(r.status).toBe(413);
      expect(r.body.length).toBeLessThan(1000);
    }
    console.log(
      `1.6M keys (${(body.length / 1e6).toFixed(1)} MB): one request ${one.wallMs.toFixed(0)} ms, longest event-loop delay ${one.maxMs.toFixed(0)} ms; ` +
        `four at once ${four.wallMs.toFixed(0)} ms, longest delay ${four.maxMs.toFixed(0)} ms; rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
    );
    // Never one stall for the whole body (before: the parse held the loop for all of its 16 s). The bound
    // is a share of the request's own time, not a number of ms: a loaded machine (CI at load 20: 1.1 s
    // stalls in a 3.7 s request) stretches both alike.
    expect(one.maxMs).toBeLessThan(one.wallMs / 2);
    expect(four.maxMs).toBeLessThan(four.wallMs / 2);
  }, 60_000);

  it('unknown keys under the limit: the error names a few and counts the rest; many problems are listed up to ten', async () => {
    const r = await raw({ socketPath }, 'POST', '/v1/jobs', manyKeys(4000));
    expect(r.status).toBe(400);
    expect(shape(r)).toBeNull();
    const m = r.json().error!.message;
    expect(m).toContain('Unrecognized keys: "key-0000000", "key-0000001", "key-0000002", "key-0000003", "key-0000004" and 3995 more');
    expect(r.body.length).toBeLessThan(1000);
    // 3,000 roles, each a bad agent name: ten problems named, the others counted.
    const roles = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`r${i}`, `bad name ${i}`]));
    const many = await raw({ socketPath }, 'POST', '/v1/tasks', JSON.stringify({ workflow: 'handoff', text: 'x', roles }));
    expect(many.status).toBe(400);
    expect(many.json().error!.message).toContain('(and 2990 more problems)');
    expect(many.body.length).toBeLessThan(4500);
  });

  it('deeply nested JSON is a 400 in the one shape (it was a 500 from a stack overflow)', async () => {
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ] as const) {
      const deep = `${open.repeat(5000)}1${close.repeat(5000)}`;
      for (const url of ['/v1/jobs', '/v1/tasks', '/v1/up']) {
        const r = await raw({ socketPath }, 'POST', url, deep);
        expect(r.status, `${url} ${open}`).toBe(400);
        expect(r.json().error).toEqual({ code: 'E_USAGE', message: `POST ${url}: the JSON body is nested deeper than ${JSON_LIMITS.depth} levels` });
      }
    }
    // Within the limit, an ordinary validation error.
    const ok = await raw({ socketPath }, 'POST', '/v1/jobs', `${'['.repeat(20)}${']'.repeat(20)}`);
    expect(ok.status).toBe(400);
    expect(ok.json().error!.message).toMatch(/^POST \/v1\/jobs body: field `\(top level\)`: Invalid input: expected object, received array/);
  });

  it('413: a body over its route limit (small routes take 64 KB), in the one shape', async () => {
    const r = await raw({ socketPath }, 'POST', '/v1/up', JSON.stringify({ agents: 'x'.repeat(70_000) }));
    expect(r.status).toBe(413);
    expect(r.json().error).toEqual({ code: 'E_PAYLOAD_TOO_LARGE', message: 'POST /v1/up: request body over 65536 bytes' });
    const text = await raw({ socketPath }, 'POST', '/v1/jobs/j-00000000/cancel', 'x'.repeat(70_000), { 'content-type': 'text/plain' });
    expect(text.status).toBe(413);
    expect(shape(text)).toBeNull();
  });

  it("414 and 431 from node's HTTP parser, a malformed request, in the one shape", async () => {
    const longUrl = await rawSocket(socketPath, `GET /v1/jobs/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl.status).toBe(414);
    expect(JSON.parse(longUrl.body)).toEqual({ error: { code: 'E_USAGE', message: 'the URL is too long (over the 16 KB of the request head)' } });
    const bigHeader = await rawSocket(socketPath, `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeader.status).toBe(431);
    expect(JSON.parse(bigHeader.body)).toEqual({ error: { code: 'E_USAGE', message: 'the request headers are over 16 KB' } });
    const manyHeaders = await rawSocket(socketPath, `GET /v1/health HTTP/1.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: 1\r\n`).join('')}\r\n`);
    expect(manyHeaders.status).toBe(431);
    expect(errorShapeProblem(manyHeaders.body)).toBeNull();
    for (const bad of ['FOO / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n', 'garbage\r\n\r\n']) {
      const r = await rawSocket(socketPath, bad);
      expect(r.status, bad).toBe(400);
      expect(errorShapeProblem(r.body), bad).toBeNull();
      expect(JSON.parse(r.body).error.message).toMatch(/^malformed HTTP request: Parse Error/);
    }
  });

  it("fastify's own answers in the one shape: a path part over the limit (414), a bad URL, 404, 405, 415, bad JSON", async () => {
    // Up to 256 characters a name reaches the name rule (at most 128); past that the router's 414.
    const long = await raw({ socketPath }, 'GET', `/v1/terminals/${'a'.repeat(200)}`);
    expect(long.status).toBe(400);
    expect(long.json().error!.message).toMatch(/params: field `agent`: .*must be an agent name/);
    const param = await raw({ socketPath }, 'GET', `/v1/terminals/${'a'.repeat(300)}`);
    expect(param.status).toBe(414);
    expect(param.json().error!.message).toMatch(/^GET \/v1\/terminals\/a+\.\.\.: a part of the path is too long$/);
    const badUrl = await raw({ socketPath }, 'GET', '/v1/terminals/%zz');
    expect(badUrl.status).toBe(400);
    expect(badUrl.json().error).toEqual({ code: 'E_USAGE', message: 'GET /v1/terminals/%zz: the URL does not decode' });
    const none = await raw({ socketPath }, 'GET', '/v2/nothing');
    expect(none.status).toBe(404);
    expect(none.json().error).toEqual({ code: 'E_NOT_FOUND', message: 'no route GET /v2/nothing' });
    const method = await raw({ socketPath }, 'DELETE', '/v1/jobs');
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe('POST, GET');
    expect(method.json().error).toEqual({ code: 'E_USAGE', message: 'DELETE /v1/jobs: method not allowed; this path takes POST, GET' });
    const put = await raw({ socketPath }, 'PUT', '/v1/jobs/j-00000000/cancel', '{}');
    expect(put.status).toBe(405);
    expect(shape(put)).toBeNull();
    const media = await raw({ socketPath }, 'POST', '/v1/jobs', '<x/>', { 'content-type': 'application/xml' });
    expect(media.status).toBe(415);
    expect(shape(media)).toBeNull();
    for (const body of ['{"text":', '', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}']) {
      const r = await raw({ socketPath }, 'POST', '/v1/jobs', body, { 'content-type': 'application/json' });
      expect(r.status, body).toBe(400);
      expect(shape(r), body).toBeNull();
    }
  });
});
