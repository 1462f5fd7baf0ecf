import { paneField } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { zombieExitStatus } from './process-home.js';

/** The subscription that reports pane deaths (and revivals) on the output connection. */
export const DEAD_SUBSCRIPTION = 'jaggers-dead';

/** What death tracking asks of (and tells) the rest of the watcher, for one pane. */
export interface LifeHooks {
  /** A headless turn holds the pane: its own program is stopped on purpose. */
  held(): boolean;
  /** The pane's process as last known. */
  pid(): number | null;
  /** The pane is found dead (called at once, before its exit status is asked for). */
  dying(): void;
  exited(exitStatus: number | null): void;
  /** The held pane runs a new program (the placeholder of a headless turn): only its pid is noted. */
  placeholder(pid: number | null): void;
  /** The pane runs a new program: what was known of the old one is forgotten (called at once). */
  restarting(): void;
  /** ... and this is its pid (asked of tmux when not known). */
  restarted(pid: number | null): void;
}

export interface PaneLife {
  readonly paneId: string;
  readonly windowId: string;
  readonly hooks: LifeHooks;
  dead: boolean;
}

/**
 * Which watched panes are dead: tmux's `jaggers-dead` subscription and window closes say so on the
 * output connection, a fresh list-panes (`sync`) says so sooner; a pane that lives again, or runs a
 * new pid, is restarted.
 */
export class DeathTracker {
  private readonly panes = new Map<string, PaneLife>();

  /**
   * `client` receives the notifications; `cmd` answers the queries (exit status, pid); `zombieStatus`
   * reads the status of an unreaped process when tmux has none.
   */
  constructor(
    private readonly client: ControlClient,
    private readonly cmd: ControlClient,
    private readonly zombieStatus: (pid: number) => Promise<number | null> = zombieExitStatus,
  ) {}

  /** Subscribe to pane deaths (tmux reports them on its own 1 s timer) once per connection. */
  async start(): Promise<void> {
    // A one-pane subscription never reports changes on tmux 3.3a; `%*` does.
    await this.client.subscribe(DEAD_SUBSCRIPTION, '%*', '#{pane_dead}');
  }

  add(paneId: string, windowId: string, hooks: LifeHooks): PaneLife {
    const p: PaneLife = { paneId, windowId, hooks, dead: false };
    this.panes.set(paneId, p);
    return p;
  }

  remove(p: PaneLife): void {
    if (this.panes.get(p.paneId) === p) this.panes.delete(p.paneId);
  }

  /**
   * What tmux says of a pane now (from a fresh list-panes): a death or a restart (a new pid, even one
   * made by `respawn-pane -k` on a live pane, which tmux never reports as dead) is acted on at once
   * rather than on tmux's one-second subscription timer.
   */
  sync(paneId: string, now: { dead: boolean; pid: number | null }): void {
    const p = this.panes.get(paneId);
    if (!p) return;
    if (now.dead && !p.dead && !p.hooks.held()) this.died(p);
    else if (!now.dead && (p.dead || (now.pid !== null && p.hooks.pid() !== null && now.pid !== p.hooks.pid()))) this.restart(p, now.pid);
  }

  /** The pane runs its program anew (with `pid`, or one asked of tmux when null). */
  restart(p: PaneLife, pid: number | null): void {
    p.dead = false;
    if (p.hooks.held()) {
      // The placeholder of a headless turn: noted, not a restart of the agent (that comes with release).
      p.hooks.placeholder(pid);
      return;
    }
    p.hooks.restarting();
    if (pid) p.hooks.restarted(pid);
    else void paneField(this.cmd, p.paneId, '#{pane_pid}').then((text) => p.hooks.restarted(text ? Number(text) : null));
  }

  notification(name: string, args: readonly string[]): void {
    if (name === 'subscription-changed' && args[0] === DEAD_SUBSCRIPTION) {
      const paneId = args.find((a) => a.startsWith('%'));
      const p = paneId ? this.panes.get(paneId) : undefined;
      if (!p) return;
      const dead = args.at(-1) === '1';
      if (dead && !p.dead) this.died(p);
      else if (!dead && p.dead) this.restart(p, null);
    }
    if (name === 'window-close' || name === 'unlinked-window-close') {
      for (const p of this.panes.values()) {
        if (p.windowId === args[0] && !p.dead) {
          p.hooks.dying();
          p.dead = true;
          p.hooks.exited(null);
        }
      }
    }
  }

  private died(p: PaneLife): void {
    p.dead = true;
    p.hooks.dying();
    const pid = p.hooks.pid();
    void this.exitStatus(p.paneId, pid).then((status) => p.hooks.exited(status));
  }

  /** tmux's `pane_dead_status`, else (tmux never reaped the process) the zombie's own. */
  private async exitStatus(paneId: string, pid: number | null): Promise<number | null> {
    const text = await paneField(this.cmd, paneId, '#{pane_dead_status}');
    const status = text === null ? NaN : Number(text);
    if (!Number.isNaN(status)) return status;
    return pid === null ? null : this.zombieStatus(pid);
  }
}
