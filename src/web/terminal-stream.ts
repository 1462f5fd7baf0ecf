// One client's live terminal (`GET /v1/terminals/:agent/stream`) as server-sent events: `snapshot` first,
// then `output` (the pane's bytes as UTF-8 text), `size` when the pane is resized, `exit` when it dies.
// A client that reads too slowly is not buffered for without end: its output is dropped once over `limit`
// bytes wait, and when it has caught up it gets a fresh `snapshot` instead of what it missed.
import type { PaneSnapshot, TapSink } from './pane-taps.js';

/** The response the events are written to (node's ServerResponse has it). */
export interface EventOut {
  write(chunk: string): unknown;
  /** Bytes written but not yet sent. */
  readonly writableLength: number;
  once(event: 'drain', fn: () => void): unknown;
  end(): unknown;
}

/** Bytes that may wait to be sent before the stream's output is dropped for a fresh snapshot. */
export const STREAM_BEHIND_LIMIT = 1024 * 1024;

export function frame(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function snapshotFrame(s: PaneSnapshot): string {
  return frame('snapshot', { cols: s.cols, rows: s.rows, cursor: s.cursor, alternate: s.alternate, data: s.data });
}

export class TerminalStream implements TapSink {
  private behind = false;
  private ended = false;
  private cols = 0;
  private rows = 0;

  constructor(
    private readonly out: EventOut,
    /** A fresh snapshot (the tap's): output before it is not passed on. */
    private readonly resnapshot: () => Promise<PaneSnapshot>,
    private readonly limit = STREAM_BEHIND_LIMIT,
  ) {}

  /** The first event; a dead pane's stream ends after it. */
  start(s: PaneSnapshot): void {
    this.snapshot(s);
    if (s.dead) this.exit("the pane's program exited");
  }

  output(text: string): void {
    if (this.ended || this.behind) return;
    if (this.out.writableLength > this.limit) {
      this.behind = true;
      this.out.once('drain', () => void this.catchUp());
      return;
    }
    this.out.write(frame('output', { data: text }));
  }

  size(cols: number, rows: number): void {
    if (this.ended || (cols === this.cols && rows === this.rows)) return;
    this.cols = cols;
    this.rows = rows;
    if (!this.behind) this.out.write(frame('size', { cols, rows }));
  }

  exit(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.out.write(frame('exit', { reason }));
    this.out.end();
  }

  private snapshot(s: PaneSnapshot): void {
    this.cols = s.cols;
    this.rows = s.rows;
    this.out.write(snapshotFrame(s));
  }

  private async catchUp(): Promise<void> {
    if (this.ended) return;
    try {
      const s = await this.resnapshot();
      if (this.ended) return;
      this.behind = false;
      this.start(s);
    } catch (e) {
      this.exit((e as Error).message);
    }
  }
}
