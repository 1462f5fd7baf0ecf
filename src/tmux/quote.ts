import { JaggersError } from '../errors.js';

// tmux's command parser takes single-quoted text literally (no $VAR, ~, \n or ; handling);
// a single quote itself is closed, escaped and reopened, as in sh.
const SAFE = /^[A-Za-z0-9_@%:./=,+-]+$/;

export function quoteArg(arg: string): string {
  if (arg.includes('\n') || arg.includes('\r')) {
    throw new JaggersError(
      'E_TMUX_COMMAND',
      `a tmux command argument cannot contain a line break (control mode is one line per command): ${JSON.stringify(arg.slice(0, 60))}`,
    );
  }
  // `%3` is a pane; tmux's parser refuses a bare `%3:pause` (seen on 3.3a: "syntax error"), so any other
  // word that starts with % is quoted.
  if (arg !== '' && SAFE.test(arg) && !arg.endsWith(';') && !(arg.startsWith('%') && !/^%\d+$/.test(arg))) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export function formatCommand(args: readonly string[]): string {
  return args.map(quoteArg).join(' ');
}
