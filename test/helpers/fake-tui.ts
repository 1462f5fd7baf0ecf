// One agent pane without tmux: a scripted TUI that is both the pane's I/O (what tmux would do: capture,
// paste, keys) and its live state (what the watcher would report: status, changes, screens, turns).
// It draws what the test profile (testProfile in work-fakes.ts) reads: `> ` is the input box, a
// spinner line is busy, `Worked for` ends a turn. Submitted text is echoed above the box as `❯ text`.
import type { PaneIO } from '../../src/delivery/ports.js';
import { classify } from '../../src/detect/classify.js';
import type { Profile } from '../../src/profiles/schema.js';
import type { TurnWatch } from '../../src/turns/ports.js';

const SPINNER = '⠋ Working (esc to cancel)';

export class FakeTui implements PaneIO, TurnWatch {
  /** Everything above the input box, oldest first. */
  readonly lines: string[] = [];
  input = '';
  current: string;
  closedTurns = 0;
  readonly pasted: string[] = [];
  readonly keys: string[][] = [];
  readonly confirmed: string[] = [];
  inputsSent = 0;
  /** What the agent answers to a submitted prompt (then it goes done on the next turn of the event loop); null: it stays busy until `finish`. */
  autoReply: ((prompt: string) => string) | null = null;
  /** A usage limit's line to end a submitted prompt's turn with instead of a reply (see `hitLimit`); null: none. */
  limitOn: ((prompt: string) => string | null) | null = null;
  /** Submitted prompts, in order. */
  readonly prompts: string[] = [];
  private readonly changes = new Set<(c: { pane: { paneId: string }; status: string; rule?: string | null }) => void>();
  private readonly screens = new Set<(paneId: string, screen: string) => void>();

  constructor(
    readonly paneId: string,
    private readonly profile: Profile,
    status = 'idle',
  ) {
    this.current = status;
  }

  screen(): string {
    return [...this.lines, ...(this.current === 'busy' ? [SPINNER] : []), `> ${this.input}`].join('\n');
  }

  // PaneIO

  async capture(paneId: string): Promise<string> {
    this.check(paneId);
    return this.screen();
  }

  async leaveMode(paneId: string): Promise<void> {
    this.check(paneId);
  }

  async paste(paneId: string, text: string): Promise<void> {
    this.check(paneId);
    this.pasted.push(text);
    this.input += text;
    this.drawn();
  }

  async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
    this.check(paneId);
    this.keys.push([...keys]);
    for (const k of keys) {
      if (k === 'C-c') {
        this.input = '';
        this.drawn();
      } else if (k === 'Enter' && this.input !== '') {
        const prompt = this.input;
        this.prompts.push(prompt);
        this.lines.push(`❯ ${prompt}`);
        this.input = '';
        this.set('busy');
        const limit = this.limitOn?.(prompt) ?? null;
        if (limit !== null) setImmediate(() => this.hitLimit(limit));
        else if (this.autoReply) {
          const text = this.autoReply(prompt);
          setImmediate(() => this.finish(text));
        }
      }
    }
  }

  // TurnWatch

  status(paneId: string): string | undefined {
    return paneId === this.paneId ? this.current : undefined;
  }

  onChange(l: (c: { pane: { paneId: string }; status: string; rule?: string | null }) => void): () => void {
    this.changes.add(l);
    return () => this.changes.delete(l);
  }

  onScreen(l: (paneId: string, screen: string) => void): () => void {
    this.screens.add(l);
    return () => this.screens.delete(l);
  }

  lastScreen(): string | null {
    return this.screen();
  }

  inputSent(): void {
    this.inputsSent++;
  }

  turns(): number {
    return this.closedTurns;
  }

  confirmTurn(_paneId: string, by: string): void {
    this.confirmed.push(by);
  }

  /** What the turn engine said was a usage limit's message (the watcher makes the machine `limited`). */
  readonly limitsSeen: { lines: string[]; by: string }[] = [];

  limitSeen(_paneId: string, lines: string[], by: string): void {
    this.limitsSeen.push({ lines, by });
  }

  snapshot(paneId: string) {
    if (paneId !== this.paneId) return undefined;
    const screen = classify({ screen: this.screen(), raw: '', rules: this.profile.detect.rules });
    return { status: this.current, context: { since: 0, rule: screen.rule, lines: screen.lines }, screen };
  }

  // What the agent does

  /** The agent ends its turn with `reply`: the reply lines, its turn summary, done. */
  finish(reply: string): void {
    this.lines.push(...reply.split('\n').map((l) => `  ${l}`), 'Worked for 3s');
    this.closedTurns++;
    this.set('done');
  }

  /** The turn stops at a usage limit: its line where the reply would be, the turn closed, the agent `limited` (as the terminal machine does). */
  hitLimit(line: string): void {
    this.lines.push(`  ${line}`);
    this.closedTurns++;
    this.set('limited');
  }

  /** A new status (and the screen it comes with); `rule`: the rule that decided it, as the watcher says. */
  set(status: string, rule?: string): void {
    this.current = status;
    for (const l of [...this.changes]) l({ pane: { paneId: this.paneId }, status, ...(rule ? { rule } : {}) });
    this.drawn();
  }

  private drawn(): void {
    const s = this.screen();
    for (const l of [...this.screens]) l(this.paneId, s);
  }

  private check(paneId: string): void {
    if (paneId !== this.paneId) throw new Error(`the fake TUI is pane ${this.paneId}, not ${paneId}`);
  }
}
