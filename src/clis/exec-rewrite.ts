// `jaggers exec <cli> <args...>`: turn "resume the newest session" arguments, which are global and pick up
// whichever conversation ran last, into "resume the session pinned for this task and agent". Pure; each
// CLI's forms are in its folder (`execCommands`).
import { EXEC_COMMANDS } from './kinds.js';
import type { ExecRewrite, RewriteContext } from './types.js';

export type { ExecRewrite, RewriteContext } from './types.js';

function cliName(cli: string): string {
  return (cli.split('/').pop() ?? cli).toLowerCase();
}

/**
 * Rewrite the arguments of `jaggers exec <cli> ...` so any "resume the latest" form resumes `pinned`
 * instead. Throws E_NOT_PINNED when a rewrite is needed and nothing is pinned. Other arguments, and an
 * explicit id (`-r <uuid>`, `codex resume <id>`), pass through unchanged. Unknown CLIs are left alone.
 */
export function rewriteResumeArgs(cli: string, args: readonly string[], pinned: string | null, context: RewriteContext = {}): ExecRewrite {
  const name = cliName(cli);
  const rewrite = Object.hasOwn(EXEC_COMMANDS, name) ? EXEC_COMMANDS[name as keyof typeof EXEC_COMMANDS] : undefined;
  return rewrite ? rewrite(args, pinned, context) : { args: [...args], rewritten: false };
}
