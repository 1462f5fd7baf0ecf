import type { McpFormat } from '../types.js';

/** opencode's own config format: `mcp.<name>` = a local server with its command line as one array. */
export const opencodeConfig: McpFormat = {
  config: (entry, server) => ({
    mcp: { jaggers: { type: 'local', command: [entry.command, ...entry.args], environment: entry.env, enabled: true, ...server } },
  }),
};
