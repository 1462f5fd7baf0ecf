// Fuzz: generated requests at every route of the API, on a real supervisor in this process (a private
// tmux server, one live agent): names and ids in the path (names every object has, paths, unicode,
// long ones), query strings, bodies (each route's good body mutated field by field, any JSON, noise,
// deep nesting, thousands of keys), content types and methods. No answer is a 5xx, every error is in
// the one shape and small, no request stalls the event loop, and the supervisor still answers after.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventsQuery, TaskBody, UpBody } from '../../src/supervisor/schemas.js';
import { fuzz, FUZZ_SEED, STALL_BOUND_MS } from '../helpers/fuzz.js';
import { startInProcess, type InProcess } from '../helpers/in-process.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { errorShapeProblem, fillParams, listRoutes, type Route } from '../helpers/routes.js';

const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];
/** Names and ids a client might send; never a live agent or a profile (a good request must not start work). */
const nameLike = fc.oneof(
  {
    arbitrary: fc.constantFrom(...HOSTILE, 'ghost', 'j-0123abcd', 'm-0123abcd', 't-1', 'jg-00000000', 'handoff', '..', '.', '-x', 'a b', 'ALPHA', '%', '/'),
    weight: 4,
  },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }), weight: 1 },
  { arbitrary: fc.string({ minLength: 100, maxLength: 300 }), weight: 1 },
);
const any = fc.jsonValue({ maxDepth: 4 });
const value = fc.oneof(any, nameLike, fc.array(nameLike, { maxLength: 3 }));

/** A good body of each route that takes one (its names unknown), the start of the mutations. */
const TEMPLATES: Record<string, Record<string, unknown>> = {
  'POST /v1/terminals/:agent/input': { text: 'hi' },
  'POST /v1/terminals/:agent/answer': { choice: '1', expect: { text: 'Allow?', choices: ['Yes', 'No'] } },
  'POST /v1/handoffs': { agent: 'ghost', message: 'hi', wait: false, timeout: 1 },
  'POST /v1/up': { names: ['ghost'] },
  'POST /v1/jobs': { target: 'ghost', text: 'hi', name: 'n', timeout: 1 },
  'POST /v1/messages': { to: 'ghost', text: 'hi' },
  'POST /v1/tasks': { workflow: 'handoff', text: 'hi', agents: ['ghost'], detached: true },
  'POST /v1/listen': { listen: '127.0.0.1:0' },
  'POST /v1/terminals/:agent/keys': { data: 'x' },
  'POST /v1/outbox/:id/state': { state: 'done', reason: 'x', reply: 'r' },
};
const QUERY_KEYS = ['task', 'ansi', 'history', 'state', 'timeout', 'until', 'agent', 'types', 'since'];
const queryValue = fc.oneof(
  nameLike,
  fc.integer().map(String),
  fc.constantFrom('idle', 'busy,done', 'exited', '1', 'true', 'end', 'delivered', '-1', '1e309', 'NaN', '0.05', ''),
);

function mutate(v: Record<string, unknown>, key: string, replacement: unknown, op: number): Record<string, unknown> {
  const o = { ...v };
  const keys = Object.keys(o);
  if (op % 3 === 0 && keys.length) delete o[keys[op % keys.length]!];
  else
    Object.defineProperty(o, op % 3 === 1 && keys.length ? keys[op % keys.length]! : key, {
      value: replacement,
      enumerable: true,
      configurable: true,
      writable: true,
    });
  return o;
}

interface Req {
  route: string;
  method: string;
  url: string;
  payload?: string;
  contentType?: string;
}

function requestFor(r: Route): fc.Arbitrary<Req> {
  const key = `${r.method} ${r.url}`;
  const params = r.url.match(/:[A-Za-z_]+/g) ?? [];
  // A live agent's name only where reading it starts nothing.
  const param = r.method === 'GET' ? fc.oneof({ arbitrary: nameLike, weight: 3 }, { arbitrary: fc.constant('alpha'), weight: 1 }) : nameLike;
  const query = fc.option(fc.dictionary(fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 6 })), queryValue, { maxKeys: 4 }), { freq: 2 });
  const template = TEMPLATES[key] ?? {};
  const body = fc.oneof(
    {
      arbitrary: fc
        .array(fc.tuple(fc.oneof(nameLike, fc.constantFrom(...Object.keys(template), 'extra')), value, fc.nat()), { maxLength: 3 })
        .map((ms) => JSON.stringify(ms.reduce((v, [k, x, op]) => mutate(v, k, x, op), template))),
      weight: 8,
    },
    { arbitrary: any.map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: fc.string({ maxLength: 200 }), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.integer({ min: 20, max: 3000 }), fc.constantFrom('[', '{"a":'))
        .map(([n, o]) => o.repeat(n) + '1' + (o === '[' ? ']' : '}').repeat(n)),
      weight: 1,
    },
    {
      arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])))),
      weight: 1,
    },
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 8 },
    {
      arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'application/jsonx'),
      weight: 2,
    },
  );
  const method = fc.oneof(
    { arbitrary: fc.constant(r.method), weight: 9 },
    { arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), weight: 1 },
  );
  return fc
    .record({ ps: fc.array(param, { minLength: params.length, maxLength: params.length }), q: query, body, contentType, method })
    .map(({ ps, q, body, contentType, method }) => {
      const filled = [...ps];
      let url = fillParams(r.url, () => filled.shift() ?? 'x');
      const qs = { ...(q ?? {}) };
      // A wait that would wait: never longer than a moment (an invalid timeout is a 400 at once).
      if (r.url.endsWith('/wait') && !/^(?:0?\.\d+|abc|-1|NaN|)$/.test(qs.timeout ?? '')) qs.timeout = '0.05';
      const search = new URLSearchParams(qs).toString();
      if (search) url += `?${search}`;
      const withBody = method !== 'GET' && method !== 'OPTIONS';
      return { route: key, method, url, ...(withBody ? { payload: body } : {}), ...(withBody && contentType ? { contentType } : {}) };
    });
}

/** Good requests that would start real work (open windows, bind the live agent) or never end (the event stream). */
function startsWork(req: Req): boolean {
  let body: unknown;
  try {
    body = req.payload === undefined ? undefined : JSON.parse(req.payload);
  } catch {
    return false;
  }
  if (req.route === 'POST /v1/up' && req.method === 'POST') return UpBody.safeParse(body).success;
  if (req.route === 'POST /v1/tasks' && req.method === 'POST') {
    const t = TaskBody.safeParse(body);
    return t.success && !t.data.agents && !t.data.roles;
  }
  if (req.route === 'GET /v1/events' && req.method === 'GET')
    return EventsQuery.safeParse(Object.fromEntries(new URL(req.url, 'http://x').searchParams)).success;
  // The hosts' events never end (with no host, nothing ever comes); it takes no query.
  if (req.route === 'GET /v1/hosts/events' && req.method === 'GET') return !req.url.includes('?');
  // A live agent's terminal stream never ends.
  if (req.route === 'GET /v1/terminals/:agent/stream' && req.method === 'GET') return req.url.startsWith('/v1/terminals/alpha/');
  return false;
}

describe('fuzz: every API route', () => {
  let rig: Rig;
  let sup: InProcess;
  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    sup = await startInProcess(rig);
    const up = await sup.app.inject({ method: 'POST', url: '/v1/up', payload: {} });
    expect(up.statusCode, up.body).toBe(200);
    const idle = await sup.app.inject({ method: 'GET', url: '/v1/terminals/alpha/wait?state=idle&timeout=30' });
    expect(idle.statusCode, idle.body).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await sup?.stop();
    await rig?.cleanup();
  });

  it('no 5xx, every error in the one shape and small, no stall; the supervisor answers after', async () => {
    const routes = listRoutes(sup.app);
    const hits = new Map<string, number>(routes.map((r) => [`${r.method} ${r.url}`, 0]));
    const statuses = new Map<number, number>();
    let skipped = 0;
    const probe = async (req: Req) => {
      if (startsWork(req)) {
        skipped++;
        return;
      }
      hits.set(req.route, (hits.get(req.route) ?? 0) + 1);
      const res = await sup.app.inject({
        method: req.method as 'GET',
        url: req.url,
        ...(req.payload !== undefined ? { payload: req.payload } : {}),
        headers: req.contentType ? { 'content-type': req.contentType } : {},
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const what = `${req.method} ${req.url} ${req.contentType ?? ''} ${(req.payload ?? '').slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
      expect(res.statusCode, what).toBeLessThan(500);
      if (res.statusCode >= 400) {
        expect(errorShapeProblem(res.body), what).toBeNull();
        expect(res.body.length, what).toBeLessThan(8000);
      }
    };
    const f = await fuzz('API, every route', fc.constantFrom(...routes).chain(requestFor), probe, { numRuns: 6000, timeLimitMs: 20_000, loopDelay: true });
    // A loaded machine runs fewer cases in the time: each route short of 20 gets its own cases, in order.
    for (const r of routes) {
      const key = `${r.method} ${r.url}`;
      for (const req of fc.sample(requestFor(r), { seed: FUZZ_SEED, numRuns: 200 })) {
        if ((hits.get(key) ?? 0) >= 20) break;
        await probe(req);
      }
    }
    console.log(
      `fuzz API: statuses ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}x${n}`)
        .join(' ')}; ${skipped} good requests that would start work skipped; ` + `fewest cases on one route ${Math.min(...hits.values())}`,
    );
    for (const [route, n] of hits) expect(n, route).toBeGreaterThanOrEqual(20);
    expect(f.slowestMs).toBeLessThan(STALL_BOUND_MS * 2.5);
    expect(f.loopDelayMs).toBeLessThan(STALL_BOUND_MS);
    const health = await sup.app.inject({ method: 'GET', url: '/v1/health' });
    expect(health.statusCode).toBe(200);
  }, 120_000);
});
