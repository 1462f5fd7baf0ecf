// Talking to a test project's supervisor: the API client, raw HTTP for malformed requests, the event
// stream collected, the fake agent's own record of what it received, and waiting for a pid to die.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { ApiClient } from '../../src/api/client.js';
import { processRuns, untilGone } from '../../src/proc-state.js';
import { apiSocketPath, currentLogPath } from '../../src/api/paths.js';
import type { StreamEvent } from '../../src/api/types.js';
import type { Rig } from './rig.js';
import { peekRegistry } from '../../src/sessions/load.js';
import type { RegistryData } from '../../src/sessions/registry.js';

export const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/**
 * The registry as its files say now (the snapshot caught up with the journal): the supervisor writes
 * the snapshot only now and then, so a test never reads sessions.json alone.
 */
export function readRegistry(root: string): RegistryData {
  const dir = path.join(root, '.jaggers');
  return peekRegistry({ snapshot: path.join(dir, 'sessions.json'), journal: path.join(dir, 'events.jsonl') });
}

export function api(rig: Rig): ApiClient {
  return new ApiClient({ socketPath: apiSocketPath(path.join(rig.root, '.jaggers')) });
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: () => { error?: { code: string; message: string } } & Record<string, unknown>;
}

/** One request with exactly this body and these headers (the client would always send valid JSON). */
export function raw(
  target: { socketPath: string } | { host: string; port: number },
  method: string,
  urlPath: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined && !h['content-type']) h['content-type'] = 'application/json';
    let answered = false;
    const req = http.request({ ...target, method, path: urlPath, headers: h, agent: false }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: () => JSON.parse(text) });
      });
    });
    // A server may answer (413) and close before a huge body is written: the answer counts, not the EPIPE.
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE' || e.code === 'ECONNRESET') setTimeout(() => answered || reject(e), 2000);
      else reject(e);
    });
    req.end(body);
  });
}

/** Collects the event stream until `stop()`; `waitFor` resolves when an event satisfying `ok` arrived. */
export function collectEvents(client: ApiClient, urlPath: string, lastEventId?: number) {
  const events: StreamEvent[] = [];
  const abort = new AbortController();
  const waiters: { ok: (e: StreamEvent) => boolean; resolve: (e: StreamEvent) => void }[] = [];
  const done = client.events(
    urlPath,
    (e) => {
      events.push(e);
      for (const w of waiters.splice(0)) {
        if (w.ok(e)) w.resolve(e);
        else waiters.push(w);
      }
    },
    { signal: abort.signal, ...(lastEventId !== undefined ? { lastEventId } : {}) },
  );
  return {
    events,
    waitFor(ok: (e: StreamEvent) => boolean, what: string, timeoutMs = 20_000): Promise<StreamEvent> {
      const seen = events.find(ok);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${what} within ${timeoutMs} ms; events: ${JSON.stringify(events.map((e) => [e.type, e.data.state ?? e.data.phase]))}`)),
          timeoutMs,
        );
        waiters.push({ ok, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    async stop() {
      abort.abort();
      await done.catch(() => {});
    },
  };
}

export interface FakeTurn {
  prompt: string;
  sha256: string;
  bytes: number;
  reply: string;
}

/** The fake agent's own record of a session: every prompt it received, hashed. */
export async function fakeTurns(rig: Rig, agent: string): Promise<FakeTurn[]> {
  const reg = readRegistry(rig.root);
  const term = Object.values(reg.terminals).find((t) => t.agent === agent && t.task === null);
  if (!term) throw new Error(`no terminal for ${agent}`);
  const s = JSON.parse(await readFile(path.join(rig.home, '.fake-agent', 'sessions', `${term.sessionId}.json`), 'utf8')) as { turns: FakeTurn[] };
  return s.turns;
}

/** Until `pid` no longer runs (a zombie whose threads have all exited counts as gone: tmux may reap it late). */
export async function waitPidGone(pid: number, timeoutMs = 10_000): Promise<void> {
  if (!(await untilGone(() => processRuns(pid), timeoutMs))) throw new Error(`pid ${pid} still alive after ${timeoutMs} ms`);
}

/**
 * Until `check` gives a value: looked at again on each event of `types` from the supervisor (or after a
 * second without one, so a supervisor restarted meanwhile is read again too).
 */
export async function untilEvent<T>(client: ApiClient, types: string, check: () => Promise<T | null>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise<void>((resolve) => {
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), 1000);
      void client
        .events(`/v1/events?types=${types}`, () => (clearTimeout(timer), stop.abort()), { signal: stop.signal })
        .catch(() => {})
        .finally(resolve);
    });
  }
}

export interface PromptReceived {
  agent: string;
  prompt: string;
}

/** Every prompt the fake agents received, in order (their FAKE_AGENT_PROMPTS file). */
export async function promptsReceived(file: string): Promise<PromptReceived[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as PromptReceived);
}

/**
 * What a test says when the supervisor is not there where it should be: the last lines of its log,
 * whether the tmux session still exists, and what window 0 shows (a supervisor that exited prints why).
 */
export async function supervisorPostmortem(rig: Rig, lines = 25): Promise<string> {
  const log = await readFile(currentLogPath(path.join(rig.root, '.jaggers')), 'utf8').catch((e: Error) => `(no log: ${e.message})`);
  const session = await rig.tmux(['has-session', '-t', `=${rig.session}`]).then(
    () => 'the tmux session is there',
    (e: Error) => `the tmux session is gone: ${e.message.trim()}`,
  );
  const w0 = await rig.tmux(['capture-pane', '-p', '-t', `=${rig.session}:0`]).catch((e: Error) => `(no window 0: ${e.message.trim()})`);
  return `${session}\nwindow 0:\n${w0.trimEnd().split('\n').slice(-10).join('\n')}\nthe supervisor's log, last ${lines} lines:\n${log.trimEnd().split('\n').slice(-lines).join('\n')}`;
}

/** `fn`, its failure told with the supervisor's postmortem (see above). */
export async function explained<T>(rig: Rig, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw new Error(`${what}: ${(e as Error).message}\n${await supervisorPostmortem(rig)}`, { cause: e });
  }
}
