// What a waiting command shows on stderr while the supervisor works: the agent's state and the time
// so far; a spinner redrawn in place on a terminal, plain lines when stderr is a file or a pipe.
import type { StreamEvent } from '../api/types.js';
import { inertLine, type Terminal } from '../output.js';

const FRAMES = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

export class Progress {
  private state = 'waiting';
  private note = '';
  private frame = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly t0 = Date.now();

  constructor(
    private readonly io: Terminal,
    private readonly agent: string,
  ) {
    if (io.errIsTTY) {
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    }
  }

  private elapsed(): string {
    return `${((Date.now() - this.t0) / 1000).toFixed(1)} s`;
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.io.control('clear-line');
    this.io.writeErr(inertLine(`${FRAMES[this.frame]} ${this.agent}: ${this.state}${this.note ? ` (${this.note})` : ''} ${this.elapsed()}`));
  }

  private line(text: string): void {
    if (this.io.errIsTTY) this.draw();
    else this.io.writeErr(`${this.agent}: ${text} (${this.elapsed()})\n`);
  }

  event(e: StreamEvent): void {
    if (e.type === 'state' && typeof e.data.state === 'string' && e.data.state !== this.state) {
      this.state = e.data.state;
      this.line(this.state);
    } else if (e.type === 'turn' && typeof e.data.phase === 'string') {
      this.note = `turn ${String(e.data.turn)} ${e.data.phase}`;
      this.line(this.note);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.io.errIsTTY) this.io.control('clear-line');
  }
}
