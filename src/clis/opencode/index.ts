// opencode: its session found in `opencode session list`, what `opencode run --format json` prints,
// its MCP config format, its hooks (a plugin in a throwaway config folder), folders it may read, and the
// tokens its sessions spent (read from its SQLite database).
import type { CliFolder } from '../types.js';
import { findNewOpencodeSession } from './discover.js';
import { opencodeRunJson } from './headless.js';
import { opencodePermission } from './folders.js';
import { opencodeHooks } from './hooks.js';
import { opencodeConfig } from './mcp.js';
import { opencodeUsage } from './usage.js';

export const opencode = {
  discoverers: {
    'opencode-session-list': (q) =>
      findNewOpencodeSession({
        run: q.run,
        listArgs: q.listArgs ?? ['session', 'list', '--format', 'json'],
        cwd: q.cwd,
        since: q.since,
        exclude: q.exclude,
        tag: q.tag,
      }),
  },
  headlessIds: { 'opencode-json': (stdout) => opencodeRunJson(stdout).sessionId },
  headlessReplies: { 'opencode-json': (stdout) => opencodeRunJson(stdout).text },
  mcpFormats: { 'opencode-config': opencodeConfig },
  hooks: { opencode: opencodeHooks },
  folderAccess: { 'opencode-permission': opencodePermission },
  usage: { opencode: opencodeUsage },
} satisfies CliFolder;
