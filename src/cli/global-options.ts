// The global options work before the command and after it (`jaggers -v status`, `jaggers status -v`):
// the program needs positional options (so `exec` can pass a CLI's own options through untouched), so
// every command also takes them, hidden from its help, and the command's own value wins.
// Commander's usage errors are one line each, naming the command whose help says more.
import { Help, Option, type Command } from 'commander';
import type { GlobalOptions } from '../context.js';

const GLOBAL_KEYS = ['project', 'socket', 'session', 'verbose', 'debug'] as const;

/** The global options; the program shows them in its help, each command takes them hidden. */
export function globalOptions(): Option[] {
  return [
    new Option('--project <dir>', 'project folder (default: the nearest folder at or above this one with a jaggers.json or a .jaggers/)'),
    new Option('--socket <name|path>', 'tmux socket name (-L) or path (-S); default jaggers-<8 hex of the project path> (env JAGGERS_SOCKET)'),
    new Option('--session <name>', 'tmux session name (default: jaggers.json session, else the project folder name)'),
    new Option('-v, --verbose', "show the supervisor's log lines on stderr while the command runs (also JAGGERS_LOG=debug)"),
    new Option('--debug', 'print stack traces').hideHelp(),
  ];
}

function* descendants(cmd: Command): Generator<Command> {
  for (const c of cmd.commands) {
    yield c;
    yield* descendants(c);
  }
}

/** `jaggers flow add` for the `add` command. */
function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * commander's message (`error: unknown option '--x'\n(Did you mean --json?)`) as one line of ours:
 * `jaggers: unknown option '--x'; did you mean --json? (see `jaggers status --help`)`.
 */
export function usageLine(message: string, cmd: Command): string {
  const [first = '', ...rest] = message
    .trim()
    .replace(/^error: /, '')
    .split('\n');
  const more = rest.map((l) =>
    l
      .trim()
      .replace(/^\((.*)\)$/, '$1')
      .replace(/^Did you mean/, 'did you mean'),
  );
  return `jaggers: ${[first.replace(/\.$/, ''), ...more].filter(Boolean).join('; ')} (see \`${commandPath(cmd)} --help\`)\n`;
}

/** After every command is registered: each takes the global options (hidden) and prints usage errors on one line. */
export function finishCommands(program: Command): void {
  const oneLine = (cmd: Command) => (s: string, write: (s: string) => void) => write(usageLine(s, cmd));
  // A command's line in its parent's help says `[options]` for the options it shows, not the hidden ones.
  const subcommandTerm = (cmd: Command) => {
    const term = new Help().subcommandTerm(cmd);
    return cmd.options.some((o) => !o.hidden) ? term : term.replace(' [options]', '');
  };
  program
    .showHelpAfterError(false)
    .configureOutput({ outputError: oneLine(program) })
    .configureHelp({ subcommandTerm });
  for (const cmd of descendants(program)) {
    for (const o of globalOptions()) cmd.addOption(o.hideHelp());
    cmd
      .showHelpAfterError(false)
      .configureOutput({ outputError: oneLine(cmd) })
      .configureHelp({ subcommandTerm });
  }
}

/** The global options as given, before the command or after it (the one after it wins). */
export function givenGlobals(program: Command, action: Command | null): GlobalOptions {
  const chain: Command[] = [];
  for (let c: Command | null = action; c && c !== program; c = c.parent) chain.unshift(c);
  const out: Record<string, unknown> = {};
  for (const cmd of [program, ...chain]) {
    const opts = cmd.opts<Record<string, unknown>>();
    for (const k of GLOBAL_KEYS) if (opts[k] !== undefined) out[k] = opts[k];
  }
  return out as GlobalOptions;
}
