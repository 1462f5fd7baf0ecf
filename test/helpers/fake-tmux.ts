// A tmux server in memory behind a real ControlClient: every command line the client writes is recorded,
// parsed back into its arguments and answered (in order, a moment later, as tmux does) from a small
// model of windows, panes and their options. Enough for the launcher: new-window, set-option,
// resize-window, list-panes, respawn-pane, kill-window, display-message.
import { ControlClient } from '../../src/tmux/control-client.js';
import type { Transport } from '../../src/tmux/transport.js';

export interface FakeWindow {
  windowId: string;
  index: number;
  name: string;
  paneId: string;
  pid: number;
  dead: boolean;
  options: Record<string, string>;
  /** The command it runs now (new-window's, then respawn-pane's). */
  command: string[];
  cwd: string;
}

/** The words of a command line as src/tmux/quote.ts writes them: single quotes, `'\''` for a quote. */
export function parseLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let any = false;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === "'") quoted = false;
      else cur += c;
    } else if (c === "'") {
      quoted = true;
      any = true;
    } else if (c === '\\') {
      cur += line[++i] ?? '';
      any = true;
    } else if (c === ' ') {
      if (any || cur) out.push(cur);
      cur = '';
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || cur) out.push(cur);
  return out;
}

const flagValue = (args: string[], flag: string) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};

export class FakeTmux {
  readonly client: ControlClient;
  /** Every command, as its arguments, in the order written. */
  readonly commands: string[][] = [];
  readonly windows: FakeWindow[] = [];
  readonly globals: Record<string, string> = {};
  /** Called with each command before it is answered: a test can act in between (a job cancelled meanwhile). */
  onCommand: ((args: string[]) => void) | null = null;
  private next = 1;
  private feed: (chunk: Buffer) => void = () => {};
  private replies = 0;

  constructor(readonly session = 'jaggers-test') {
    const transport: Transport = {
      write: (text) => {
        const args = parseLine(text.replace(/\n$/, ''));
        this.commands.push(args);
        setImmediate(() => this.answer(args));
      },
      onData: (cb) => void (this.feed = cb),
      onClose: () => {},
      close: async () => {},
      pid: 1,
    };
    this.client = new ControlClient(transport);
  }

  /** A window already there (window 0, a pane of an earlier `up`). */
  addWindow(w: Partial<FakeWindow> & { name: string }): FakeWindow {
    const n = this.next++;
    const win: FakeWindow = { windowId: `@${n}`, index: n, paneId: `%${n}`, pid: 5000 + n, dead: false, options: {}, command: [], cwd: '/', ...w };
    this.windows.push(win);
    return win;
  }

  /** The commands named `name` (`new-window`, `respawn-pane`...). */
  named(name: string): string[][] {
    return this.commands.filter((c) => c[0] === name);
  }

  private window(target: string | undefined): FakeWindow | undefined {
    return this.windows.find((w) => w.windowId === target || w.paneId === target);
  }

  private answer(args: string[]): void {
    this.onCommand?.(args);
    let lines: string[] = [];
    let ok = true;
    switch (args[0]) {
      case 'new-window': {
        const dash = args.indexOf('--');
        const w = this.addWindow({ name: flagValue(args, '-n') ?? '', cwd: flagValue(args, '-c') ?? '/', command: args.slice(dash + 1) });
        lines = [`${w.windowId} ${w.paneId} ${w.pid}`];
        break;
      }
      case 'set-option': {
        if (args.includes('-g')) this.globals[args.at(-2)!] = args.at(-1)!;
        else {
          const w = this.window(flagValue(args, '-t'));
          if (!w) ok = false;
          else if (args.includes('-u')) delete w.options[args.at(-1)!];
          else w.options[args.at(-2)!] = args.at(-1)!;
        }
        break;
      }
      case 'respawn-pane': {
        const w = this.window(flagValue(args, '-t'));
        if (!w) ok = false;
        else Object.assign(w, { dead: false, pid: w.pid + 100, command: args.slice(args.indexOf('--') + 1), cwd: flagValue(args, '-c') ?? w.cwd });
        break;
      }
      case 'kill-window': {
        const i = this.windows.findIndex((w) => w.windowId === flagValue(args, '-t'));
        if (i < 0) ok = false;
        else this.windows.splice(i, 1);
        if (!ok) lines = [`can't find window: ${flagValue(args, '-t')}`];
        break;
      }
      case 'list-panes':
        lines = this.windows.map((w) =>
          [
            w.windowId,
            w.index,
            w.name,
            w.paneId,
            w.pid,
            w.dead ? 1 : 0,
            w.dead ? 1 : '',
            0,
            200,
            50,
            w.options['@jaggers_terminal_id'] ?? '',
            w.options['@jaggers_agent'] ?? '',
            w.options['@jaggers_profile'] ?? '',
            '',
            '',
            w.options['@jaggers_task'] ?? '',
          ].join('\u001f'),
        );
        break;
      case 'display-message': {
        const w = this.window(flagValue(args, '-t'));
        lines = w && args.at(-1) === '#{pane_pid}' ? [String(w.pid)] : [];
        break;
      }
      default:
        break;
    }
    this.replies++;
    const body = lines.map((l) => `${l}\n`).join('');
    this.feed(Buffer.from(`%begin 1 ${this.replies} 1\n${body}%${ok ? 'end' : 'error'} 1 ${this.replies} 1\n`));
  }
}
