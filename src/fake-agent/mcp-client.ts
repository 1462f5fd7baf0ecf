// The fake agent as an MCP client, for tests of `jaggers mcp` as a real agent uses it: a line
// `mcp: <tool> {json}` in a prompt (or in the file it names) calls that tool on the server in the
// `--mcp-config` file (claude's shape), and the turn replies with the tool's result. The SDK is loaded
// on the first call only, so a fake agent that never calls a tool starts as fast as before.
import fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface ToolCall {
  tool: string;
  args: Record<string, unknown>;
}

const LINE = /^[ \t]*mcp:[ \t]*([A-Za-z_][\w-]*)[ \t]*(\{.*\})?[ \t]*$/m;

/** The first `mcp: <tool> {json}` line of a text; a line whose JSON does not parse is an error. */
export function toolCallIn(text: string): ToolCall | { error: string } | undefined {
  const m = LINE.exec(text);
  if (!m) return undefined;
  if (!m[2]) return { tool: m[1]!, args: {} };
  try {
    const args = JSON.parse(m[2]) as unknown;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return { error: `mcp: ${m[1]}: the arguments must be a JSON object` };
    return { tool: m[1]!, args: args as Record<string, unknown> };
  } catch (e) {
    return { error: `mcp: ${m[1]}: the arguments are not JSON: ${(e as Error).message}` };
  }
}

interface ServerEntry {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** One connection to the config's first server (`jaggers` if it has one), opened on first use. */
export class McpTools {
  private client: Promise<Client> | undefined;

  constructor(private readonly configFile: string) {}

  private async connect(): Promise<Client> {
    const data = JSON.parse(fs.readFileSync(this.configFile, 'utf8')) as { mcpServers?: Record<string, ServerEntry> };
    const servers = data.mcpServers ?? {};
    const name = 'jaggers' in servers ? 'jaggers' : Object.keys(servers)[0];
    const entry = name === undefined ? undefined : servers[name];
    if (!entry?.command) throw new Error(`--mcp-config ${this.configFile}: no server with a command in mcpServers`);
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'fake-agent', version: '1.0.0' });
    const env = { ...(process.env as Record<string, string>), ...entry.env };
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env, cwd: entry.cwd, stderr: 'ignore' }));
    return client;
  }

  /** The tool's text result; a tool error comes back as its text too, marked `error:`. */
  async call(tool: string, args: Record<string, unknown>): Promise<string[]> {
    this.client ??= this.connect();
    const client = await this.client.catch((e: unknown) => {
      this.client = undefined;
      throw e;
    });
    const r = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 3_600_000 })) as {
      isError?: boolean;
      content?: { type: string; text?: string }[];
    };
    const text = (r.content ?? []).map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
    return [r.isError ? `mcp ${tool} error:` : `mcp ${tool} result:`, ...text.split('\n')];
  }
}
