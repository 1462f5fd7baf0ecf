// The local API over HTTP/1.1 (fastify, bodies validated with zod): JSON under /v1, errors as
// {"error":{"code","message"}} with the HTTP status of their code, and a server-sent-events stream.
import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { StreamEvent } from '../api/types.js';
import { describeValue, ERROR_STATUS, isErrorCode, JaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import type { Supervisor } from './compose.js';
import { isLoopback, parseListen, type ListenAddress } from './tcp.js';
import { sseFrame, type EventHub, openEventStream } from './event-hub.js';
import { clientErrorHandler, errorBody as body, frameworkErrors, installJsonParser, methodTable, routeOf } from './http-edge.js';
import {
  AgentParams,
  BODY_LIMIT,
  IdParams,
  JSON_LIMITS,
  NameParams,
  SMALL_BODY_LIMIT,
  EventsQuery,
  HandoffBody,
  InputBody,
  AnswerBody,
  JobBody,
  JobWaitQuery,
  ListenBody,
  WebBody,
  MessageBody,
  OutboxStateBody,
  ScreenQuery,
  TaskBody,
  TaskQuery,
  UpBody,
  FollowQuery,
  WaitQuery,
  DiffQuery,
  MergeBody,
  ForceBody,
  UsageQuery,
  BudgetRaiseBody,
} from './schemas.js';
import { pins } from '../api/pins.js';
import { boundedLines, issueMessage } from '../validate.js';
import { readIfFile } from '../web/assets.js';
import type { WebAppParts, WebOpened } from '../web/listener.js';
import { registerHostRoutes } from '../web/host-routes.js';
import { registerTerminalRoutes } from '../web/terminal-routes.js';
import { registerWebRoutes } from '../web/web-routes.js';
import { loopBatched } from '../loop-batched.js';

export interface AppOptions {
  supervisor: Supervisor;
  hub: EventHub;
  log: Log;
  session: string;
  /** Required as `Authorization: Bearer <token>` (the TCP listener); none on the unix socket. */
  token?: string | null;
  /** The unix socket's app only: add or remove the TCP listener (`jaggers serve`). */
  control?: { listen(a: ListenAddress, allowRemote: boolean, source: string): Promise<string>; unlisten(): Promise<void> };
  /** The dashboard's listener (src/web/): its gate before every route, and the page's routes. */
  web?: WebAppParts & { root: string };
  /** The unix socket's app only: start or reuse the dashboard's listener (`jaggers web`), or stop it. */
  webControl?: { open(o: { listen?: string; allowRemote?: boolean }, source: string): Promise<WebOpened>; stop(): Promise<void> };
  /** True once the supervisor decided to stop (before its listeners close): every request is refused from then on. */
  stopping?: () => boolean;
}

function valueAt(data: unknown, pointer: string): unknown {
  let v = data;
  for (const k of pointer.split('/').filter(Boolean)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The routes that make work (write a file, journal an item): refused while the disk fails. */
const NEW_WORK = new Set([
  'POST /v1/terminals/:agent/input',
  'POST /v1/handoffs',
  'POST /v1/up',
  'POST /v1/jobs',
  'POST /v1/messages',
  'POST /v1/tasks',
  'POST /v1/tasks/:id/resume',
  'POST /v1/flows/:name/run',
]);

export function buildApp(o: AppOptions): FastifyInstance {
  // A stopping supervisor closes every connection (event streams, long polls) rather than wait for them.
  const app = Fastify({
    logger: false,
    // Small bodies, but for the routes that carry a text (their own `bodyLimit` below).
    bodyLimit: SMALL_BODY_LIMIT,
    requestTimeout: 0,
    keepAliveTimeout: 60_000,
    // A closing supervisor answers 503 in the one shape (the onRequest hook), not in fastify's.
    return503OnClosing: false,
    forceCloseConnections: true,
    // Every name in a path is at most 128 characters (the name rule); longer is a 414 in the one shape.
    routerOptions: { maxParamLength: 256 },
    frameworkErrors,
    clientErrorHandler,
    // zod's compilers from the start (their factories are typed for ajv): fastify then never builds its
    // default ajv and fast-json-stringify ones, most of the supervisor's start after loading its modules.
    schemaController: { compilersFactory: { buildValidator: (() => validatorCompiler) as never, buildSerializer: (() => serializerCompiler) as never } },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installJsonParser(app, JSON_LIMITS);
  const allowedMethods = methodTable(app);
  let closing = false;
  app.addHook('preClose', async () => void (closing = true));

  app.addHook('onRequest', async (req, reply) => {
    // Refused before any of it is done (E_SUPERVISOR_STOPPING): the client sends it again to the next supervisor.
    // No `connection: close`: closing with the request's body unread resets the connection (the client
    // would see ECONNRESET, not this answer); the stopping server closes it soon anyway.
    if (closing || o.stopping?.()) return reply.code(503).send(body('E_SUPERVISOR_STOPPING', 'the supervisor is stopping: nothing of this request was done'));
    if (o.web) {
      const refused = o.web.gate(req);
      if (refused) {
        if (refused.status === 401) reply.header('www-authenticate', 'Bearer');
        return reply.code(refused.status).send(body(refused.code, refused.message));
      }
    }
    if (o.token) {
      const auth = req.headers.authorization ?? '';
      const given = /^Bearer (.+)$/.exec(auth)?.[1];
      if (!given || !sameSecret(given, o.token)) {
        reply.header('www-authenticate', 'Bearer');
        return reply
          .code(401)
          .send(body('E_UNAUTHORIZED', given ? 'wrong bearer token' : 'missing bearer token: send Authorization: Bearer <the token in .jaggers/token>'));
      }
    }
    const session = req.headers['x-jaggers-session'];
    if (typeof session === 'string' && session !== o.session) {
      return reply.code(409).send(body('E_SESSION_MISMATCH', `this supervisor serves session ${JSON.stringify(o.session)}, not ${JSON.stringify(session)}`));
    }
  });

  // While the disk fails, a request that would make work first tries a write (E_DISK_FULL while it fails);
  // the health tries too, so `status` says how things are now. Nothing polls at idle.
  app.addHook('preHandler', async (req) => {
    const route = `${req.method} ${req.routeOptions.url}`;
    if (route === 'GET /v1/health') await o.supervisor.disk.check().catch(() => {});
    else if (NEW_WORK.has(route)) await o.supervisor.disk.check();
  });

  app.setNotFoundHandler((req, reply) => {
    const allowed = allowedMethods(req.method, req.url);
    if (allowed.length)
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(body('E_USAGE', `${routeOf(req)}: method not allowed; this path takes ${allowed.join(', ')}`));
    return reply.code(404).send(body('E_NOT_FOUND', `no route ${routeOf(req)}`));
  });

  app.setErrorHandler((err, req: FastifyRequest, reply) => {
    try {
      if (hasZodFastifySchemaValidationErrors(err)) {
        const where = err.validationContext ?? 'body';
        const data = where === 'body' ? req.body : where === 'querystring' ? req.query : req.params;
        // At most a few problems, each naming at most a few unknown keys: the answer stays small however big the body.
        const lines = boundedLines(
          err.validation.map((v) => {
            const field = v.instancePath.split('/').filter(Boolean).join('.') || '(top level)';
            const message = issueMessage({ code: v.keyword, message: v.message ?? '', keys: (v.params as { keys?: unknown }).keys });
            const got = v.keyword === 'unrecognized_keys' ? '' : `, got ${describeValue(valueAt(data, v.instancePath))}`;
            return `field \`${field}\`: ${message}${got}`;
          }),
        );
        return reply.code(400).send(body('E_USAGE', `${routeOf(req)} ${where}: ${lines.join('; ')}`));
      }
      if (err instanceof JaggersError) return reply.code(ERROR_STATUS[err.code]).send(body(err.code, err.message));
      const fe = err as { code?: string; statusCode?: number; message: string };
      if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return reply.code(413).send(body('E_PAYLOAD_TOO_LARGE', `${routeOf(req)}: request body over ${req.routeOptions.bodyLimit ?? BODY_LIMIT} bytes`));
      if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500)
        return reply.code(fe.statusCode).send(body('E_USAGE', `${routeOf(req)}: ${fe.message}`));
      o.log.error({ err: fe.message, url: req.url }, 'internal error in an API route');
      return reply.code(500).send(body(isErrorCode(fe.code) ? fe.code : 'E_INTERNAL', `internal error: ${fe.message}`));
    } catch (e) {
      // Describing the error failed: still an answer in the one shape.
      o.log.error({ err: (e as Error).message, url: req.url }, 'internal error while describing an API error');
      return reply.code(500).send(body('E_INTERNAL', `internal error: ${(e as Error).message}`));
    }
  });

  const s = o.supervisor;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get('/v1/health', async () => s.health());
  // `down` first (docs/hosts.md, Faults): the hosts' supervisors it stops next are not started again.
  r.post('/v1/hosts/release', async () => ({ released: await s.hosts.release() }));
  r.get('/v1/terminals', { schema: { querystring: TaskQuery } }, async (req) => s.views.terminals(req.query.task));
  r.get('/v1/terminals/:agent', { schema: { params: AgentParams, querystring: TaskQuery } }, async (req) =>
    s.views.terminal((req.params as { agent: string }).agent, req.query.task),
  );
  r.get('/v1/terminals/:agent/screen', { schema: { params: AgentParams, querystring: ScreenQuery } }, async (req) =>
    s.views.screen((req.params as { agent: string }).agent, {
      ansi: req.query.ansi === '1' || req.query.ansi === 'true',
      history: req.query.history ?? 0,
      task: req.query.task,
    }),
  );
  r.get('/v1/terminals/:agent/wait', { schema: { params: AgentParams, querystring: WaitQuery } }, async (req) =>
    s.views.waitFor((req.params as { agent: string }).agent, req.query.state, req.query.timeout * 1000, req.query.task),
  );
  r.post('/v1/terminals/:agent/input', { bodyLimit: BODY_LIMIT, schema: { params: AgentParams, body: InputBody } }, async (req) =>
    s.handoffs.input((req.params as { agent: string }).agent, req.body.text, req.body.task, req.body.id),
  );
  r.post('/v1/terminals/:agent/answer', { schema: { params: AgentParams, body: AnswerBody } }, async (req) =>
    s.answers.answer((req.params as { agent: string }).agent, { choice: req.body.choice, expect: req.body.expect, task: req.body.task }),
  );
  r.post('/v1/handoffs', { bodyLimit: BODY_LIMIT, schema: { body: HandoffBody } }, async (req) => s.handoffs.handoff(req.body));
  r.get('/v1/handoffs/:id', { schema: { params: IdParams, querystring: FollowQuery } }, async (req) =>
    s.handoffs.follow((req.params as { id: string }).id, req.query.until),
  );
  r.post('/v1/up', { schema: { body: UpBody } }, async (req) => {
    const { remote, ...o } = await s.launcher.up(req.body);
    // The launch's command and environment stay in the supervisor: the caller needs the pinned session.
    const windows = o.windows.map(({ pid: _pid, ...w }) => ({ ...w, launch: w.launch ? { sessionId: w.launch.sessionId, pin: w.launch.pin } : null }));
    return { ...o, windows: [...windows, ...remote] };
  });
  r.get('/v1/sessions', { schema: { querystring: TaskQuery } }, async (req) => pins(s.store.data, req.query.task));

  const jobId = (req: FastifyRequest) => (req.params as { id: string }).id;
  r.post('/v1/jobs', { bodyLimit: BODY_LIMIT, schema: { body: JobBody } }, async (req, reply) => reply.code(201).send(await s.jobs.create(req.body)));
  r.get('/v1/jobs', async () => s.jobs.list());
  r.get('/v1/usage', { schema: { querystring: UsageQuery } }, async (req) => s.usage(req.query.by));
  r.get('/v1/budgets', async () => s.budgets.list());
  r.post('/v1/budgets/raise', { schema: { body: BudgetRaiseBody } }, async (req) => s.budgets.raise(req.body));
  r.get('/v1/jobs/:id', { schema: { params: IdParams } }, async (req) => s.jobs.get(jobId(req)));
  r.get('/v1/jobs/:id/wait', { schema: { params: IdParams, querystring: JobWaitQuery } }, async (req) => s.jobs.wait(jobId(req), req.query.timeout * 1000));
  r.get('/v1/jobs/:id/result', { schema: { params: IdParams } }, async (req) => s.jobs.result(jobId(req)));
  r.post('/v1/jobs/:id/cancel', { schema: { params: IdParams } }, async (req) => s.jobs.cancel(jobId(req)));
  r.post('/v1/messages', { bodyLimit: BODY_LIMIT, schema: { body: MessageBody } }, async (req, reply) => reply.code(201).send(await s.inbox.send(req.body)));
  // A host's supervisor: messages, jobs and handoffs for the team's agents elsewhere, taken home by the supervisor that started it (docs/hosts.md).
  r.get('/v1/outbox', async () => s.outbox.list());
  r.post('/v1/outbox/:id/taken', { schema: { params: IdParams } }, async (req) => s.outbox.taken((req.params as { id: string }).id));
  r.post('/v1/outbox/:id/state', { bodyLimit: BODY_LIMIT, schema: { params: IdParams, body: OutboxStateBody } }, async (req) =>
    s.outbox.report((req.params as { id: string }).id, req.body),
  );
  r.get('/v1/terminals/:agent/inbox', { schema: { params: AgentParams, querystring: TaskQuery } }, async (req) =>
    s.inbox.list((req.params as { agent: string }).agent, req.query.task),
  );

  const taskId = (req: FastifyRequest) => (req.params as { id: string }).id;
  r.post('/v1/tasks', { bodyLimit: BODY_LIMIT, schema: { body: TaskBody } }, async (req, reply) => reply.code(201).send(await s.tasks.create(req.body)));
  r.get('/v1/tasks', async () => s.tasks.list());
  r.get('/v1/tasks/:id', { schema: { params: IdParams } }, async (req) => s.tasks.show(taskId(req)));
  r.get('/v1/tasks/:id/wait', { schema: { params: IdParams, querystring: JobWaitQuery } }, async (req) => s.tasks.wait(taskId(req), req.query.timeout * 1000));
  r.post('/v1/tasks/:id/resume', { schema: { params: IdParams } }, async (req) => s.tasks.resume(taskId(req)));
  r.post('/v1/tasks/:id/cancel', { schema: { params: IdParams } }, async (req) => s.tasks.cancel(taskId(req)));
  r.get('/v1/flows', async () => s.flows.list());
  r.get('/v1/flows/:name', { schema: { params: NameParams } }, async (req) => s.flows.get((req.params as { name: string }).name));
  r.post('/v1/flows/:name/run', { schema: { params: NameParams } }, async (req) => s.flows.runNow((req.params as { name: string }).name));

  // Agents' and jobs' git worktrees (issue 28): `:name` is an agent, a job id or a worktree's name.
  const wtName = (req: FastifyRequest) => (req.params as { name: string }).name;
  const yes = (v: string | undefined) => v === '1' || v === 'true';
  r.get('/v1/worktrees', async () => s.worktrees.list());
  r.get('/v1/worktrees/:name/diff', { schema: { params: NameParams, querystring: DiffQuery } }, async (req) =>
    s.worktrees.diff(wtName(req), { patch: yes(req.query.patch), uncommitted: yes(req.query.uncommitted) }),
  );
  r.post('/v1/worktrees/:name/merge', { schema: { params: NameParams, body: MergeBody } }, async (req) => s.worktrees.merge(wtName(req), req.body ?? {}));
  r.post('/v1/worktrees/:name/discard', { schema: { params: NameParams, body: ForceBody } }, async (req) =>
    s.worktrees.discard(wtName(req), req.body?.force === true),
  );
  r.post('/v1/worktrees/gc', { schema: { body: ForceBody } }, async (req) => s.worktrees.gc(req.body?.force === true));

  const control = o.control;
  if (control) {
    r.post('/v1/listen', { schema: { body: ListenBody } }, async (req) => {
      const source = 'POST /v1/listen body field `listen`';
      const a = parseListen(req.body.listen, source);
      return { listen: await control.listen(a, req.body.allowRemote === true, source), remote: !isLoopback(a.host) };
    });
    r.delete('/v1/listen', async () => {
      await control.unlisten();
      return { listen: null };
    });
  }

  const webControl = o.webControl;
  if (webControl) {
    r.post('/v1/web', { schema: { body: WebBody } }, async (req) => webControl.open(req.body ?? {}, 'POST /v1/web body field `listen`'));
    r.delete('/v1/web', async () => {
      await webControl.stop();
      return { listen: null };
    });
  }

  // The dashboard's terminals (and a workflow turn's files), on every listener.
  registerTerminalRoutes(app, {
    pane: async (agent, task) => {
      const e = await s.table.get(agent, task);
      return { agent: e.pane.agent ?? agent, paneId: e.pane.paneId, dead: e.pane.dead || s.watcher.status(e.pane.paneId) === 'exited' };
    },
    taps: s.taps,
    type: (paneId, bytes) => s.typeKeys(paneId, bytes),
    task: (id) => s.tasks.show(id),
    dirs: s.dirs,
  });
  // The hosts' agents (docs/hosts.md): asked of each host's supervisor through its forwarded socket.
  registerHostRoutes(app, { hosts: () => s.hosts.sources(), unkept: () => s.hosts.unkept() });
  if (o.web) registerWebRoutes(app, { sessions: o.web.sessions, cookie: o.web.cookie, root: o.web.root, read: readIfFile });

  r.get('/v1/events', { schema: { querystring: EventsQuery } }, (req, reply) => {
    const q = req.query;
    const header = req.headers['last-event-id'];
    const last = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : q.since;
    const wanted = (e: StreamEvent) =>
      (!q.types || q.types.includes(e.type) || e.type === 'gap') && (!q.agent || e.type === 'gap' || e.data.agent === q.agent || e.data.terminalId === q.agent);
    reply.hijack();
    const res = reply.raw;
    openEventStream(res);
    // Replay what the client missed, then live events: subscribed first, so nothing falls in between.
    const queued: StreamEvent[] = [];
    let live = false;
    // The live events of one turn of the event loop go out in one write (a message's delivery publishes
    // several at once).
    const write = loopBatched(res);
    const off = o.hub.subscribe((e) => {
      if (!wanted(e)) return;
      if (live) write(sseFrame(e));
      else queued.push(e);
    });
    let sentUpTo = o.hub.lastId;
    if (last !== undefined) {
      const { events, gap } = o.hub.since(last);
      if (gap)
        res.write(
          sseFrame({
            id: gap.to,
            type: 'gap',
            at: new Date().toISOString(),
            data: {
              from: gap.from,
              to: gap.to,
              reason: 'events no longer kept (or sent by an earlier supervisor); read the current state with GET /v1/terminals',
            },
          }),
        );
      for (const e of events.filter(wanted)) res.write(sseFrame(e));
      sentUpTo = events.at(-1)?.id ?? sentUpTo;
    } else {
      res.write(`: jaggers events of session ${o.session}; last id ${o.hub.lastId}\n\n`);
    }
    for (const e of queued) if (e.id > sentUpTo) res.write(sseFrame(e));
    live = true;
    req.raw.on('close', off);
  });

  return app;
}
