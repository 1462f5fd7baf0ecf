import type { TerminalStatus } from '../../machines/terminal.machine.js';
import type { Profile } from '../profiles/schema.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { Clock } from './clock.js';
import type { StateFilePorts } from './state-files.js';

export interface WatchedPane {
  paneId: string;
  windowId: string;
  agent: string;
  profile: Profile;
  pid: number | null;
  terminalId?: string | null;
}

export interface StatusChange {
  pane: WatchedPane;
  status: Exclude<TerminalStatus, 'settling' | 'booting'>;
  since: number;
  rule: string | null;
  lines: string[];
  source: string;
  turns: number;
}

export interface WatcherOptions {
  /**
   * A second connection that set `refresh-client -f no-output`, for captures and queries, so they are
   * not queued behind every pane's pending output (tmux keeps a client's replies and %output in one
   * ordered queue).
   */
  commands?: ControlClient;
  now?: () => number;
  /** Timers (and, without `now`, the time): the real clock unless a test hands in a simulated one. */
  clock?: Clock;
  /** The state files' file system: the real one unless a test hands in a fake. */
  stateFiles?: StateFilePorts;
  /** Captures in flight at once, over all panes: more only queue up inside tmux, which answers one by one. */
  maxCaptures?: number;
  /** Output without busy evidence waits this long for the rest of its frame (which may say busy). */
  frameMs?: number;
  /** Busy text in the output holds off captures for other output this long (the spinner's next frame is due). */
  evidenceMs?: number;
  /** This long after the output stopped, output that no capture has judged is captured once. */
  quietMs?: number;
  /** While a pane is busy and prints on, its screen is captured at most this often (for menus, errors). */
  busyGapMs?: number;
  /**
   * Pause a pane's output to this watcher while its state file says busy (the file tells when that
   * ends), so tmux neither sends nor we read bytes nobody needs; its screen is looked at every
   * pausedCheckMs meanwhile. Default on.
   */
  pauseBusy?: boolean;
  pausedCheckMs?: number;
  /** Ask tmux to pause a pane whose output to this watcher is this many seconds behind (0: never, the default). */
  pauseAfterS?: number;
}
