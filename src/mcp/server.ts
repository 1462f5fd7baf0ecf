// `jaggers mcp`: the MCP server over stdio that lets an agent drive jaggers. The SDK's low-level server
// carries the protocol; the tools (./tools.ts) are requests to the supervisor's API, which is started
// when it does not answer. Arguments are checked here, so a bad one is a tool error with the API's code.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { withApi } from '../api/connect.js';
import type { Context } from '../context.js';
import { isJaggersError } from '../errors.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';
import { parseArgs, TOOLS, type Caller, type ToolDeps } from './tools.js';

const INSTRUCTIONS =
  'jaggers runs several coding agents side by side, each in its own pinned conversation. Use these tools to hand a turn to another agent ' +
  '(handoff, blocking), to give it background work (assign; the result comes back to your inbox), to message it (send_message), to read ' +
  'your inbox and results, and to run multi-agent workflows. Never resume another agent\'s conversation yourself (no "-r latest").';

export function callerOf(env: NodeJS.ProcessEnv): Caller {
  return { terminalId: env.JAGGERS_TERMINAL_ID || null, agent: env.JAGGERS_AGENT || null, task: env.JAGGERS_TASK_ID || null };
}

export function toolDeps(ctx: Context): ToolDeps {
  return {
    call: (method, p, body, o) => withApi(ctx, (api) => api.call(method, p, body, { signal: o.signal }), { readOnly: o.retry }),
    caller: callerOf(ctx.env),
    projectRoot: ctx.projectRoot,
    jaggersDir: ctx.jaggersDir,
  };
}

/** The tools as MCP lists them: names, descriptions and JSON schemas of their inputs. */
export function toolList() {
  return TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as { type: 'object'; [k: string]: unknown },
  }));
}

/** One tool call: its result as JSON text, or a tool error `{"error":{"code","message"}}` as the API sends it. */
export async function callTool(deps: ToolDeps, name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
  const tool = TOOLS.find((t) => t.name === name);
  try {
    if (!tool)
      throw Object.assign(new Error(`unknown tool ${JSON.stringify(name)}: the tools are ${TOOLS.map((t) => t.name).join(', ')}`), { code: 'E_USAGE' });
    const result = await tool.run(deps, parseArgs(tool, args) as never, signal);
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }] };
  } catch (e) {
    const code = isJaggersError(e) ? e.code : ((e as { code?: string }).code ?? 'E_INTERNAL');
    const message = e instanceof Error ? e.message : String(e);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message } }) }] };
  }
}

const version = () => (JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

export function mcpServer(deps: ToolDeps): Server {
  const server = new Server({ name: 'jaggers', version: version() }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => callTool(deps, req.params.name, req.params.arguments, extra.signal));
  return server;
}

/**
 * Serve on stdin/stdout until the client closes stdin. Calls still under way are aborted then, not waited
 * for: nobody is left to answer (the caller ends the process, even if one of them is stuck).
 */
export async function serveMcp(ctx: Context): Promise<void> {
  const server = mcpServer(toolDeps(ctx));
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  const gone = () => void server.close();
  process.stdin.once('end', gone).once('close', gone);
  await server.connect(new StdioServerTransport());
  await closed;
}
