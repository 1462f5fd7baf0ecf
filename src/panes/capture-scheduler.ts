import type { Clock, TimerHandle } from './clock.js';

export interface CaptureTimings {
  /** Captures in flight at once, over all panes: more only queue up inside tmux, which answers one by one. */
  maxCaptures: number;
  /** Output without busy evidence waits this long for the rest of its frame (which may say busy). */
  frameMs: number;
  /** Busy text in the output holds off captures for other output this long (the spinner's next frame is due). */
  evidenceMs: number;
  /** This long after the output stopped, output that no capture has judged is captured once. */
  quietMs: number;
  /** While a pane is busy and prints on, its screen is captured at most this often (for menus, errors). */
  busyGapMs: number;
}

/** One pane, as the scheduler sees it. */
export interface CaptureTarget {
  /**
   * Captures of a pane whose CLI writes a state file are budgeted (the file tells busy and idle):
   * shared slots, held while spinner text comes, spaced while busy. Measured (BENCHMARKS.md): for
   * panes without one, at 100 agents the budget made detection slower than capturing on every output.
   */
  readonly budgeted: boolean;
  /** The profile names busy text (`outputBusy`): other output waits frameMs for the rest of its frame. */
  readonly framed: boolean;
  /** Whether the pane's machine says busy now (a busy pane is captured at most every busyGapMs). */
  busy(): boolean;
  /** One capture and reading of the pane, sent at `sentAt`. */
  capture(sentAt: number): Promise<void>;
}

/** The capture bookkeeping of one pane (read by the watcher and by tests; written here only). */
export interface PaneCaptures {
  readonly target: CaptureTarget;
  /** Removed from the scheduler: nothing is captured for it any more. */
  closed: boolean;
  /** A capture of this pane is on its way to tmux; `dirty`: another was asked for meanwhile. */
  inFlight: boolean;
  dirty: boolean;
  /** Waiting for a capture slot; `urgent`: the pane's state is in doubt, so it goes first. */
  queued: boolean;
  urgent: boolean;
  /** What asked for the next capture (counted in `reasons`). */
  why: string | null;
  /** A capture asked for later (the rest of a frame, or the gap between captures of a busy pane). */
  timer: TimerHandle | null;
  timerAt: number;
  /** Fires once the output stopped for quietMs (or the slower wait `armQuiet` was given), to judge output no capture has seen. */
  quietTimer: TimerHandle | null;
  quietMs: number;
  /** What the quiet timer's capture is for (see `armQuiet`). */
  quietWhy: string;
  lastOutputAt: number;
  /** When the last capture was sent, and whether output came after it (no capture has judged it yet). */
  sentAt: number;
  unjudged: boolean;
  /** The last output that said busy by itself (the profile's `outputBusy`). */
  evidenceAt: number;
}

/**
 * When each pane's screen is captured, with the work bounded: one capture in flight per pane, at most
 * maxCaptures in flight at all (panes in doubt first), a busy pane at most every busyGapMs, output
 * held while busy text comes, and once the output stops, a pane whose last output no capture saw is
 * captured once.
 */
export class CaptureScheduler {
  /** Captures sent, by what asked for them (start, output, quiet, restart, again): for benchmarks. */
  readonly reasons: Record<string, number> = {};
  /** Panes waiting for a capture slot: those in doubt first. */
  private readonly urgentQueue: PaneCaptures[] = [];
  private readonly queue: PaneCaptures[] = [];
  private inFlightCount = 0;

  constructor(
    private readonly clock: Clock,
    private readonly timings: CaptureTimings,
  ) {}

  /** Captures in flight now, over all panes. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  add(target: CaptureTarget): PaneCaptures {
    return {
      target,
      closed: false,
      inFlight: false,
      dirty: false,
      queued: false,
      urgent: false,
      why: null,
      timer: null,
      timerAt: 0,
      quietTimer: null,
      quietMs: this.timings.quietMs,
      quietWhy: 'quiet',
      lastOutputAt: 0,
      sentAt: 0,
      unjudged: false,
      evidenceAt: Number.NEGATIVE_INFINITY,
    };
  }

  /** Its timers stop and its place in the queue is given up; a capture in flight finishes unused. */
  remove(p: PaneCaptures): void {
    if (p.timer !== null) this.clock.clearTimeout(p.timer);
    if (p.quietTimer !== null) this.clock.clearTimeout(p.quietTimer);
    p.timer = null;
    p.quietTimer = null;
    this.dequeue(p);
    p.closed = true;
  }

  /** Capture `p` in `delayMs` (or sooner, if asked sooner); `urgent` puts it ahead of busy panes. */
  want(p: PaneCaptures, delayMs: number, urgent: boolean, why: string): void {
    if (p.closed) return;
    if (urgent) p.urgent = true;
    p.why ??= why;
    if (p.inFlight) {
      p.dirty = true;
      return;
    }
    if (p.queued) {
      if (urgent && this.queue.includes(p)) {
        this.queue.splice(this.queue.indexOf(p), 1);
        this.urgentQueue.push(p);
      }
      return;
    }
    if (delayMs <= 0) {
      if (p.timer !== null) this.clock.clearTimeout(p.timer);
      p.timer = null;
      this.enqueue(p);
      return;
    }
    const at = this.clock.now() + delayMs;
    if (p.timer !== null && p.timerAt <= at) return;
    if (p.timer !== null) this.clock.clearTimeout(p.timer);
    p.timerAt = at;
    p.timer = this.clock.setTimeout(() => {
      p.timer = null;
      this.enqueue(p);
    }, delayMs);
  }

  /**
   * Output without busy evidence came at `at`. While busy text keeps coming (a spinner redrawn every
   * ~100 ms), other output is the rest of its frames, which under load trickle in over a good part of
   * a second: a capture only once busy text stopped for evidenceMs (each new busy frame puts it off
   * again), or once all output stopped. Without a state file the screen is the only way to see a turn
   * end: every such output is read (one capture in flight per pane), as the budget and the holds cost
   * more latency than they save.
   */
  output(p: PaneCaptures, at: number): void {
    this.noteOutput(p, at);
    if (!p.target.budgeted) {
      this.want(p, 0, false, 'output');
      this.armQuiet(p);
      return;
    }
    const held = p.evidenceAt + this.timings.evidenceMs - at;
    const delay = held > 0 ? held : p.target.framed ? this.timings.frameMs : 0;
    this.want(p, Math.max(delay, this.gapFor(p)), false, 'output');
    this.armQuiet(p);
  }

  /**
   * Output of a pane whose state a hook decided (a turn started, or ended and the screen has not
   * caught up yet): it asks for no capture of its own. Once the output stops for quietMs (or `quietMs`
   * given: a pane idle by its hooks waits longer), the screen is read once, for what no hook reports (a
   * menu, an error, a turn that ended with no end event).
   */
  hookedOutput(p: PaneCaptures, at: number, quietMs = this.timings.quietMs, why = 'quiet'): void {
    this.noteOutput(p, at);
    this.armQuiet(p, quietMs, why);
  }

  /**
   * Output that says busy by itself came at `at` (a spinner frame): no capture for it, and one asked
   * for by this frame's first chunk is not needed either. The caller arms the quiet timer after it
   * has told the machine.
   */
  busyOutput(p: PaneCaptures, at: number): void {
    this.noteOutput(p, at);
    p.evidenceAt = at;
    this.cancelPending(p);
  }

  /**
   * Once the output has stopped for `quietMs` (quietMs unless given): output no capture has seen gets
   * one (in doubt). A wait of another length than the armed one replaces it. `why` names the capture
   * (for the benchmarks' count of what asked for captures).
   */
  armQuiet(p: PaneCaptures, quietMs = this.timings.quietMs, why = 'quiet'): void {
    p.quietWhy = why;
    if (p.quietTimer !== null) {
      if (p.quietMs === quietMs) return;
      this.clock.clearTimeout(p.quietTimer);
      p.quietTimer = null;
    }
    p.quietMs = quietMs;
    const fire = (): void => {
      p.quietTimer = null;
      if (p.closed) return;
      const left = p.lastOutputAt + p.quietMs - this.clock.now();
      if (left > 1) p.quietTimer = this.clock.setTimeout(fire, left);
      else if (p.unjudged) this.want(p, 0, true, p.quietWhy);
    };
    p.quietTimer = this.clock.setTimeout(fire, Math.max(1, p.lastOutputAt + quietMs - this.clock.now()));
  }

  /** A capture sent at `sentAt` came back: output from before it has been seen. */
  screenSeen(p: PaneCaptures, sentAt: number): void {
    if (p.lastOutputAt <= sentAt) p.unjudged = false;
  }

  /** The capture in flight is stale (the machine moved on meanwhile): another goes first, once it ends. */
  readAgain(p: PaneCaptures, why: string): void {
    p.dirty = true;
    p.urgent = true;
    p.why = why;
  }

  /** A capture asked for by `why` and not sent yet is not needed any more (what it was to see came otherwise). */
  withdraw(p: PaneCaptures, why: string): void {
    if (p.why !== why) return;
    this.cancelPending(p);
    if (!p.queued) p.why = null;
  }

  /** The pane runs a new program: busy text its old one printed holds nothing off. */
  forgetEvidence(p: PaneCaptures): void {
    p.evidenceAt = Number.NEGATIVE_INFINITY;
  }

  private noteOutput(p: PaneCaptures, at: number): void {
    p.lastOutputAt = at;
    p.unjudged = true;
  }

  private enqueue(p: PaneCaptures): void {
    if (p.queued || p.inFlight || p.closed) return;
    if (!p.target.budgeted) {
      void this.capture(p);
      return;
    }
    p.queued = true;
    (p.urgent ? this.urgentQueue : this.queue).push(p);
    this.pump();
  }

  private dequeue(p: PaneCaptures): void {
    for (const q of [this.urgentQueue, this.queue]) {
      const i = q.indexOf(p);
      if (i >= 0) q.splice(i, 1);
    }
    p.queued = false;
  }

  /** A capture asked for and not sent yet is dropped (not an urgent one: that pane is in doubt). */
  private cancelPending(p: PaneCaptures): void {
    if (p.timer !== null) this.clock.clearTimeout(p.timer);
    p.timer = null;
    if (p.queued && !p.urgent) this.dequeue(p);
  }

  /** A busy pane (its machine says so) is captured at most every busyGapMs; others at once. */
  private gapFor(p: PaneCaptures): number {
    return p.target.busy() ? Math.max(0, p.sentAt + this.timings.busyGapMs - this.clock.now()) : 0;
  }

  private pump(): void {
    while (this.inFlightCount < this.timings.maxCaptures) {
      const p = this.urgentQueue.shift() ?? this.queue.shift();
      if (!p) return;
      p.queued = false;
      if (p.closed) continue;
      void this.capture(p);
    }
  }

  private async capture(p: PaneCaptures): Promise<void> {
    this.inFlightCount++;
    p.inFlight = true;
    p.dirty = false;
    p.urgent = false;
    this.reasons[p.why ?? 'again'] = (this.reasons[p.why ?? 'again'] ?? 0) + 1;
    p.why = null;
    try {
      p.sentAt = this.clock.now();
      await p.target.capture(p.sentAt);
    } finally {
      this.inFlightCount--;
      p.inFlight = false;
      if (p.dirty) this.want(p, p.target.budgeted ? this.gapFor(p) : 0, p.urgent, p.why ?? 'again');
      this.pump();
    }
  }
}
