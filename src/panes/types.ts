import type { LimitSeen, TerminalStatus } from '../../machines/terminal.machine.js';
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
  /** State `limited`: the limit the agent waits for. */
  limit?: LimitSeen | null;
  /** Decided by a call of the hook bridge: when that call started (ms since the epoch, from its spool file's name). */
  hookFiredAt?: number;
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
  /**
   * After a hook's turn start, a quiet screen (or state file) must stay quiet this long before it ends
   * the turn: a CLI's end event may lag its screen, and no end event comes after Esc or a denied
   * permission (the screen ends those). Default 3000.
   */
  hookGraceMs?: number;
  /** Whether the pane's CLI was started with its hooks installed (not turned off): a turn without hook calls is then warned of. */
  hooksInstalled?: (pane: WatchedPane) => boolean;
  /** How long an agent whose limit showed no reset time waits before its queue is tried again (default 5 min). */
  limitWaitMs?: number;
  /** Ask tmux to pause a pane whose output to this watcher is this many seconds behind (0: never, the default). */
  pauseAfterS?: number;
}

/** A turn end a hook reported: the machine's closed-turn count after it, and the reply where the payload held it. */
export interface HookEnd {
  turn: number;
  event: string;
  reply?: string;
  transcriptPath?: string;
}

/** A pane's hooks, for `why`. */
export interface HookView {
  kind: string;
  /** Started with them installed (false: turned off for this agent or project). */
  installed: boolean;
  /** Bridge calls seen for the pane. */
  calls: number;
  lastEvent: { event: string; at: string } | null;
  /** Set once a turn passed with no hook call: the pane is read from the state file and screen. */
  warning: string | null;
}
