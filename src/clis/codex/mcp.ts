// jaggers' MCP server offered to codex on its command line: `-c mcp_servers.jaggers.<field>=<TOML>`,
// nothing written to disk.
import type { McpEntry, McpFormat } from '../types.js';

/** A TOML value for codex's `-c key=value` (JSON's strings and arrays of strings are TOML too). */
function toml(v: unknown): string {
  if (v !== null && typeof v === 'object' && !Array.isArray(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)}=${toml(x)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

export const codexOverrides: McpFormat = {
  args: (entry: McpEntry) => Object.entries(entry).flatMap(([k, v]) => ['-c', `mcp_servers.jaggers.${k}=${toml(v)}`]),
  how: 'command-line overrides (-c mcp_servers.jaggers.*), nothing written to disk',
};
