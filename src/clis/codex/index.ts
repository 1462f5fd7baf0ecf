// Codex CLI: its session found in its rollout files, `codex exec --json`'s session id, its MCP
// overrides, `codex resume --last`, and its native hooks.
import path from 'node:path';
import type { CliFolder } from '../types.js';
import { findNewCodexSession } from './discover.js';
import { rewriteCodex } from './exec-rewrite.js';
import { threadIdFromJson } from './headless.js';
import { codexHooks } from './hooks.js';
import { codexOverrides } from './mcp.js';
import { codexUsage } from './usage.js';

export const codex = {
  discoverers: {
    'codex-rollout': (q) => findNewCodexSession({ codexHome: q.env.CODEX_HOME || path.join(q.home, '.codex'), cwd: q.cwd, since: q.since, exclude: q.exclude }),
  },
  headlessIds: { 'codex-json': threadIdFromJson },
  mcpFormats: { 'codex-overrides': codexOverrides },
  execCommands: { codex: rewriteCodex },
  hooks: { codex: codexHooks },
  usage: { codex: codexUsage },
} satisfies CliFolder;
