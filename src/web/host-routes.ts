// The hosts' agents on the local supervisor's API (docs/hosts.md, docs/web.md), for the dashboard and
// MCP: the local supervisor asks each host's supervisor through the socket it forwards, so the page and
// the tools ask one supervisor, which asks the hosts'. Routes:
// - `GET /v1/hosts/terminals`: each host with its connection's state and its agents (or why not shown);
// - `GET /v1/hosts/events`: server-sent events: `host` (a connection's state, once for each host at the
//   start and at each change) and `host-state` (a host agent's state event, its data with `host`), and
//   `host-hello` when a host's stream (re)starts: read `/v1/hosts/terminals` again then;
// - `GET /v1/hosts/:host/terminals/:agent` (and `/inbox`), `POST .../answer`, `POST .../keys`: that
//   host supervisor's route of the same name, through the forwarded socket;
// - `GET /v1/hosts/:host/terminals/:agent/stream`: that host supervisor's live terminal, passed on as it comes.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import http from 'node:http';
import { z } from 'zod';
import { SseParser } from '../api/client.js';
import { JaggersError } from '../errors.js';
import type { HostAgentsView } from '../api/types.js';
import { allHostAgents, type HostSource } from '../hosts/host-agents.js';
import { HOST_NAME } from '../hosts/schema.js';
import { isAgentRef, NAME_RULE, TASK_ID, TASK_ID_RULE } from '../ids.js';
import type { HostView } from '../hosts/remote-host.js';
import { openEventStream } from '../supervisor/event-hub.js';

export interface HostRoutePorts {
  /** The hosts the local supervisor keeps a connection to, as they are now. */
  hosts(): HostSource[];
  /** The hosts `up` started agents on (their records) that it keeps no connection to. */
  unkept?(): { host: string; agents: string[] }[];
}

const HostAgentParams = z.strictObject({
  host: z.string().regex(HOST_NAME, 'must be a host name of jaggers.json'),
  agent: z.string().min(1).max(200).refine(isAgentRef, `must be an agent name, a terminal id or a task's window (agent+task): ${NAME_RULE}`),
});
const TaskQuery = z.strictObject({ task: z.string().regex(TASK_ID, `must be ${TASK_ID_RULE}`).optional() });
/** How long a host stream waits before asking again after its connection dropped while it stays up (no state change told). */
const FOLLOW_AGAIN_MS = 1000;
/** How often an open hosts' stream looks for a host started since it opened. */
const NEW_HOSTS_MS = 5000;

const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify({ at: new Date().toISOString(), data })}\n\n`;

export function registerHostRoutes(app: FastifyInstance, p: HostRoutePorts): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  const find = (host: string, route: string): HostSource => {
    const all = p.hosts();
    const h = all.find((x) => x.name === host);
    if (!h)
      throw new JaggersError(
        'E_HOST_UNKNOWN',
        `${route}: this supervisor keeps no connection to a host ${JSON.stringify(host)}${all.length ? ` (it has ${all.map((x) => x.name).join(', ')})` : ' (none: `jaggers up` starts the agents of jaggers.json on their hosts)'}`,
      );
    return h;
  };
  /** The host's own route, asked through its forwarded socket; nobody answering is E_SSH with the connection's state. */
  const ask = async <T>(h: HostSource, method: string, path: string, body?: unknown): Promise<T> => {
    try {
      return await h.api.call<T>(method, path, body);
    } catch (e) {
      if (e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN')
        throw new JaggersError('E_SSH', `host ${h.name}: its supervisor does not answer (the connection is ${h.view().detail}): ${e.message}`);
      throw e;
    }
  };
  const agentPath = (a: { agent: string }, rest = '', task?: string) =>
    `/v1/terminals/${encodeURIComponent(a.agent)}${rest}${task ? `?task=${encodeURIComponent(task)}` : ''}`;

  r.get('/v1/hosts/terminals', async (): Promise<HostAgentsView[]> => [
    ...(await allHostAgents(p.hosts())),
    ...(p.unkept?.() ?? []).map((u) => ({
      host: u.host,
      ssh: '',
      state: 'closed',
      detail: 'not kept',
      agents: null,
      names: u.agents,
      problem: 'the supervisor keeps no connection to it (`jaggers up` connects again)',
    })),
  ]);

  r.get('/v1/hosts/:host/terminals/:agent', { schema: { params: HostAgentParams, querystring: TaskQuery } }, async (req) => {
    const h = find(req.params.host, 'GET /v1/hosts/:host/terminals/:agent');
    return { ...(await ask<Record<string, unknown>>(h, 'GET', agentPath(req.params, '', req.query.task))), host: h.name };
  });
  r.get('/v1/hosts/:host/terminals/:agent/inbox', { schema: { params: HostAgentParams, querystring: TaskQuery } }, async (req) => {
    const h = find(req.params.host, 'GET /v1/hosts/:host/terminals/:agent/inbox');
    return ask(h, 'GET', agentPath(req.params, '/inbox', req.query.task));
  });
  for (const what of ['answer', 'keys'] as const)
    r.post(`/v1/hosts/:host/terminals/:agent/${what}`, { schema: { params: HostAgentParams, querystring: TaskQuery } }, async (req) => {
      const h = find(req.params.host, `POST /v1/hosts/:host/terminals/:agent/${what}`);
      return ask(h, 'POST', agentPath(req.params, `/${what}`, req.query.task), req.body ?? {});
    });

  r.get('/v1/hosts/:host/terminals/:agent/stream', { schema: { params: HostAgentParams, querystring: TaskQuery } }, async (req, reply) => {
    const h = find(req.params.host, 'GET /v1/hosts/:host/terminals/:agent/stream');
    return passStream(h, agentPath(req.params, '/stream', req.query.task), reply);
  });

  r.get('/v1/hosts/events', { schema: { querystring: z.strictObject({}) } }, (_req, reply) => {
    reply.hijack();
    const res = reply.raw;
    openEventStream(res);
    res.write(": the hosts' agents\n\n");
    const stop = new AbortController();
    const offs: (() => void)[] = [];
    res.on('close', () => {
      stop.abort();
      for (const off of offs.splice(0)) off();
    });
    const followed = new Set<string>();
    const followNew = () => {
      for (const h of p.hosts()) {
        if (followed.has(h.name)) continue;
        followed.add(h.name);
        const said = (v: HostView) => {
          if (!res.writableEnded) res.write(frame('host', { host: v.name, state: v.state, detail: v.detail }));
        };
        said(h.view());
        // Each change of the connection wakes the follower: a connection back up is followed at once.
        let wake: () => void = () => {};
        offs.push(
          h.onState((v) => {
            said(v);
            wake();
          }),
        );
        void follow(h, res, stop.signal, (fn) => (wake = fn));
      }
    };
    followNew();
    // A host `up` starts while the page is open: followed from then on (its `host` event makes the page read the list).
    const t = setInterval(followNew, NEW_HOSTS_MS);
    offs.push(() => clearInterval(t));
  });
}

/**
 * A host's state events, passed on with `host` while the stream is open: asked while its connection is
 * up (`host-hello` once its stream answers: what came before is read with the list); its stream ending
 * (the connection dropped) is followed again at the next change of the connection, or after
 * FOLLOW_AGAIN_MS while it stays up.
 */
async function follow(h: HostSource, res: http.ServerResponse, signal: AbortSignal, onWake: (fn: () => void) => void): Promise<void> {
  while (!signal.aborted && !res.writableEnded) {
    if (h.view().state === 'connected') await followOnce(h, res, signal);
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, FOLLOW_AGAIN_MS);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      onWake(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** One stream of the host's `/v1/events?types=state,hello`, until it ends; never rejects. */
function followOnce(h: HostSource, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
  const say = (type: string, data: unknown) => void (res.writableEnded || res.write(frame(type, data)));
  return new Promise<void>((resolve) => {
    const headers = { accept: 'text/event-stream', ...(h.session ? { 'x-jaggers-session': h.session } : {}) };
    const up = http.request({ socketPath: h.socketPath, path: '/v1/events?types=state,hello', method: 'GET', headers, agent: false, signal }, (r) => {
      if (r.statusCode !== 200) {
        r.resume();
        r.on('end', resolve);
        return;
      }
      say('host-hello', { host: h.name });
      const parser = new SseParser((e) => (e.type === 'hello' ? say('host-hello', { host: h.name }) : say('host-state', { ...e.data, host: h.name })));
      r.setEncoding('utf8');
      r.on('data', (c: string) => parser.feed(c));
      r.on('end', resolve);
      r.on('error', () => resolve());
      r.on('close', () => resolve());
    });
    up.on('error', () => resolve());
    up.end();
  });
}

/** The host supervisor's answer to `path` (a live terminal's events), passed on byte for byte until either side ends. */
function passStream(h: HostSource, path: string, reply: FastifyReply): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const up = http.request(
      {
        socketPath: h.socketPath,
        path,
        method: 'GET',
        headers: { accept: 'text/event-stream', ...(h.session ? { 'x-jaggers-session': h.session } : {}) },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) {
          // An error answer in the one shape: passed on as it is.
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            void reply
              .code(res.statusCode ?? 502)
              .header('content-type', 'application/json; charset=utf-8')
              .send(Buffer.concat(chunks));
            resolve();
          });
          return;
        }
        reply.hijack();
        const out = reply.raw;
        openEventStream(out);
        res.pipe(out);
        out.on('close', () => res.destroy());
        res.on('close', () => out.end());
        resolve();
      },
    );
    up.on('error', (e) =>
      reject(new JaggersError('E_SSH', `host ${h.name}: its supervisor does not answer (the connection is ${h.view().detail}): ${(e as Error).message}`)),
    );
    reply.raw.on('close', () => up.destroy());
    up.end();
  });
}
