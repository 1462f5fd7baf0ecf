// Names every JavaScript object has (`__proto__`, `constructor`, `toString`, `hasOwnProperty`) on every
// route that takes a name or an id, in its path, its query or its body: each a 400 or 404 in the one
// error shape, nothing recorded and no file left behind (issue 26, item 4). A real supervisor in this
// process, on a private tmux server with one live agent.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../helpers/in-process.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { errorShapeProblem, fillParams, listRoutes } from '../helpers/routes.js';

const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** One request of a case: the path (params filled with the name) and what it carries. */
interface Variant {
  query?: (n: string) => string;
  body?: (n: string) => unknown;
  /** Params filled with a real agent or id, the name going elsewhere (default: the name fills every param). */
  params?: string;
}

const q = (field: string) => (n: string) => `?${field}=${encodeURIComponent(n)}`;
const inPath: Variant = {};
/** Every route of the API, with the ways it takes a name; a route that takes none says so with []. */
const CASES: Record<string, Variant[]> = {
  'GET /v1/health': [],
  'GET /v1/terminals': [{ query: q('task') }],
  'GET /v1/terminals/:agent': [inPath, { params: 'alpha', query: q('task') }],
  'GET /v1/terminals/:agent/screen': [inPath, { params: 'alpha', query: q('task') }],
  'GET /v1/terminals/:agent/wait': [
    { query: () => '?state=idle&timeout=1' },
    { params: 'alpha', query: (n) => `?state=exited&timeout=1&task=${encodeURIComponent(n)}` },
  ],
  'POST /v1/terminals/:agent/input': [{ body: () => ({ text: 'hi' }) }, { params: 'alpha', body: (n) => ({ text: 'hi', task: n }) }],
  'POST /v1/terminals/:agent/answer': [{ body: () => ({ choice: '1' }) }, { params: 'alpha', body: (n) => ({ choice: '1', task: n }) }],
  'GET /v1/terminals/:agent/inbox': [inPath, { params: 'alpha', query: q('task') }],
  'GET /v1/terminals/:agent/stream': [inPath, { params: 'alpha', query: q('task') }],
  'POST /v1/terminals/:agent/keys': [{ body: () => ({ data: 'x' }) }, { params: 'alpha', body: (n) => ({ data: 'x', task: n }) }],
  // The hosts' agents (docs/web.md): a name for the host and the agent; none here is a host of this supervisor.
  'GET /v1/hosts/terminals': [],
  'GET /v1/hosts/events': [],
  'GET /v1/hosts/:host/terminals/:agent': [inPath, { params: 'alpha', query: q('task') }],
  'GET /v1/hosts/:host/terminals/:agent/inbox': [inPath, { params: 'alpha', query: q('task') }],
  'GET /v1/hosts/:host/terminals/:agent/stream': [inPath, { params: 'alpha', query: q('task') }],
  'POST /v1/hosts/:host/terminals/:agent/answer': [{ body: () => ({ choice: '1' }) }],
  'POST /v1/hosts/:host/terminals/:agent/keys': [{ body: () => ({ data: 'x' }) }],
  'POST /v1/hosts/release': [],
  'POST /v1/handoffs': [
    { body: (n) => ({ agent: n, message: 'hi', wait: false }) },
    { body: (n) => ({ agent: 'alpha', message: 'hi', from: n, wait: false }) },
    { body: (n) => ({ agent: 'alpha', message: 'hi', fromTerminal: n, wait: false }) },
    { body: (n) => ({ agent: 'alpha', message: 'hi', task: n, wait: false }) },
    { body: (n) => ({ agent: 'alpha', message: 'hi', workflow: n, wait: false }) },
  ],
  'GET /v1/handoffs/:id': [inPath],
  'POST /v1/up': [{ body: (n) => ({ names: [n] }) }, { body: (n) => ({ agents: n }) }, { body: (n) => ({ task: n }) }],
  'GET /v1/sessions': [{ query: q('task') }],
  'POST /v1/jobs': [
    { body: (n) => ({ target: n, text: 'hi' }) },
    { body: (n) => ({ target: 'alpha', text: 'hi', from: n }) },
    { body: (n) => ({ target: 'alpha', text: 'hi', fromTerminal: n }) },
    { body: (n) => ({ target: 'alpha', text: 'hi', task: n }) },
  ],
  'GET /v1/jobs': [],
  'GET /v1/usage': [{ query: q('by') }],
  'GET /v1/budgets': [],
  'POST /v1/budgets/raise': [
    { body: (n) => ({ scope: 'agent', name: n, tokens: 1 }) },
    { body: (n) => ({ scope: 'task', name: n, tokens: 1 }) },
    { body: (n) => ({ scope: 'job', name: n, usd: 1 }) },
  ],
  'GET /v1/jobs/:id': [inPath],
  'GET /v1/jobs/:id/wait': [{ query: () => '?timeout=1' }],
  'GET /v1/jobs/:id/result': [inPath],
  'POST /v1/jobs/:id/cancel': [inPath],
  'POST /v1/messages': [
    { body: (n) => ({ to: n, text: 'hi' }) },
    { body: (n) => ({ to: 'alpha', text: 'hi', from: n }) },
    { body: (n) => ({ to: 'alpha', text: 'hi', fromTerminal: n }) },
    { body: (n) => ({ to: 'alpha', text: 'hi', task: n }) },
  ],
  // A host's outbox (docs/hosts.md): taken by its id.
  'GET /v1/outbox': [],
  'POST /v1/outbox/:id/taken': [inPath],
  'POST /v1/outbox/:id/state': [{ body: () => ({ state: 'done', reason: 'x', reply: 'r' }) }],
  'POST /v1/tasks': [
    { body: (n) => ({ workflow: n, text: 'hi' }) },
    { body: (n) => ({ id: n, workflow: 'handoff', text: 'hi', agents: ['alpha'] }) },
    { body: (n) => ({ workflow: 'handoff', text: 'hi', agents: [n] }) },
    { body: (n) => ({ workflow: 'handoff', text: 'hi', roles: { [n]: 'alpha' } }) },
    { body: (n) => ({ workflow: 'handoff', text: 'hi', roles: { agent: n } }) },
    { body: (n) => ({ workflow: 'handoff', text: 'hi', agents: ['alpha'], fromTerminal: n }) },
  ],
  'GET /v1/tasks': [],
  'GET /v1/tasks/:id': [inPath],
  'GET /v1/tasks/:id/wait': [{ query: () => '?timeout=1' }],
  'GET /v1/tasks/:id/turns/:n/prompt': [inPath],
  'GET /v1/tasks/:id/turns/:n/reply': [inPath],
  'POST /v1/tasks/:id/resume': [inPath],
  'POST /v1/tasks/:id/cancel': [inPath],
  'GET /v1/flows': [],
  'GET /v1/flows/:name': [inPath],
  'POST /v1/flows/:name/run': [inPath],
  'GET /v1/worktrees': [],
  'GET /v1/worktrees/:name/diff': [inPath],
  'POST /v1/worktrees/:name/merge': [{ body: () => ({}) }, { params: 'alpha', body: (n) => ({ into: n }) }],
  'POST /v1/worktrees/:name/discard': [{ body: () => ({}) }],
  'POST /v1/worktrees/gc': [],
  'POST /v1/listen': [],
  'DELETE /v1/listen': [],
  'GET /v1/events': [{ query: q('agent') }],
};

/** Every file under `dir` with its size (what a request may have left behind). */
/**
 * Every file under `dir` with its size, but the registry's snapshot (the owner writes it a second after
 * the last change, here the `up`'s, which on a loaded machine came during the test; the journal beside
 * it says whether anything was recorded) and the hook spool's passing files.
 */
async function files(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || (e.name === 'sessions.json' && e.parentPath === dir)) continue;
    // The hook spool's files come and go as the agent's hooks run (the supervisor takes each at once).
    if (path.relative(dir, e.parentPath) === 'hook-spool') continue;
    const f = path.join(e.parentPath, e.name);
    out.set(path.relative(dir, f), (await stat(f)).size);
  }
  return out;
}

describe('names every object has, on every route', () => {
  let rig: Rig;
  let sup: InProcess;
  beforeAll(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '200']);
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    sup = await startInProcess(rig);
    const up = await sup.app.inject({ method: 'POST', url: '/v1/up', payload: {} });
    expect(up.statusCode, up.body).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await sup?.stop();
    await rig?.cleanup();
  });

  it('the table covers every route of the API', () => {
    const routes = listRoutes(sup.app).map((r) => `${r.method} ${r.url}`);
    expect(routes.length).toBeGreaterThan(30);
    expect(Object.keys(CASES).sort()).toEqual([...routes].sort());
  });

  it('each is a 400 or a 404 in the one shape; nothing is recorded and no file is left behind', async () => {
    const before = await files(sup.ctx.jaggersDir);
    const tried: string[] = [];
    for (const r of listRoutes(sup.app)) {
      for (const v of CASES[`${r.method} ${r.url}`] ?? []) {
        for (const n of HOSTILE) {
          const url = fillParams(r.url, v.params ?? n) + (v.query?.(n) ?? '');
          const body = v.body?.(n);
          const res = await sup.app.inject({
            method: r.method as 'GET',
            url,
            ...(body !== undefined ? { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
          });
          const what = `${r.method} ${url} ${body === undefined ? '' : JSON.stringify(body)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
          tried.push(what);
          expect([400, 404], what).toContain(res.statusCode);
          expect(errorShapeProblem(res.body), what).toBeNull();
        }
      }
    }
    expect(tried.length).toBeGreaterThan(150);
    // The registry recorded nothing (its journal is as it was) and no prompt or inbox file was written.
    expect(await files(sup.ctx.jaggersDir)).toEqual(before);
  });

  it('the name rule holds where files are read: a profile, a workflow or a flow by such a name is unknown, not a crash', async () => {
    for (const n of HOSTILE) {
      const flow = await sup.app.inject({ method: 'GET', url: `/v1/flows/${n}` });
      expect(flow.statusCode).toBe(400);
      const { loadProfile } = await import('../../src/profiles/load.js');
      await expect(loadProfile(n, sup.ctx.jaggersDir)).rejects.toMatchObject({ code: 'E_PROFILE_UNKNOWN' });
      const { loadWorkflow } = await import('../../src/workflows/load.js');
      await expect(loadWorkflow(sup.ctx.jaggersDir, n)).rejects.toMatchObject({ code: 'E_WORKFLOW_UNKNOWN' });
    }
    await expect((await import('../../src/profiles/load.js')).loadProfile('../../etc/passwd', sup.ctx.jaggersDir)).rejects.toMatchObject({
      code: 'E_PROFILE_UNKNOWN',
    });
  });
});
