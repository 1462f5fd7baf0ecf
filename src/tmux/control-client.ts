import { JaggersError } from '../errors.js';
import { ControlParser } from './protocol.js';
import { formatCommand } from './quote.js';
import type { Transport } from './transport.js';

/** A tmux reply: errors are values, so callers decide what a failed command means. */
export type TmuxReply = { ok: true; lines: string[] } | { ok: false; error: string; lines: string[] };

type OutputListener = (paneId: string, data: Buffer, ageMs?: number) => void;
type NotificationListener = (name: string, args: string[]) => void;
type ExitListener = (reason: string) => void;

interface Pending {
  command: string;
  resolve: (r: TmuxReply) => void;
  reject: (e: Error) => void;
  /**
   * The block of a command that the entry before it starts (`if-shell -F` with a command for either
   * case): tmux answers it right after that one's. A failed test starts nothing: this entry is then
   * settled at once, with no block.
   */
  inserted?: true;
}

/** How long a command may go unanswered before its caller gets an error instead of a hang. */
export const COMMAND_TIMEOUT_MS = 60_000;

/**
 * One long-lived control-mode connection. Commands are written as lines; tmux answers each with one
 * %begin/%end (or %error) block in the order they were sent, so a FIFO matches replies to commands.
 */
export class ControlClient {
  private readonly parser = new ControlParser();
  private readonly pending: Pending[] = [];
  private readonly outputListeners = new Set<OutputListener>();
  private readonly notificationListeners = new Set<NotificationListener>();
  private readonly exitListeners = new Set<ExitListener>();
  private closed: { reason: string } | null = null;
  private attachedResolve: (() => void) | null = null;
  /** Resolves when tmux has attached this client to its session (its first %session-changed). */
  readonly attached: Promise<void>;
  commandsSent = 0;
  /**
   * Replies received (in the order their commands were sent), counted before any listener hears of the
   * output that follows: an output listener compares it with a command's number (`commandsSent` right
   * after sending it) to know whether that output came before or after the command's reply.
   */
  repliesReceived = 0;

  constructor(
    private readonly transport: Transport,
    private readonly commandTimeoutMs = COMMAND_TIMEOUT_MS,
  ) {
    this.attached = new Promise((resolve) => (this.attachedResolve = resolve));
    transport.onData((chunk) => {
      for (const ev of this.parser.feed(chunk)) {
        switch (ev.type) {
          case 'reply': {
            if (!ev.fromClient) break; // the attach command's own block
            const p = this.pending.shift();
            if (!p) break;
            this.repliesReceived++;
            p.resolve(ev.ok ? { ok: true, lines: ev.lines } : { ok: false, error: ev.lines.join('\n'), lines: ev.lines });
            if (!ev.ok && this.pending[0]?.inserted) {
              this.repliesReceived++;
              this.pending.shift()!.resolve({ ok: false, error: 'not run: the command before it failed', lines: [] });
            }
            break;
          }
          case 'output':
            for (const l of this.outputListeners) l(ev.paneId, ev.data, ev.ageMs);
            break;
          case 'notification':
            if (ev.name === 'session-changed' && this.attachedResolve) {
              this.attachedResolve();
              this.attachedResolve = null;
            }
            for (const l of this.notificationListeners) l(ev.name, ev.args);
            break;
          case 'exit':
            this.finish(ev.reason || 'exited');
            break;
        }
      }
    });
    transport.onClose(({ code, stderr }) => {
      this.finish(stderr ? stderr : `tmux control client exited with code ${code}`);
    });
  }

  get pid(): number | undefined {
    return this.transport.pid;
  }

  get isClosed(): boolean {
    return this.closed !== null;
  }

  /** Run one tmux command given as arguments (quoted here, never by callers). */
  run(args: readonly string[]): Promise<TmuxReply> {
    return this.runLine(formatCommand(args));
  }

  /** Run a command and throw E_TMUX_COMMAND when tmux answers %error. */
  async runOk(args: readonly string[]): Promise<string[]> {
    const r = await this.run(args);
    if (!r.ok) throw new JaggersError('E_TMUX_COMMAND', `tmux ${args[0]} failed: ${r.error}`);
    return r.lines;
  }

  /**
   * `if-shell -F <format> <command> <command>`: tmux tests the format and runs the command it picks right
   * after, before anything else (a pane's state and what is done to it, as one step), answering each
   * in a block of its own. The test's reply, and the picked command's (null when the test failed and
   * nothing ran). Only this way: a plain `run` of such a command would take the picked command's block
   * for the next command's reply, and every reply after would be one off.
   */
  async runIf(format: string, target: string, then: string, otherwise: string): Promise<[TmuxReply, TmuxReply | null]> {
    if (!then || !otherwise) throw new JaggersError('E_USAGE', 'runIf: a command for either case (an empty one starts no command, and no block)');
    const line = formatCommand(['if-shell', '-F', '-t', target, format, then, otherwise]);
    const [test, picked] = await Promise.all([this.runLine(line), this.runLine('(the command if-shell picked)', { inserted: true }, false)]);
    return [test, test.ok ? picked : null];
  }

  private runLine(line: string, mark: Pick<Pending, 'inserted'> = {}, write = true): Promise<TmuxReply> {
    if (this.closed) {
      return Promise.reject(new JaggersError('E_TMUX_EXITED', `tmux connection closed: ${this.closed.reason}`));
    }
    return new Promise((resolve, reject) => {
      // A reply that never comes fails its caller; the entry stays queued, so that a late reply is
      // still matched to it and not to the next command.
      const timer = setTimeout(() => {
        reject(new JaggersError('E_TMUX_TIMEOUT', `tmux did not answer \`${line.slice(0, 120)}\` within ${this.commandTimeoutMs} ms`));
      }, this.commandTimeoutMs);
      const settle =
        <T>(fn: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          fn(v);
        };
      this.pending.push({ command: line, resolve: settle(resolve), reject: settle(reject), ...mark });
      this.commandsSent++;
      if (write) this.transport.write(`${line}\n`);
    });
  }

  onOutput(l: OutputListener): () => void {
    this.outputListeners.add(l);
    return () => this.outputListeners.delete(l);
  }

  onNotification(l: NotificationListener): () => void {
    this.notificationListeners.add(l);
    return () => this.notificationListeners.delete(l);
  }

  onExit(l: ExitListener): () => void {
    if (this.closed) {
      l(this.closed.reason);
      return () => {};
    }
    this.exitListeners.add(l);
    return () => this.exitListeners.delete(l);
  }

  private readonly subs = new Set<string>();

  /** The subscriptions made on this connection: close() removes them first. */
  get subscriptions(): ReadonlySet<string> {
    return this.subs;
  }

  /**
   * A control-mode subscription: tmux reports `%subscription-changed <name> ...` whenever `format`
   * changes for a target (`%*` all panes, `@*` all windows), checked on its own one-second timer.
   * Throws E_TMUX_COMMAND when tmux refuses it.
   */
  async subscribe(name: string, target: string, format: string): Promise<void> {
    await this.runOk(['refresh-client', '-B', `${name}:${target}:${format}`]);
    this.subs.add(name);
  }

  /**
   * Detach from tmux. The connection's subscriptions are removed first, each answered (at most a second
   * for all): tmux 3.3a checks a client's subscriptions once a second and crashes the whole server when
   * that client is leaving and has lost its session already (upstream 881bec958, March 2026;
   * docs/tmux-and-node-facts.md). With none left there is nothing to check.
   */
  async close(): Promise<void> {
    if (!this.closed && this.subs.size > 0) {
      const removed = Promise.all([...this.subs].map((name) => this.run(['refresh-client', '-B', name]).catch(() => null)));
      this.subs.clear();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([removed, new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]).finally(() => clearTimeout(timer));
    }
    await this.transport.close();
    this.finish('closed by jaggers');
  }

  private finish(reason: string): void {
    if (this.closed) return;
    this.closed = { reason };
    const err = new JaggersError('E_TMUX_EXITED', `tmux connection closed: ${reason}`);
    for (const p of this.pending.splice(0)) p.reject(err);
    for (const l of this.exitListeners) l(reason);
  }
}
