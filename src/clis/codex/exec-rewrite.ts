// `jaggers exec codex resume --last` (or the `resume` picker) made `codex resume <pinned id>`. Pure.
import { notPinned } from '../shared/resume-flags.js';
import type { ExecRewrite, RewriteContext } from '../types.js';

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
export function rewriteCodex(args: readonly string[], pinned: string | null, context: RewriteContext): ExecRewrite {
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
