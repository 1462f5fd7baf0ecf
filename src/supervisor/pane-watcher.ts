import { watch, type FSWatcher } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import stripAnsi from 'strip-ansi';
import { createActor, type Actor } from 'xstate';
import { publicStatus, terminalMachine, type TerminalContext, type TerminalStatus } from '../../machines/terminal.machine.js';
import { classify, regexOf, type Classification } from '../detect/classify.js';
import { readStateFile, stateFilePath } from '../clis/state-file.js';
import { combine } from '../detect/state-file.js';
import type { Profile } from '../profiles/schema.js';
import { capturePane, paneField, subscribe } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { homeOfPid } from '../agents/proc.js';

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
  /** The latest output, as it came (joined only when a screen is classified): about RAW_KEEP bytes. */
  raw: string[];
  rawLength: number;
  /** A capture of this pane is on its way to tmux; `dirty`: another was asked for meanwhile. */
  inFlight: boolean;
  dirty: boolean;
  /** Waiting in the watcher's capture queue; `urgent`: the pane's state is in doubt, so it goes first. */
  queued: boolean;
  urgent: boolean;
  /** What asked for the next capture (counted in captureReasons). */
  why: string | null;
  /** Its output to this watcher is paused (its state file says busy); a look every pausedCheckMs. */
  paused: boolean;
  pausedTimer: NodeJS.Timeout | null;
  /** A capture asked for later (the rest of a frame, or the gap between captures of a busy pane). */
  timer: NodeJS.Timeout | null;
  timerAt: number;
  /** Fires once the output stopped for `quietMs`, to judge output no capture has seen. */
  quietTimer: NodeJS.Timeout | null;
  lastOutputAt: number;
  /** When the last capture was sent, and whether output came after it (no capture has judged it yet). */
  sentAt: number;
  unjudged: boolean;
  /** The last output that said busy by itself (the profile's `outputBusy`), and the text before it. */
  evidenceAt: number;
  tail: string;
  /** State-file readings in the order they were started: an older one never replaces a newer one. */
  fileSeq: number;
  fileApplied: number;
  lastFile: Classification | null;
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
/** Text kept from the end of a pane's output, so busy text split between two chunks is still found. */
const TAIL_KEEP = 64;

export interface WatcherOptions {
  /**
   * A second connection that set `refresh-client -f no-output`, for captures and queries, so they are
   * not queued behind every pane's pending output (tmux keeps a client's replies and %output in one
   * ordered queue).
   */
  commands?: ControlClient;
  now?: () => number;
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

/** A profile without detection rules: nothing on screen can say more than "running", shown as idle. */
const NO_RULES: Classification = { status: 'idle', rule: 'no-rules (the profile has no detect rules)', lines: [] };

/**
 * Turns tmux output into terminal states, driven only by events, with the work bounded:
 * - The CLI's state file (inotify) decides busy and idle the moment it changes, with no capture.
 * - Output that says busy by itself (a spinner frame, the profile's `outputBusy`) needs no capture.
 * - Other output asks for a capture: one in flight per pane, at most `maxCaptures` in flight at all,
 *   panes in doubt first, a busy pane at most every `busyGapMs`; once the output stops, a pane whose
 *   last output no capture saw is captured once.
 * Pane deaths come from a tmux subscription. Nothing runs while nothing is printed.
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
  private readonly maxCaptures: number;
  private readonly frameMs: number;
  private readonly evidenceMs: number;
  private readonly quietMs: number;
  private readonly busyGapMs: number;
  private readonly pauseBusy: boolean;
  private readonly pausedCheckMs: number;
  private readonly pauseAfterS: number;
  /** Panes waiting for a capture slot: those in doubt first. */
  private readonly urgentQueue: Entry[] = [];
  private readonly queue: Entry[] = [];
  private inFlight = 0;
  captures = 0;
  /** Captures sent, by what asked for them (start, output, quiet, restart, again): for benchmarks. */
  readonly captureReasons: Record<string, number> = {};

  /** `client` delivers pane output and notifications; see WatcherOptions for the rest. */
  constructor(
    private readonly client: ControlClient,
    options: WatcherOptions = {},
  ) {
    this.cmd = options.commands ?? client;
    this.now = options.now ?? (() => performance.timeOrigin + performance.now());
    this.maxCaptures = options.maxCaptures ?? 4;
    this.frameMs = options.frameMs ?? 25;
    this.evidenceMs = options.evidenceMs ?? 200;
    this.quietMs = options.quietMs ?? 150;
    this.busyGapMs = options.busyGapMs ?? 100;
    this.pauseBusy = options.pauseBusy ?? true;
    this.pausedCheckMs = options.pausedCheckMs ?? 2000;
    // Off: in one of two 100-agent runs without state files, panes tmux paused this way stopped sending
    // to the watcher altogether (218 turns timed out) with no %pause seen; see BENCHMARKS.md.
    this.pauseAfterS = options.pauseAfterS ?? 0;
    this.offs.push(client.onOutput((paneId, data) => this.onOutput(paneId, data)));
    this.offs.push(client.onNotification((name, args) => this.onNotification(name, args)));
  }

  /** Subscribe to pane deaths (tmux reports them on its own 1 s timer) once per connection. */
  async start(): Promise<void> {
    // A one-pane subscription never reports changes on tmux 3.3a; `%*` does.
    await subscribe(this.client, 'jaggers-dead', '%*', '#{pane_dead}');
    // Output that fell this far behind is dropped by tmux (%pause): a capture reads the screen instead.
    if (this.pauseAfterS > 0) await this.client.run(['refresh-client', '-f', `pause-after=${this.pauseAfterS}`]);
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
      raw: [],
      rawLength: 0,
      inFlight: false,
      dirty: false,
      queued: false,
      urgent: false,
      why: null,
      paused: false,
      pausedTimer: null,
      timer: null,
      timerAt: 0,
      quietTimer: null,
      lastOutputAt: 0,
      sentAt: 0,
      unjudged: false,
      evidenceAt: Number.NEGATIVE_INFINITY,
      tail: '',
      fileSeq: 0,
      fileApplied: 0,
      lastFile: null,
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
    this.want(entry, 0, true, 'start');
  }

  unwatch(paneId: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    this.unwatchStateFile(e);
    this.resumeOutput(e);
    this.clearTimers(e);
    this.dequeue(e);
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
    this.resumeOutput(e);
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
    // Kept as strings: a Buffer here would be a view that keeps tmux's whole read buffer alive.
    const text = data.toString('utf8');
    e.raw.push(text);
    e.rawLength += text.length;
    while (e.raw.length > 1 && e.rawLength - e.raw[0]!.length >= RAW_KEEP) e.rawLength -= e.raw.shift()!.length;
    const at = this.now();
    e.lastOutputAt = at;
    e.unjudged = true;
    if (this.saysBusy(e, text)) {
      // A busy frame: no capture. One asked for by this frame's first chunk is not needed either.
      e.evidenceAt = at;
      this.cancelPending(e);
      // The state file, where the CLI writes one, decides busy and idle: output may lag it by a second.
      if (!e.dead && !e.held && e.lastFileStatus === null && this.status(paneId) !== 'busy') {
        e.actor.send({ type: 'SCREEN', at, classification: { status: 'busy', rule: 'outputBusy (the output says busy)', lines: [] }, source: 'output' });
      }
      this.armQuiet(e);
      return;
    }
    // While busy text keeps coming (a spinner redrawn every ~100 ms), other output is the rest of its
    // frames, which under load trickle in over a good part of a second: a capture only once busy text
    // stopped for evidenceMs (each new busy frame puts it off again), or once all output stopped.
    // Without a state file the screen is the only way to see a turn end: every such output is read
    // (one capture in flight per pane), as the budget and the holds cost more latency than they save.
    if (!this.budgeted(e)) {
      this.want(e, 0, false, 'output');
      this.armQuiet(e);
      return;
    }
    const held = e.evidenceAt + this.evidenceMs - at;
    const delay = held > 0 ? held : e.pane.profile.detect.outputBusy.length ? this.frameMs : 0;
    this.want(e, Math.max(delay, this.gapFor(e)), false, 'output');
    this.armQuiet(e);
  }

  /**
   * Captures of a pane whose CLI writes a state file are budgeted (the file tells busy and idle):
   * shared slots, held while spinner text comes, spaced while busy. Measured (BENCHMARKS.md): for
   * panes without one, at 100 agents the budget made detection slower than capturing on every output.
   */
  private budgeted(e: Entry): boolean {
    return Boolean(e.pane.profile.detect.stateFile);
  }

  /** Whether this output, with the end of the output before it, holds text that says busy. */
  private saysBusy(e: Entry, text: string): boolean {
    const patterns = e.pane.profile.detect.outputBusy;
    if (patterns.length === 0) return false;
    const plain = stripAnsi(text);
    const joined = e.tail + plain;
    const from = e.tail.length;
    e.tail = joined.slice(-TAIL_KEEP);
    for (const p of patterns) {
      const re = regexOf(p);
      const m = re.exec(joined);
      // A match that ends inside the earlier text is the previous frame's: look at the new text alone.
      if (m && m.index + m[0].length > from) return true;
      if (m && re.test(plain)) return true;
    }
    return false;
  }

  /** A busy pane (its machine says so) is captured at most every busyGapMs; others at once. */
  private gapFor(e: Entry): number {
    return this.status(e.pane.paneId) === 'busy' ? Math.max(0, e.sentAt + this.busyGapMs - this.now()) : 0;
  }

  /** Capture `e` in `delayMs` (or sooner, if asked sooner); `urgent` puts it ahead of busy panes. */
  private want(e: Entry, delayMs: number, urgent: boolean, why: string): void {
    if (this.entries.get(e.pane.paneId) !== e) return;
    if (urgent) e.urgent = true;
    e.why ??= why;
    if (e.inFlight) {
      e.dirty = true;
      return;
    }
    if (e.queued) {
      if (urgent && this.queue.includes(e)) {
        this.queue.splice(this.queue.indexOf(e), 1);
        this.urgentQueue.push(e);
      }
      return;
    }
    if (delayMs <= 0) {
      if (e.timer) clearTimeout(e.timer);
      e.timer = null;
      this.enqueue(e);
      return;
    }
    const at = this.now() + delayMs;
    if (e.timer && e.timerAt <= at) return;
    if (e.timer) clearTimeout(e.timer);
    e.timerAt = at;
    e.timer = setTimeout(() => {
      e.timer = null;
      this.enqueue(e);
    }, delayMs);
  }

  private enqueue(e: Entry): void {
    if (e.queued || e.inFlight || this.entries.get(e.pane.paneId) !== e) return;
    if (!this.budgeted(e)) {
      void this.capture(e);
      return;
    }
    e.queued = true;
    (e.urgent ? this.urgentQueue : this.queue).push(e);
    this.pump();
  }

  private dequeue(e: Entry): void {
    for (const q of [this.urgentQueue, this.queue]) {
      const i = q.indexOf(e);
      if (i >= 0) q.splice(i, 1);
    }
    e.queued = false;
  }

  /** A capture asked for and not sent yet is dropped (not an urgent one: that pane is in doubt). */
  private cancelPending(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    e.timer = null;
    if (e.queued && !e.urgent) this.dequeue(e);
  }

  private clearTimers(e: Entry): void {
    if (e.timer) clearTimeout(e.timer);
    if (e.quietTimer) clearTimeout(e.quietTimer);
    if (e.pausedTimer) clearInterval(e.pausedTimer);
    e.timer = null;
    e.quietTimer = null;
    e.pausedTimer = null;
  }

  /**
   * The pane's output stops coming to this connection (tmux drops it for us, never for other clients,
   * and keeps reading the pane). Sent on the output connection itself: tmux acts on a command as it
   * reads it, even while that client's output backlog is long.
   */
  private pauseOutput(e: Entry): void {
    if (!this.pauseBusy || e.paused) return;
    e.paused = true;
    void this.client.run(['refresh-client', '-A', `${e.pane.paneId}:pause`]).catch(() => {});
    e.pausedTimer = setInterval(() => this.want(e, 0, false, 'paused-check'), this.pausedCheckMs);
  }

  /** Output flows again; the screen is read at once (what it drew meanwhile never came). */
  private resumeOutput(e: Entry): void {
    if (!e.paused) return;
    e.paused = false;
    if (e.pausedTimer) clearInterval(e.pausedTimer);
    e.pausedTimer = null;
    void this.client.run(['refresh-client', '-A', `${e.pane.paneId}:continue`]).catch(() => {});
    this.want(e, 0, true, 'continue');
  }

  /** Once the output has stopped for quietMs: output no capture has seen gets one (in doubt). */
  private armQuiet(e: Entry): void {
    if (e.quietTimer) return;
    const fire = (): void => {
      e.quietTimer = null;
      if (this.entries.get(e.pane.paneId) !== e) return;
      const left = e.lastOutputAt + this.quietMs - this.now();
      if (left > 1) e.quietTimer = setTimeout(fire, left);
      else if (e.unjudged) this.want(e, 0, true, 'quiet');
    };
    e.quietTimer = setTimeout(fire, this.quietMs);
  }

  private pump(): void {
    while (this.inFlight < this.maxCaptures) {
      const e = this.urgentQueue.shift() ?? this.queue.shift();
      if (!e) return;
      e.queued = false;
      if (this.entries.get(e.pane.paneId) !== e) continue;
      void this.capture(e);
    }
  }

  private async capture(e: Entry): Promise<void> {
    this.inFlight++;
    e.inFlight = true;
    e.dirty = false;
    e.urgent = false;
    this.captureReasons[e.why ?? 'again'] = (this.captureReasons[e.why ?? 'again'] ?? 0) + 1;
    e.why = null;
    try {
      await this.read(e);
    } finally {
      this.inFlight--;
      e.inFlight = false;
      if (e.dirty) this.want(e, this.budgeted(e) ? this.gapFor(e) : 0, e.urgent, e.why ?? 'again');
      this.pump();
    }
  }

  /** One capture of the pane and one reading of its state file, classified and given to its machine. */
  private async read(e: Entry): Promise<void> {
    const sentAt = this.now();
    e.sentAt = sentAt;
    let screen: string;
    try {
      screen = await capturePane(this.cmd, e.pane.paneId);
      this.captures++;
    } catch {
      return; // the pane is gone: the death notification says so
    }
    if (this.entries.get(e.pane.paneId) !== e) return; // unwatched meanwhile
    if (e.lastOutputAt <= sentAt) e.unjudged = false;
    const at = this.now();
    const file = await this.readFileInOrder(e);
    // The machine moved on while the state file was read (a turn confirmed, a prompt sent): this
    // reading is older than that, and read again rather than applied (a stale busy would open a turn).
    if (e.actor.getSnapshot().context.since > at) {
      e.dirty = true;
      e.urgent = true;
      e.why = 'moved-on';
      return;
    }
    // An unchanged screen with an unchanged file says nothing new (and must not restart a settle wait).
    if (screen === e.lastScreen && (file?.status ?? null) === e.lastFileStatus) return;
    e.lastScreen = screen;
    e.lastScreenClass = e.pane.profile.detect.rules.length ? classify({ screen, raw: this.rawText(e), rules: e.pane.profile.detect.rules }) : NO_RULES;
    e.lastFileStatus = file?.status ?? null;
    this.decide(e, at, file);
    for (const l of this.screenListeners) l(e.pane.paneId, screen);
  }

  private decide(e: Entry, at: number, file: Classification | null): void {
    if (!e.lastScreenClass || e.dead || e.held) return;
    const { c, source } = combine(e.lastScreenClass, file);
    if (c.status !== 'unknown') e.actor.send({ type: 'SCREEN', at, classification: c, source });
  }

  /** The pane's latest output (about RAW_KEEP characters), escape sequences removed. */
  private rawText(e: Entry): string {
    return stripAnsi(e.raw.join('').slice(-RAW_KEEP));
  }

  /** The newest reading of the state file: one started before another that already finished gives that one's. */
  private async readFileInOrder(e: Entry): Promise<Classification | null> {
    const seq = ++e.fileSeq;
    const file = await this.readFile(e);
    if (seq > e.fileApplied) {
      e.fileApplied = seq;
      e.lastFile = file;
    }
    return e.lastFile;
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
    const at = this.now();
    const file = await this.readFileInOrder(e);
    if (this.entries.get(e.pane.paneId) !== e) return;
    const status = file?.status ?? null;
    // Busy and idle are decided now. Anything else (a menu, a question) is decided with a fresh screen,
    // which says what it asks: the capture asked for below (or by the resumed output) reads both.
    if (status !== e.lastFileStatus && (status === 'busy' || status === 'idle')) {
      e.lastFileStatus = status;
      this.decide(e, at, file);
    } else if (status !== e.lastFileStatus) this.want(e, 0, true, 'state-file');
    if (status === 'busy' && !e.dead && !e.held) this.pauseOutput(e);
    else this.resumeOutput(e);
    // No capture for it: what the screen shows besides (a menu, the turn's summary) is drawn, and that
    // output asks for one.
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
    this.resumeOutput(e);
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
    this.resumeOutput(e);
    this.unwatchStateFile(e);
    e.lastScreen = null;
    e.lastFileStatus = null;
    e.raw = [];
    e.rawLength = 0;
    e.lastFile = null;
    e.tail = '';
    e.evidenceAt = Number.NEGATIVE_INFINITY;
    const restarted = (p: number | null) => {
      if (p) e.pane = { ...e.pane, pid: p };
      e.actor.send({ type: 'PANE_RESTARTED', at: this.now() });
      this.want(e, 0, true, 'restart');
    };
    if (pid) restarted(pid);
    else void paneField(this.cmd, e.pane.paneId, '#{pane_pid}').then((p) => restarted(p ? Number(p) : null));
  }

  private onNotification(name: string, args: string[]): void {
    if (name === 'pause') {
      // tmux paused a pane whose output to us fell pauseAfterS behind: read its screen, then go on.
      const e = this.entries.get(args[0] ?? '');
      if (e && !e.paused) {
        void this.client.run(['refresh-client', '-A', `${e.pane.paneId}:continue`]).catch(() => {});
        this.want(e, 0, true, 'behind');
      }
      return;
    }
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
          this.resumeOutput(e);
          e.dead = true;
          e.actor.send({ type: 'PANE_EXITED', at: this.now(), exitStatus: null });
        }
      }
    }
  }
}
