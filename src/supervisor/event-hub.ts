import type { ServerResponse } from 'node:http';
import type { StreamEvent, StreamEventType } from '../api/types.js';

/**
 * The supervisor's event stream: every state change, turn, pin, fork and notice gets an id, and the
 * last `keep` are kept so a client that reconnects with `Last-Event-ID` gets what it missed. Ids grow
 * across restarts (they start from the clock in microseconds), so an id from an earlier supervisor is
 * recognized as older than this one's first: such a client is told of the gap instead.
 */
export class EventHub {
  private readonly buffer: StreamEvent[] = [];
  private readonly listeners = new Set<(e: StreamEvent) => void>();
  private next: number;
  readonly firstId: number;

  constructor(
    private readonly keep = 10_000,
    now: () => number = Date.now,
  ) {
    this.next = now() * 1000;
    this.firstId = this.next;
  }

  publish(type: StreamEventType, data: Record<string, unknown>): StreamEvent {
    const e: StreamEvent = { id: this.next++, type, at: new Date().toISOString(), data };
    this.buffer.push(e);
    if (this.buffer.length > this.keep) this.buffer.splice(0, this.buffer.length - this.keep);
    for (const l of this.listeners) l(e);
    return e;
  }

  /** Events after `lastId`; `gap` when some of them are no longer kept (or were an earlier supervisor's). */
  since(lastId: number): { events: StreamEvent[]; gap: { from: number; to: number } | null } {
    const oldest = this.buffer[0]?.id ?? this.next;
    const gap = lastId + 1 < oldest ? { from: lastId + 1, to: oldest - 1 } : null;
    return { events: this.buffer.filter((e) => e.id > lastId), gap };
  }

  subscribe(l: (e: StreamEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  get lastId(): number {
    return this.next - 1;
  }
}

/** Start a text/event-stream answer on `res` (no caching, no proxy buffering). */
export function openEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
}

/** One event in text/event-stream framing. */
export function sseFrame(e: StreamEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ at: e.at, data: e.data })}\n\n`;
}
