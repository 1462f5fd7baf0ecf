import { watch, type FSWatcher } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import stripAnsi from 'strip-ansi';
import { createActor, type Actor } from 'xstate';
import { publicStatus, terminalMachine, type TerminalContext, type TerminalStatus } from '../../machines/terminal.machine.js';
import { classify, type Classification } from '../detect/classify.js';
import { combine, stateFilePath } from '../detect/state-file.js';
import type { Profile } from '../profiles/schema.js';
import { capturePane, paneField, subscribe } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { homeOfPid, readStateFile } from './proc.js';

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

interface Entry {
  pane: WatchedPane;
  actor: Actor<typeof terminalMachine>;
  raw: string;
  inFlight: boolean;
  dirty: boolean;
  home: string | null;
  last: string | null;
  dead: boolean;
  /** The state file this pane's CLI writes, once its folder is watched. */
  stateFile: string | null;
  sessionId: string | null;
  /** The last screen classified and the last readings, to skip unchanged ones. */
  lastScreen: string | null;
  lastScreenClass: Classification | null;
  lastFileStatus: string | null;
  /** A headless turn holds the pane: its screen (a placeholder) says nothing; the state stays busy. */
  held: boolean;
}

/** One inotify watch per folder, shared by the panes whose CLIs write their state files there. */
interface FolderWatch {
  watcher: FSWatcher;
  files: Map<string, Entry>;
}

const RAW_KEEP = 4096;

/** A profile without detection rules: nothing on screen can say more than "running", shown as idle. */
const NO_RULES: Classification = { status: 'idle', rule: 'no-rules (the profile has no detect rules)', lines: [] };

/**
 * Turns tmux output into terminal states, driven only by events: a pane's %output triggers a
 * capture (one in flight per pane; output during it coalesces into one more), pane deaths come from
 * a tmux subscription. Nothing runs while nothing is printed.
 */
export class PaneWatcher {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(c: StatusChange) => void>();
  private readonly sessionListeners = new Set<(pane: WatchedPane, sessionId: string) => void>();
  private readonly screenListeners = new Set<(paneId: string, screen: string) => void>();
  private readonly offs: (() => void)[] = [];
  private readonly folders = new Map<string, FolderWatch>();
  /** Where captures and queries go: a connection without pane output keeps them out of its backlog. */
  private readonly cmd: ControlClient;
  private readonly now: () => number;
  captures = 0;

  /**
   * `client` delivers pane output and notifications. Pass `commands`, a second connection that set
   * `refresh-client -f no-output`, so captures are not queued behind every pane's pending output
   * (tmux keeps a client's replies and %output in one ordered queue).
   */
  constructor(
    private readonly client: ControlClient,
    options: { commands?: ControlClient; now?: () => number } = {},
  ) {
    this.cmd = options.commands ?? client;
    this.now = options.now ?? (() => performance.timeOrigin + performance.now());
    this.offs.push(client.onOutput((paneId, data) => this.onOutput(paneId, data)));
    this.offs.push(client.onNotification((name, args) => this.onNotification(name, args)));
  }

  /** Subscribe to pane deaths (tmux reports them on its own 1 s timer) once per connection. */
  async start(): Promise<void> {
    // A one-pane subscription never reports changes on tmux 3.3a; `%*` does.
    await subscribe(this.client, 'jaggers-dead', '%*', '#{pane_dead}');
  }

  onChange(l: (c: StatusChange) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** The CLI's state file names a session: called on the first one seen and whenever it changes. */
  onSession(l: (pane: WatchedPane, sessionId: string) => void): () => void {
    this.sessionListeners.add(l);
    return () => this.sessionListeners.delete(l);
  }

  /** Every new (changed) screen of a watched pane, as captured for classification. */
  onScreen(l: (paneId: string, screen: string) => void): () => void {
    this.screenListeners.add(l);
    return () => this.screenListeners.delete(l);
  }

  watch(pane: WatchedPane): void {
    if (this.entries.has(pane.paneId)) return;
    const d = pane.profile.detect;
    const actor = createActor(terminalMachine, {
      input: { settleMs: d.settleMs, startSettleMs: d.startSettleMs, doneNeedsEvidence: d.doneNeedsEvidence, at: this.now() },
    });
    const entry: Entry = {
      pane,
      actor,
      raw: '',
      inFlight: false,
      dirty: false,
      home: null,
      last: null,
      dead: false,
      stateFile: null,
      sessionId: null,
      lastScreen: null,
      lastScreenClass: null,
      lastFileStatus: null,
      held: false,
    };
    this.entries.set(pane.paneId, entry);
    actor.subscribe((snap) => {
      const status = publicStatus(snap.value as TerminalStatus);
      const key = `${status}|${snap.context.turns}`;
      if (key === entry.last) return;
      entry.last = key;
      const change: StatusChange = {
        pane,
        status,
        since: snap.context.since,
        rule: snap.context.rule,
        lines: snap.context.lines,
        source: snap.context.source,
        turns: snap.context.turns,
      };
      for (const l of this.listeners) l(change);
    });
    actor.start();
    void this.capture(entry);
  }

  unwatch(paneId: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    this.unwatchStateFile(e);
    e.actor.stop();
    this.entries.delete(paneId);
  }

  /** Tell the machine a prompt went in (delivery does this after pressing Enter). */
  inputSent(paneId: string): void {
    this.entries.get(paneId)?.actor.send({ type: 'INPUT_SENT', at: this.now() });
  }

  /** Tell the machine the turn engine confirmed the open turn's end (transcript or screen evidence). */
  confirmTurn(paneId: string, by: string): void {
    this.entries.get(paneId)?.actor.send({ type: 'TURN_CONFIRMED', at: this.now(), by });
  }

  /**
   * A headless turn runs the agent's CLI outside its pane: the pane's own program is stopped meanwhile.
   * The machine shows busy (rule `reason`) and ignores the pane until `release`, which starts it over.
   */
  hold(paneId: string, reason: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    e.held = true;
    e.actor.send({ type: 'SCREEN', at: this.now(), classification: { status: 'busy', rule: reason, lines: [] }, source: 'screen' });
  }

  release(paneId: string, pid: number | null): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    e.held = false;
    this.markRestarted(e, pid);
  }

  /** The watched pane, as last updated (its pid changes when the pane is restarted). */
  pane(paneId: string): WatchedPane | undefined {
    return this.entries.get(paneId)?.pane;
  }

  /** The machine's state and what decided it, plus the last screen's own reading. */
  snapshot(paneId: string): { status: StatusChange['status']; machine: TerminalStatus; context: TerminalContext; screen: Classification | null } | undefined {
    const e = this.entries.get(paneId);
    if (!e) return undefined;
    const snap = e.actor.getSnapshot();
    return { status: publicStatus(snap.value as TerminalStatus), machine: snap.value as TerminalStatus, context: snap.context, screen: e.lastScreenClass };
  }

  /** The last screen captured for classification (visible area), or null before the first. */
  lastScreen(paneId: string): string | null {
    return this.entries.get(paneId)?.lastScreen ?? null;
  }

  /** The panes watched now. */
  paneIds(): string[] {
    return [...this.entries.keys()];
  }

  /** The pane's current public status, or undefined when it is not watched. */
  status(paneId: string): StatusChange['status'] | undefined {
    const snap = this.entries.get(paneId)?.actor.getSnapshot();
    return snap ? publicStatus(snap.value as TerminalStatus) : undefined;
  }

  /** How many turns the pane finished while watched. */
  turns(paneId: string): number {
    return this.entries.get(paneId)?.actor.getSnapshot().context.turns ?? 0;
  }

  /** Resolves once the pane's machine is in one of `statuses` (at once if it already is). */
  waitFor(paneId: string, statuses: readonly string[], timeoutMs: number): Promise<StatusChange['status']> {
    return new Promise((resolve, reject) => {
      const now = this.status(paneId);
      if (now && statuses.includes(now)) return resolve(now);
      const timer = setTimeout(() => {
        off();
        reject(new Error(`still ${this.status(paneId) ?? 'unknown'} after ${timeoutMs} ms (waited for ${statuses.join(' or ')})`));
      }, timeoutMs);
      const off = this.onChange((c) => {
        if (c.pane.paneId === paneId && statuses.includes(c.status)) {
          clearTimeout(timer);
          off();
          resolve(c.status);
        }
      });
    });
  }

  stop(): void {
    for (const off of this.offs.splice(0)) off();
    for (const id of [...this.entries.keys()]) this.unwatch(id);
  }

  private onOutput(paneId: string, data: Buffer): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    e.raw = (e.raw + data.toString('utf8')).slice(-RAW_KEEP);
    if (e.inFlight) {
      e.dirty = true;
      return;
    }
    void this.capture(e);
  }

  private async capture(e: Entry): Promise<void> {
    e.inFlight = true;
    try {
      do {
        e.dirty = false;
        let screen: string;
        try {
          screen = await capturePane(this.cmd, e.pane.paneId);
          this.captures++;
        } catch {
          return; // the pane is gone: the death notification says so
        }
        if (this.entries.get(e.pane.paneId) !== e) return; // unwatched meanwhile
        const at = this.now();
        const file = await this.readFile(e);
        // The machine moved on while the state file was read (a turn confirmed, a prompt sent): this
        // reading is older than that, and read again rather than applied (a stale busy would open a turn).
        if (e.actor.getSnapshot().context.since > at) {
          e.dirty = true;
          continue;
        }
        // An unchanged screen with an unchanged file says nothing new (and must not restart a settle wait).
        if (screen === e.lastScreen && (file?.status ?? null) === e.lastFileStatus) continue;
        e.lastScreen = screen;
        e.lastScreenClass = e.pane.profile.detect.rules.length ? classify({ screen, raw: stripAnsi(e.raw), rules: e.pane.profile.detect.rules }) : NO_RULES;
        e.lastFileStatus = file?.status ?? null;
        this.decide(e, at, file);
        for (const l of this.screenListeners) l(e.pane.paneId, screen);
      } while (e.dirty);
    } finally {
      e.inFlight = false;
    }
  }

  private decide(e: Entry, at: number, file: Classification | null): void {
    if (!e.lastScreenClass || e.dead || e.held) return;
    const { c, source } = combine(e.lastScreenClass, file);
    if (c.status !== 'unknown') e.actor.send({ type: 'SCREEN', at, classification: c, source });
  }

  /** Read the CLI's state file (watching its folder from the first reading on); null when it has none. */
  private async readFile(e: Entry): Promise<Classification | null> {
    const kind = e.pane.profile.detect.stateFile;
    if (!kind || !e.pane.pid) return null;
    e.home ??= await homeOfPid(e.pane.pid, os.homedir());
    const file = stateFilePath(kind, e.home, e.pane.pid);
    // The CLI may not have made its state folder yet: try again on each reading until it has.
    if (e.stateFile !== file) this.watchStateFile(e, file);
    const reading = await readStateFile(kind, e.home, e.pane.pid);
    if (reading.sessionId && reading.sessionId !== e.sessionId) {
      e.sessionId = reading.sessionId;
      for (const l of this.sessionListeners) l(e.pane, reading.sessionId);
    }
    return reading.classification;
  }

  /**
   * A change of the state file is its own event (inotify, no polling): busy the moment the CLI says
   * so, even if the capture that shows it is still queued, and never a turn lost between readings.
   */
  private async onStateFile(e: Entry): Promise<void> {
    // Serialized with the captures, so a reading started earlier can never overwrite a newer one.
    if (e.inFlight) e.dirty = true;
    else await this.capture(e);
  }

  private watchStateFile(e: Entry, file: string): void {
    this.unwatchStateFile(e);
    // A reading still in flight when the pane was unwatched (or the watcher stopped) must not leave an
    // inotify watch behind that nothing closes (it would keep the process alive).
    if (this.entries.get(e.pane.paneId) !== e) return;
    const dir = path.dirname(file);
    let folder = this.folders.get(dir);
    if (!folder) {
      try {
        const files = new Map<string, Entry>();
        const watcher = watch(dir, (_ev, name) => {
          const owner = name ? files.get(name.toString()) : undefined;
          if (owner) void this.onStateFile(owner);
        });
        folder = { watcher, files };
        this.folders.set(dir, folder);
      } catch {
        return; // no state folder (yet): the screen alone decides until it exists
      }
    }
    folder.files.set(path.basename(file), e);
    e.stateFile = file;
  }

  private unwatchStateFile(e: Entry): void {
    if (!e.stateFile) return;
    const dir = path.dirname(e.stateFile);
    const folder = this.folders.get(dir);
    folder?.files.delete(path.basename(e.stateFile));
    if (folder && folder.files.size === 0) {
      folder.watcher.close();
      this.folders.delete(dir);
    }
    e.stateFile = null;
  }

  /**
   * What tmux says of a pane now (from a fresh list-panes): a death or a restart (a new pid, even one
   * made by `respawn-pane -k` on a live pane, which tmux never reports as dead) is acted on at once
   * rather than on tmux's one-second subscription timer.
   */
  sync(paneId: string, now: { dead: boolean; pid: number | null }): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    if (now.dead && !e.dead && !e.held) this.markDead(e);
    else if (!now.dead && (e.dead || (now.pid !== null && e.pane.pid !== null && now.pid !== e.pane.pid))) this.markRestarted(e, now.pid);
  }

  private markDead(e: Entry): void {
    e.dead = true;
    void paneField(this.cmd, e.pane.paneId, '#{pane_dead_status}').then((text) => {
      const status = text === null ? null : Number(text);
      e.actor.send({ type: 'PANE_EXITED', at: this.now(), exitStatus: status === null || Number.isNaN(status) ? null : status });
    });
  }

  private markRestarted(e: Entry, pid: number | null): void {
    if (e.held) {
      // The placeholder of a headless turn: noted, not a restart of the agent (that comes with release).
      if (pid) e.pane = { ...e.pane, pid };
      e.dead = false;
      return;
    }
    e.dead = false;
    e.home = null;
    this.unwatchStateFile(e);
    e.lastScreen = null;
    e.lastFileStatus = null;
    e.raw = '';
    const restarted = (p: number | null) => {
      if (p) e.pane = { ...e.pane, pid: p };
      e.actor.send({ type: 'PANE_RESTARTED', at: this.now() });
      void this.capture(e);
    };
    if (pid) restarted(pid);
    else void paneField(this.cmd, e.pane.paneId, '#{pane_pid}').then((p) => restarted(p ? Number(p) : null));
  }

  private onNotification(name: string, args: string[]): void {
    if (name === 'subscription-changed' && args[0] === 'jaggers-dead') {
      const paneId = args.find((a) => a.startsWith('%'));
      const e = paneId ? this.entries.get(paneId) : undefined;
      if (!e) return;
      const dead = args.at(-1) === '1';
      if (dead && !e.dead) this.markDead(e);
      else if (!dead && e.dead) this.markRestarted(e, null);
    }
    if (name === 'window-close' || name === 'unlinked-window-close') {
      for (const e of this.entries.values()) {
        if (e.pane.windowId === args[0] && !e.dead) {
          e.dead = true;
          e.actor.send({ type: 'PANE_EXITED', at: this.now(), exitStatus: null });
        }
      }
    }
  }
}
