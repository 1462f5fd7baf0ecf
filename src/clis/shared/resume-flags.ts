// The resume flags of a CLI like claude, qwen or gemini (`-r`, `--resume[=latest]`, `-c`): "resume the
// newest session", which is global and picks up whichever conversation ran last, turned into "resume the
// session pinned for this task and agent", for `jaggers exec <cli> <args...>`. Pure.
import { JaggersError } from '../../errors.js';
import type { ExecRewrite, ResumeRewriter, RewriteContext } from '../types.js';

/** How a CLI names a session to resume, and its flags that resume the project's last session. */
export interface ResumeFlags {
  /** The CLI's name, for messages. */
  cli: string;
  resume(id: string): string[];
  /** `-c` / `--continue` resume the project's last session in these. */
  continueFlags: readonly string[];
}

export function notPinned(cli: string, arg: string, context: RewriteContext): JaggersError {
  const who = context.agent ? `agent "${context.agent}" in ${context.task ? `task "${context.task}"` : 'the default team'}` : 'this task and agent';
  return new JaggersError(
    'E_NOT_PINNED',
    `jaggers exec ${cli}: \`${arg}\` would resume whichever ${cli} session ran last, and no session is pinned for ${who}; ` +
      'start the agent through jaggers first so its session is pinned, or pass an explicit session id',
  );
}

/** Resume arguments of claude/qwen/gemini: `-r`, `-r latest`, `--resume[=latest]`, and `-c`/`--continue` where they exist. */
function rewriteFlags(flags: ResumeFlags, args: readonly string[], pinned: string | null, context: RewriteContext): ExecRewrite {
  const { cli } = flags;
  const out: string[] = [];
  let rewritten = false;
  const replace = (arg: string): void => {
    if (pinned === null) throw notPinned(cli, arg, context);
    if (!rewritten) out.push(...flags.resume(pinned));
    rewritten = true;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (a === '-r' || a === '--resume') {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('-')) {
        replace(a);
      } else {
        if (next === 'latest') replace(`${a} latest`);
        else out.push(a, next);
        i += 1;
      }
    } else if (a.startsWith('--resume=')) {
      const value = a.slice('--resume='.length);
      if (value === '' || value === 'latest') replace(a);
      else out.push(a);
    } else if (flags.continueFlags.includes(a)) {
      replace(a);
    } else {
      out.push(a);
    }
  }
  return { args: out, rewritten };
}

/** The rewriter of a CLI that resumes by these flags. */
export function flagRewriter(flags: ResumeFlags): ResumeRewriter {
  return (args, pinned, context) => rewriteFlags(flags, args, pinned, context);
}
