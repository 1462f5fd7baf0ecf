import { continuePaneOutput, pausePaneOutput, setPauseAfter } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { Clock, TimerHandle } from './clock.js';

export interface FlowOptions {
  /**
   * Pause a pane's output to the watcher while its state file says busy (the file tells when that
   * ends), so tmux neither sends nor we read bytes nobody needs; its screen is looked at every
   * pausedCheckMs meanwhile.
   */
  pauseBusy: boolean;
  pausedCheckMs: number;
  /** Ask tmux to pause a pane whose output to the watcher is this many seconds behind (0: never). */
  pauseAfterS: number;
}

/** What flow control asks of the rest of the watcher, for one pane. */
export interface FlowHooks {
  /** A look at the paused pane's screen is due (every pausedCheckMs). */
  check(): void;
  /** Output flows again: the screen is read at once (what it drew meanwhile never came). */
  resumed(): void;
  /** tmux paused the pane (`%pause`: its output fell pauseAfterS behind) and was told to go on. */
  behind(): void;
}

export interface PaneFlow {
  readonly paneId: string;
  readonly hooks: FlowHooks;
  /** Its output to the watcher is paused (its state file says busy); a look every pausedCheckMs. */
  paused: boolean;
  checkTimer: TimerHandle | null;
}

/**
 * Pausing and continuing a pane's output to the watcher. Sent on the output connection itself: tmux
 * acts on a command as it reads it, even while that client's output backlog is long.
 */
export class FlowControl {
  private readonly panes = new Map<string, PaneFlow>();

  /** `client`: the connection that receives the panes' output. */
  constructor(
    private readonly client: ControlClient,
    private readonly clock: Clock,
    private readonly options: FlowOptions,
  ) {}

  /** Output that fell pauseAfterS behind is dropped by tmux (%pause): a capture reads the screen instead. */
  async start(): Promise<void> {
    if (this.options.pauseAfterS > 0) await setPauseAfter(this.client, this.options.pauseAfterS);
  }

  add(paneId: string, hooks: FlowHooks): PaneFlow {
    const p: PaneFlow = { paneId, hooks, paused: false, checkTimer: null };
    this.panes.set(paneId, p);
    return p;
  }

  /** Forget the pane (resume it first if its output should flow again). */
  remove(p: PaneFlow): void {
    if (p.checkTimer !== null) this.clock.clearInterval(p.checkTimer);
    p.checkTimer = null;
    if (this.panes.get(p.paneId) === p) this.panes.delete(p.paneId);
  }

  /** The pane's output stops coming to the watcher (tmux drops it for us, never for other clients). */
  pause(p: PaneFlow): void {
    if (!this.options.pauseBusy || p.paused) return;
    p.paused = true;
    void pausePaneOutput(this.client, p.paneId).catch(() => {});
    p.checkTimer = this.clock.setInterval(() => p.hooks.check(), this.options.pausedCheckMs);
  }

  /** Output flows again; the pane's screen is read at once. */
  resume(p: PaneFlow): void {
    if (!p.paused) return;
    p.paused = false;
    if (p.checkTimer !== null) this.clock.clearInterval(p.checkTimer);
    p.checkTimer = null;
    void continuePaneOutput(this.client, p.paneId).catch(() => {});
    p.hooks.resumed();
  }

  /** `%pause %N`: tmux paused a pane whose output to us fell pauseAfterS behind: read its screen, then go on. */
  notification(name: string, args: readonly string[]): void {
    if (name !== 'pause') return;
    const p = this.panes.get(args[0] ?? '');
    if (p && !p.paused) {
      void continuePaneOutput(this.client, p.paneId).catch(() => {});
      p.hooks.behind();
    }
  }
}
