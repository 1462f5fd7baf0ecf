// A stub model server on 127.0.0.1 that the real agent CLIs talk to offline. It speaks the four wire
// formats they use (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses, Gemini), records
// every request, and answers each conversation turn with a reply chosen by the test's script.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync, brotliDecompressSync } from 'node:zlib';
import { compactionReply } from './stub-compact.js';
import { describeRequest, type RecordedRequest } from './stub-requests.js';
import { limitAnswer, sendLimit, type LimitReply } from './stub-limits.js';
import { defaultScript } from './stub-script.js';
import {
  anthropicEvents,
  anthropicMessage,
  chatCompletion,
  chatEvents,
  geminiEvents,
  geminiResponse,
  responsesEvents,
  sseFrame,
  type Reply,
  type SseEvent,
  type ToolCall,
} from './stub-wire.js';

export type { RecordedRequest } from './stub-requests.js';
export type { Reply } from './stub-wire.js';
export type { LimitReply } from './stub-limits.js';

/** A script answers a turn with a reply, or with the service's own limit answer (a LimitReply, test/e2e/stub-limits.ts). */
export type Script = (req: RecordedRequest) => Reply | LimitReply | Promise<Reply | LimitReply>;

export interface StubServerOptions {
  /** Folder the default script resolves relative file paths against (the agent's cwd). */
  cwd?: string;
  script?: Script;
}

export interface StubServer {
  port: number;
  baseUrl: string;
  /** Every request, in arrival order (aux ones too: check `purpose`). */
  requests: RecordedRequest[];
  /** Replace the script answering turn requests; no argument restores the default script. */
  setScript(fn?: Script): void;
  /** Turn requests only (the ones the script answered). */
  turns(): RecordedRequest[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const shellToolNames = ['Bash', 'run_shell_command', 'exec_command', 'bash', 'shell', 'local_shell'];

function toolSchemas(req: RecordedRequest): Map<string, Json> {
  const body = isObject(req.body) ? req.body : {};
  const out = new Map<string, Json>();
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t)) continue;
    if (Array.isArray(t.functionDeclarations)) {
      for (const d of t.functionDeclarations) {
        if (isObject(d) && typeof d.name === 'string') out.set(d.name, (d.parametersJsonSchema ?? d.parameters ?? {}) as Json);
      }
    } else if (isObject(t.function) && typeof t.function.name === 'string') {
      out.set(t.function.name, (t.function.parameters ?? {}) as Json);
    } else if (typeof t.name === 'string') {
      out.set(t.name, (t.input_schema ?? t.parameters ?? {}) as Json);
    }
  }
  return out;
}

/** The shell tool call for this request, with arguments fitted to the schema the CLI declared. */
function shellCall(req: RecordedRequest, reply: Extract<Reply, { kind: 'tool' }>): ToolCall | undefined {
  const schemas = toolSchemas(req);
  const name = shellToolNames.find((n) => schemas.has(n));
  if (name === undefined) return undefined;
  const schema = schemas.get(name) ?? {};
  const props = isObject(schema.properties) ? schema.properties : {};
  const args: Record<string, unknown> = {};
  if ('cmd' in props) args.cmd = reply.command;
  else {
    const p = props.command;
    args.command = isObject(p) && String(p.type).toLowerCase() === 'array' ? ['bash', '-lc', reply.command] : reply.command;
  }
  if ('description' in props) args.description = 'stub tool call';
  // codex asks for approval only when a call asks to leave its sandbox.
  if ('sandbox_permissions' in props && reply.escalate !== false) {
    args.sandbox_permissions = 'require_escalated';
    if ('justification' in props) args.justification = 'the stub model asks for approval';
  }
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const key of required) {
    if (typeof key === 'string' && !(key in args)) args[key] = sampleOf(props[key]);
  }
  return { name, args };
}

/** A value that fits a JSON schema (titles, model routing, helper calls that want JSON back). */
export function sampleOf(schema: unknown): unknown {
  if (!isObject(schema)) return 'stub';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum.includes('user') ? 'user' : schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (isObject(schema.properties) ? 'object' : 'string'))).toLowerCase();
  switch (type) {
    case 'object': {
      const props = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleOf(v)]));
    }
    case 'array':
      return [];
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.max(1, schema.minimum) : 1;
    case 'boolean':
      return false;
    default:
      return 'Stub session';
  }
}

function jsonSchemaOf(req: RecordedRequest): unknown {
  const body = isObject(req.body) ? req.body : {};
  if (req.api === 'anthropic' && isObject(body.output_config) && isObject(body.output_config.format)) {
    return body.output_config.format.json_schema ?? body.output_config.format.schema;
  }
  if (req.api === 'gemini' && isObject(body.generationConfig)) {
    return body.generationConfig.responseJsonSchema ?? body.generationConfig.responseSchema;
  }
  if (req.api === 'openai-responses' && isObject(body.text) && isObject(body.text.format)) {
    return body.text.format.schema;
  }
  if (req.api === 'openai-chat' && isObject(body.response_format) && isObject(body.response_format.json_schema)) {
    return body.response_format.json_schema.schema;
  }
  return undefined;
}

function auxText(req: RecordedRequest): string {
  const schema = jsonSchemaOf(req);
  return schema === undefined ? 'stub' : JSON.stringify(sampleOf(schema));
}

function modelOf(req: RecordedRequest): string {
  const body = isObject(req.body) ? req.body : {};
  if (typeof body.model === 'string') return body.model;
  return /models\/([^/:]+)/.exec(req.path)?.[1] ?? 'stub-model';
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let buf = Buffer.concat(chunks);
  const enc = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (enc === 'gzip') buf = gunzipSync(buf);
  else if (enc === 'deflate') buf = inflateSync(buf);
  else if (enc === 'br') buf = brotliDecompressSync(buf);
  if (buf.length === 0) return undefined;
  const text = buf.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let requestSeq = 0;
/** Anthropic's API names every answer in a `request-id` header; claude writes it into its transcript (`requestId`). */
const anthropicHeaders = (): Record<string, string> => ({ 'request-id': `req_stub${Date.now().toString(36)}${(requestSeq++).toString(36)}` });

async function streamEvents(res: ServerResponse, events: SseEvent[], headers: Record<string, string> = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  for (const e of events) {
    if (e.delayMs) await sleep(e.delayMs);
    if (res.destroyed || res.writableEnded) return; // the CLI hung up (interrupted, or killed)
    res.write(sseFrame(e));
  }
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startStubServer(opts: StubServerOptions = {}): Promise<StubServer> {
  const requests: RecordedRequest[] = [];
  const fallback: Script = (req) => defaultScript(req, opts.cwd);
  let script: Script = opts.script ?? fallback;

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const body = method === 'POST' ? await readBody(req) : undefined;
    const rec = describeRequest(requests.length + 1, method, path, body);
    requests.push(rec);
    // The time of the answer's last byte: hook latencies are measured from it. Taken as the last chunk is
    // handed to the socket (its 'finish' event came after the CLI's hook on a loaded machine: CI).
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...a: unknown[]) => {
      rec.endedAt ??= Date.now();
      return end(...a);
    }) as typeof res.end;
    const model = modelOf(rec);

    if (method !== 'POST') {
      // claude probes `HEAD /` at start; anything else is unknown.
      if (path === '/' || path === '') {
        res.writeHead(200);
        res.end();
      } else sendJson(res, 404, { error: { message: `stub: no route ${method} ${path}` } });
      return;
    }
    if (rec.api === 'anthropic' && path.includes('count_tokens')) return sendJson(res, 200, { input_tokens: 10 });
    if (rec.api === 'gemini' && path.includes(':countTokens')) return sendJson(res, 200, { totalTokens: 10 });
    if (rec.api === 'other') return sendJson(res, 404, { error: { message: `stub: no route POST ${path}` } });

    const answered =
      rec.purpose === 'turn' ? await script(rec) : rec.purpose === 'compact' ? compactionReply(rec) : ({ kind: 'text', text: auxText(rec) } as const);
    if (answered.kind === 'limit') return sendLimit(res, limitAnswer(rec, answered, Date.now(), anthropicHeaders()['request-id']!));
    const reply: Reply = answered;
    // A call of a named tool (jaggers' MCP tools), else the shell tool fitted to the request.
    const tool = reply.kind === 'tool' ? (reply.call ?? shellCall(rec, reply)) : undefined;
    const b = isObject(body) ? body : {};
    switch (rec.api) {
      case 'anthropic':
        if (!rec.stream) return sendJson(res, 200, anthropicMessage(reply.kind === 'text' ? reply.text : '', model));
        return streamEvents(res, anthropicEvents(reply, tool, model), anthropicHeaders());
      case 'openai-chat': {
        if (!rec.stream) return sendJson(res, 200, chatCompletion(reply.kind === 'text' ? reply.text : '', model));
        const withUsage = isObject(b.stream_options) && b.stream_options.include_usage === true;
        return streamEvents(res, chatEvents(reply, tool, model, withUsage));
      }
      case 'openai-responses':
        return streamEvents(res, responsesEvents(reply, tool, model));
      case 'gemini':
        if (!rec.stream) return sendJson(res, 200, geminiResponse(reply.kind === 'text' ? reply.text : '', model));
        return streamEvents(res, geminiEvents(reply, tool, model));
    }
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `stub: ${String(err)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    setScript(fn?: Script) {
      script = fn ?? fallback;
    },
    turns: () => requests.filter((r) => r.purpose === 'turn'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
