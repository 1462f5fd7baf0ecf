// `jaggers exec <cli> <args...>`: turn "resume the newest session" arguments, which are global and pick up
// whichever conversation ran last, into "resume the session pinned for this task and agent". Pure.
import { JaggersError } from '../errors.js';

export interface ExecRewrite {
  args: string[];
  rewritten: boolean;
}

/** Who the pinned session belongs to, for the error message. */
export interface RewriteContext {
  agent?: string;
  task?: string | null;
}

type FlagCli = 'claude' | 'qwen' | 'gemini';

const RESUME_FORM: Record<FlagCli, (id: string) => string[]> = {
  claude: (id) => ['--resume', id],
  qwen: (id) => ['-r', id],
  gemini: (id) => ['-r', id],
};

/** `-c` / `--continue` resume the project's last session in these. */
const CONTINUE_FLAGS: Record<FlagCli, readonly string[]> = {
  claude: ['-c', '--continue'],
  qwen: ['-c', '--continue'],
  gemini: [],
};

/** codex options that take a value, so the value is not mistaken for a subcommand or session id. */
const CODEX_VALUE_OPTIONS = new Set([
  '-c',
  '--config',
  '-i',
  '--image',
  '-m',
  '--model',
  '-p',
  '--profile',
  '-s',
  '--sandbox',
  '-a',
  '--ask-for-approval',
  '-C',
  '--cd',
  '--add-dir',
  '--local-provider',
  '--enable',
  '--disable',
  '-o',
  '--output-last-message',
  '--output-schema',
  '--color',
]);

function cliName(cli: string): string {
  return (cli.split('/').pop() ?? cli).toLowerCase();
}

function notPinned(cli: string, arg: string, context: RewriteContext): JaggersError {
  const who = context.agent ? `agent "${context.agent}" in ${context.task ? `task "${context.task}"` : 'the default team'}` : 'this task and agent';
  return new JaggersError(
    'E_NOT_PINNED',
    `jaggers exec ${cli}: \`${arg}\` would resume whichever ${cli} session ran last, and no session is pinned for ${who}; ` +
      'start the agent through jaggers first so its session is pinned, or pass an explicit session id',
  );
}

/** Resume arguments of claude/qwen/gemini: `-r`, `-r latest`, `--resume[=latest]`, and `-c`/`--continue` where they exist. */
function rewriteFlags(cli: FlagCli, args: readonly string[], pinned: string | null, context: RewriteContext): ExecRewrite {
  const out: string[] = [];
  let rewritten = false;
  const replace = (arg: string): void => {
    if (pinned === null) throw notPinned(cli, arg, context);
    if (!rewritten) out.push(...RESUME_FORM[cli](pinned));
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
    } else if (CONTINUE_FLAGS[cli].includes(a)) {
      replace(a);
    } else {
      out.push(a);
    }
  }
  return { args: out, rewritten };
}

/** Index of the next positional argument at or after `from`, skipping options and their values. */
function nextPositional(args: readonly string[], from: number): number {
  for (let i = from; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return i + 1 < args.length ? i + 1 : -1;
    if (!a.startsWith('-') || a === '-') return i;
    if (CODEX_VALUE_OPTIONS.has(a)) i += 1;
  }
  return -1;
}

/** codex `resume --last` / `resume` (picker) and `exec resume --last` -> `resume <id>`. */
function rewriteCodex(args: readonly string[], pinned: string | null, context: RewriteContext): ExecRewrite {
  let sub = nextPositional(args, 0);
  if (sub >= 0 && (args[sub] === 'exec' || args[sub] === 'e')) sub = nextPositional(args, sub + 1);
  if (sub < 0 || args[sub] !== 'resume') return { args: [...args], rewritten: false };
  const rest = args.slice(sub + 1);
  const end = rest.indexOf('--');
  const idx = (end < 0 ? rest : rest.slice(0, end)).indexOf('--last');
  // Without --last, a positional after `resume` is an explicit session id: leave it.
  if (idx < 0 && nextPositional(rest, 0) >= 0) return { args: [...args], rewritten: false };
  if (pinned === null) throw notPinned('codex', idx >= 0 ? 'resume --last' : 'resume', context);
  const kept = idx >= 0 ? [...rest.slice(0, idx), ...rest.slice(idx + 1)] : rest;
  return { args: [...args.slice(0, sub + 1), pinned, ...kept], rewritten: true };
}

/**
 * Rewrite the arguments of `jaggers exec <cli> ...` so any "resume the latest" form resumes `pinned`
 * instead. Throws E_NOT_PINNED when a rewrite is needed and nothing is pinned. Other arguments, and an
 * explicit id (`-r <uuid>`, `codex resume <id>`), pass through unchanged. Unknown CLIs are left alone.
 */
export function rewriteResumeArgs(cli: string, args: readonly string[], pinned: string | null, context: RewriteContext = {}): ExecRewrite {
  const name = cliName(cli);
  switch (name) {
    case 'claude':
    case 'qwen':
    case 'gemini':
      return rewriteFlags(name, args, pinned, context);
    case 'codex':
      return rewriteCodex(args, pinned, context);
    case 'jaggers-fake-agent': // takes claude's flags, so tests and the demo exercise the same path
      return rewriteFlags('claude', args, pinned, context);
    default:
      return { args: [...args], rewritten: false };
  }
}
