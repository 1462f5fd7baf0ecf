import { createActor, type Actor } from 'xstate';
import { publicStatus, terminalMachine, type TerminalContext, type TerminalStatus } from '../../machines/terminal.machine.js';
import { HOOKS } from '../clis/kinds.js';
import type { HookSignal } from '../clis/types.js';
import { classify, classifyAfterLimit, doneEvidence, type Classification } from '../detect/classify.js';
import { rank, type HookWord } from '../detect/rank.js';
import { capturePane } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { CaptureScheduler, type PaneCaptures } from './capture-scheduler.js';
import { realClock, withNow, type Clock, type TimerHandle } from './clock.js';
import { DeathTracker, type PaneLife } from './death-tracker.js';
import { FlowControl, type PaneFlow } from './flow-control.js';
import type { HookCall } from './hook-spool.js';
import { OutputTail } from './output-tail.js';
import { StateFiles, type PaneStateFile } from './state-files.js';
import type { HookEnd, HookView, StatusChange, WatchedPane, WatcherOptions } from './types.js';

export type { HookEnd, HookView, StatusChange, WatchedPane, WatcherOptions } from './types.js';

/** One watched pane: its machine, and its part in each piece. */
interface Entry {
  pane: WatchedPane;
  actor: Actor<typeof terminalMachine>;
  output: OutputTail;
  schedule: PaneCaptures;
  file: PaneStateFile;
  flow: PaneFlow;
  life: PaneLife;
  /** The last status change reported (status and turns), to report each once. */
  last: string | null;
  /** The last screen classified and the last readings, to skip unchanged ones. */
  lastScreen: string | null;
  lastScreenClass: Classification | null;
  lastFileStatus: string | null;
  lastFile: Classification | null;
  /** A headless turn holds the pane: its screen (a placeholder) says nothing; the state stays busy. */
  held: boolean;
  hooks: PaneHooks;
  /** A state file change left unread while the hooks decide: when it came, and the look at it one grace later. */
  fileChangedAt: number;
  fileCheck: TimerHandle | null;
  /** The last change left unread (its number among the file's changes; 0: none). */
  fileSkipped: number;
}

/** What a pane's hooks said (issue 27), for ranking, the turn engine and `why`. */
interface PaneHooks {
  /** The hooks' word that readings of the screen and state file are ranked against. */
  word: HookWord | null;
  /** Cancels the look again at the end of a quiet reading's grace. */
  timer: (() => void) | null;
  /** Calls of the bridge for this pane (not counting stale ones), and that count when the open turn began. */
  calls: number;
  callsAtOpen: number;
  turnOpen: boolean;
  turns: number;
  lastEvent: { event: string; at: number } | null;
  session: string | null;
  /** While a bridge call is applied: when it started (ms since the epoch), for the status change it makes. */
  firedAt: number | null;
  /** Turn ends a hook reported, newest last (a few): the turn engine takes the reply from them. */
  ends: HookEnd[];
  warning: string | null;
  /** The pane's program was started with its hooks installed (read when it is watched and when it restarts). */
  installed: boolean;
  /** A hook started the turn now open; `missedStart`: the last turn a hook ended had no start by a hook (codex's notify). */
  startedTurn: boolean;
  missedStart: boolean;
  /** The bridge was called by the program the pane runs now (its hooks work on this release). */
  heard: boolean;
}

/**
 * While a hook says a turn is busy, the screen is read once the output stopped this long: a turn's end
 * (its hook on the way, up to a few hundred ms on a starved machine), a menu (a permission hook on the
 * way) or a turn the CLI ended with no end event. Only the last needs the screen, and a screen quiet
 * under a hook's busy is held for the hook grace anyway (rank), so the look need not be early: at 150 ms
 * it read nearly every turn's end before the hook came (BENCHMARKS.md, "captures per status change").
 */
const HOOKED_BUSY_QUIET_MS = 1000;

/** After a prompt on a pane whose turns start by a hook, the screen is read if that hook has not come by then. */
const START_LOOK_MS = 150;

/** How long, and how many, bridge calls for a terminal not watched yet are kept for its pane. */
const EARLY_KEEP_MS = 10_000;
const EARLY_KEEP_CALLS = 16;
const EARLY_KEEP_TERMINALS = 64;

/** A profile without detection rules: nothing on screen can say more than "running", shown as idle. */
const NO_RULES: Classification = { status: 'idle', rule: 'no-rules (the profile has no detect rules)', lines: [] };

/**
 * Turns tmux output into terminal states, driven only by events, with the work bounded:
 * - The CLI's state file (inotify, StateFiles) decides busy and idle the moment it changes, with no
 *   capture, and pauses the busy pane's output meanwhile (FlowControl).
 * - Output that says busy by itself (a spinner frame, the profile's `outputBusy`) needs no capture.
 * - Other output asks for a capture (CaptureScheduler: one in flight per pane, shared slots, panes in
 *   doubt first, a busy pane at most every `busyGapMs`, and once the output stops, a pane whose last
 *   output no capture saw is captured once). While a hook's word stands (a turn started, or ended
 *   and the screen has not caught up), output only arms that once-when-it-stops capture; on a pane
 *   whose turns start by a hook, one idle by its hooks is looked at only after the hook grace.
 * Pane deaths come from a tmux subscription (DeathTracker). Nothing runs while nothing is printed.
 */
export class PaneWatcher {
  private readonly entries = new Map<string, Entry>();
  /** Bridge calls for a terminal no watched pane has yet (a CLI's SessionStart at launch), by terminal id. */
  private readonly early = new Map<string, { call: HookCall; at: number }[]>();
  private readonly listeners = new Set<(c: StatusChange) => void>();
  private readonly sessionListeners = new Set<(pane: WatchedPane, sessionId: string) => void>();
  private readonly screenListeners = new Set<(paneId: string, screen: string) => void>();
  private readonly hookWarningListeners = new Set<(pane: WatchedPane, warning: string) => void>();
  private readonly hooksBackListeners = new Set<(pane: WatchedPane, warning: string) => void>();
  private readonly toolListeners = new Set<(pane: WatchedPane, tool: string, input: string) => void>();
  private readonly hookGraceMs: number;
  private readonly limitWaitMs: number | undefined;
  private readonly hooksInstalled: (pane: WatchedPane) => boolean;
  private readonly offs: (() => void)[] = [];
  /** Where captures and queries go: a connection without pane output keeps them out of its backlog. */
  private readonly cmd: ControlClient;
  private readonly clock: Clock;
  private readonly now: () => number;
  private readonly scheduler: CaptureScheduler;
  private readonly stateFiles: StateFiles;
  private readonly flow: FlowControl;
  private readonly deaths: DeathTracker;
  captures = 0;

  /** `client` delivers pane output and notifications; see WatcherOptions for the rest. */
  constructor(
    private readonly client: ControlClient,
    options: WatcherOptions = {},
  ) {
    this.cmd = options.commands ?? client;
    const clock = options.clock ?? realClock;
    this.clock = options.now ? withNow(clock, options.now) : clock;
    this.now = () => this.clock.now();
    this.scheduler = new CaptureScheduler(this.clock, {
      maxCaptures: options.maxCaptures ?? 4,
      frameMs: options.frameMs ?? 25,
      evidenceMs: options.evidenceMs ?? 200,
      quietMs: options.quietMs ?? 150,
      busyGapMs: options.busyGapMs ?? 100,
    });
    this.stateFiles = new StateFiles(options.stateFiles);
    this.hookGraceMs = options.hookGraceMs ?? 3000;
    this.limitWaitMs = options.limitWaitMs;
    this.hooksInstalled = options.hooksInstalled ?? (() => true);
    this.flow = new FlowControl(client, this.clock, {
      pauseBusy: options.pauseBusy ?? true,
      pausedCheckMs: options.pausedCheckMs ?? 2000,
      // Off: in one of two 100-agent runs without state files, panes tmux paused this way stopped sending
      // to the watcher altogether (218 turns timed out) with no %pause seen; see BENCHMARKS.md.
      pauseAfterS: options.pauseAfterS ?? 0,
    });
    this.deaths = new DeathTracker(client, this.cmd);
    this.offs.push(client.onOutput((paneId, data) => this.onOutput(paneId, data)));
    this.offs.push(
      client.onNotification((name, args) => {
        this.flow.notification(name, args);
        this.deaths.notification(name, args);
      }),
    );
  }

  /** Captures sent, by what asked for them (start, output, quiet, restart, again): for benchmarks. */
  get captureReasons(): Record<string, number> {
    return this.scheduler.reasons;
  }

  /** Subscribe to pane deaths once per connection (and set tmux's pause-after when asked for). */
  async start(): Promise<void> {
    await this.deaths.start();
    await this.flow.start();
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

  /**
   * A pane whose profile has hooks finished a turn the screen saw with no hook call during it (hooks
   * disabled, an older release): it falls back to the screen, and this says so once per pane.
   */
  onHookWarning(l: (pane: WatchedPane, warning: string) => void): () => void {
    this.hookWarningListeners.add(l);
    return () => this.hookWarningListeners.delete(l);
  }

  /**
   * A pane warned of above whose hooks called again: they were late, not gone (seen on a starved machine,
   * where a turn's calls can land after the screen ended it). Its hooks decide again; `warning` is the
   * one taken back.
   */
  onHooksBack(l: (pane: WatchedPane, warning: string) => void): () => void {
    this.hooksBackListeners.add(l);
    return () => this.hooksBackListeners.delete(l);
  }

  /** A tool call the pane's CLI is about to make, from its pre-tool-use hook (the watchdog's loop check). */
  onTool(l: (pane: WatchedPane, tool: string, input: string) => void): () => void {
    this.toolListeners.add(l);
    return () => this.toolListeners.delete(l);
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
      input: {
        settleMs: d.settleMs,
        startSettleMs: d.startSettleMs,
        doneNeedsEvidence: d.doneNeedsEvidence,
        at: this.now(),
        ...(this.limitWaitMs !== undefined ? { limitWaitMs: this.limitWaitMs } : {}),
      },
      clock: this.clock,
    });
    const entry: Entry = {
      pane,
      actor,
      output: new OutputTail(),
      schedule: this.scheduler.add({
        budgeted: Boolean(d.stateFile),
        framed: d.outputBusy.length > 0,
        busy: () => this.status(pane.paneId) === 'busy',
        capture: (sentAt) => this.read(entry, sentAt),
      }),
      file: this.stateFiles.add({
        kind: d.stateFile,
        pid: () => entry.pane.pid,
        changed: () => void this.onStateFile(entry),
        session: (sessionId) => {
          // A session a hook reported outranks the state file's.
          if (entry.hooks.session) return;
          for (const l of this.sessionListeners) l(entry.pane, sessionId);
        },
      }),
      flow: this.flow.add(pane.paneId, {
        check: () => this.scheduler.want(entry.schedule, 0, false, 'paused-check'),
        resumed: () => this.scheduler.want(entry.schedule, 0, true, 'continue'),
        behind: () => this.scheduler.want(entry.schedule, 0, true, 'behind'),
      }),
      life: this.deaths.add(pane.paneId, pane.windowId, {
        held: () => entry.held,
        pid: () => entry.pane.pid,
        dying: () => this.flow.resume(entry.flow),
        exited: (exitStatus) => entry.actor.send({ type: 'PANE_EXITED', at: this.now(), exitStatus }),
        placeholder: (pid) => {
          if (pid) entry.pane = { ...entry.pane, pid };
        },
        restarting: () => this.restarting(entry),
        restarted: (pid) => {
          if (pid) entry.pane = { ...entry.pane, pid };
          entry.hooks.installed = this.installedFor(entry.pane);
          entry.actor.send({ type: 'PANE_RESTARTED', at: this.now() });
          this.scheduler.want(entry.schedule, 0, true, 'restart');
        },
      }),
      last: null,
      lastScreen: null,
      lastScreenClass: null,
      lastFileStatus: null,
      lastFile: null,
      held: false,
      fileChangedAt: 0,
      fileCheck: null,
      fileSkipped: 0,
      hooks: {
        word: null,
        timer: null,
        calls: 0,
        callsAtOpen: 0,
        turnOpen: false,
        turns: 0,
        lastEvent: null,
        session: null,
        firedAt: null,
        ends: [],
        warning: null,
        installed: this.installedFor(pane),
        startedTurn: false,
        missedStart: false,
        heard: false,
      },
    };
    this.entries.set(pane.paneId, entry);
    actor.subscribe((snap) => {
      this.noteTurn(entry, snap.context.turnOpen, snap.context.turns);
      this.catchUp(entry);
      this.syncFlow(entry);
      const status = publicStatus(snap.value as TerminalStatus);
      // A new limit (another reset time) while limited is a change too.
      const key = `${status}|${snap.context.turns}${status === 'limited' ? `|${snap.context.limit?.until}` : ''}`;
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
        ...(status === 'limited' ? { limit: snap.context.limit } : {}),
        ...(entry.hooks.firedAt !== null && snap.context.source === 'hook' ? { hookFiredAt: entry.hooks.firedAt } : {}),
      };
      for (const l of this.listeners) l(change);
    });
    actor.start();
    this.scheduler.want(entry.schedule, 0, true, 'start');
    // Calls its CLI made before the pane was watched (at launch) are applied now, in order.
    const early = pane.terminalId ? this.early.get(pane.terminalId) : undefined;
    if (early && pane.terminalId) {
      this.early.delete(pane.terminalId);
      const now = this.now();
      for (const x of early) if (now - x.at <= EARLY_KEEP_MS) this.hookCall(x.call);
    }
  }

  /** A call for a terminal not watched (yet): kept a while for its pane (bounded), and said so. */
  private keepEarly(call: HookCall): string {
    const now = this.now();
    const list = (this.early.get(call.terminalId) ?? []).filter((x) => now - x.at <= EARLY_KEEP_MS);
    if (list.length >= EARLY_KEEP_CALLS) return `no watched pane has terminal id ${call.terminalId}, and ${EARLY_KEEP_CALLS} of its calls wait already`;
    list.push({ call, at: now });
    this.early.delete(call.terminalId);
    this.early.set(call.terminalId, list);
    // The terminals waited for longest go first when too many wait (ids of panes that never come).
    for (const id of this.early.keys()) {
      if (this.early.size <= EARLY_KEEP_TERMINALS) break;
      this.early.delete(id);
    }
    return `no watched pane has terminal id ${call.terminalId} (yet): kept ${EARLY_KEEP_MS / 1000} s for its pane`;
  }

  unwatch(paneId: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    this.stateFiles.remove(e.file);
    this.clearFileCheck(e);
    this.clearHookTimer(e);
    this.flow.resume(e.flow);
    this.scheduler.remove(e.schedule);
    this.flow.remove(e.flow);
    this.deaths.remove(e.life);
    e.actor.stop();
    this.entries.delete(paneId);
  }

  /**
   * Tell the machine a prompt went in (delivery does this after pressing Enter). `screenBefore`: the
   * screen delivery read before typing: a turn summary on it is the last turn's, not this prompt's.
   */
  inputSent(paneId: string, screenBefore?: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    const h = e.hooks;
    // A hook's turn end no longer holds back busy readings: the next turn's may come now. On a pane
    // whose turns start by a hook the word stays (confirmed), so output still asks only a late look,
    // until that hook comes; without it within the grace, the screen decides again.
    if ((h.word === null || h.word.status === 'done') && this.startsByHook(e)) {
      const word: HookWord = h.word ?? { status: 'done', event: 'a prompt', quietSince: null, since: this.now() };
      // Typed while the screen still read busy (delivery waited the grace for it to catch up): a busy
      // screen now proves nothing, so it opens a turn only once it stayed busy for the grace, and the
      // word is kept until then (CI: opencode 1.18.33's stale busy footer read as this prompt's start,
      // its quiet screen 3 s later as the turn's end, and its start hook 3.5 s after that as a second turn).
      const busyBefore = screenBefore !== undefined && this.classifyText(e, screenBefore).status === 'busy';
      word.confirmed = true;
      word.byPrompt = !busyBefore;
      word.busySince = null;
      h.word = word;
      this.clearHookTimer(e);
      // A hook held up on a starved machine (seen: 0.6 s at 100 agents): the screen has a look meanwhile.
      this.scheduler.want(e.schedule, START_LOOK_MS, false, 'start-look');
      if (busyBefore) {
        e.actor.send({ type: 'INPUT_SENT', at: this.now(), doneBefore: this.doneBefore(e, screenBefore) });
        return;
      }
      const t = this.clock.setTimeout(() => {
        h.timer = null;
        if (this.entries.get(e.pane.paneId) !== e || h.word !== word) return;
        h.word = null;
        this.scheduler.want(e.schedule, 0, true, 'no-start-hook');
        this.catchUp(e);
      }, this.hookGraceMs);
      h.timer = () => this.clock.clearTimeout(t);
    } else if (h.word?.status === 'done') h.word = null;
    e.actor.send({ type: 'INPUT_SENT', at: this.now(), doneBefore: this.doneBefore(e, screenBefore) });
  }

  /** The turn summary on the screen read before a prompt was typed (undefined: no such screen). */
  private doneBefore(e: Entry, screenBefore: string | undefined): string | null | undefined {
    if (screenBefore === undefined) return undefined;
    return doneEvidence({
      screen: screenBefore,
      rules: e.pane.profile.detect.rules,
      get raw() {
        return e.output.text();
      },
    });
  }

  /** What the profile's rules read on `screen` (the pane's raw output only if a rule asks for it). */
  private classifyText(e: Entry, screen: string): Classification {
    return classify({
      screen,
      rules: e.pane.profile.detect.rules,
      get raw() {
        return e.output.text();
      },
    });
  }

  /**
   * One call of a CLI's hook bridge (from the spool): read by the pane's profile's HookKit and its
   * signals applied. Returns why it was skipped, or null.
   */
  hookCall(call: HookCall): string | null {
    const e = this.byTerminal(call.terminalId);
    if (!e) return this.keepEarly(call);
    const kind = e.pane.profile.detect.hooks;
    if (!kind) return `profile ${e.pane.profile.name} of ${e.pane.agent} has no detect.hooks`;
    let signals: HookSignal[];
    try {
      signals = HOOKS[kind].read(call.event, call.payload);
    } catch (err) {
      return `the ${kind} hook kit could not read its ${call.event} payload: ${(err as Error).message}`;
    }
    if (!call.stale) {
      e.hooks.heard = true;
      e.hooks.calls++;
      e.hooks.lastEvent = { event: call.event, at: this.now() };
      const warned = e.hooks.warning;
      if (warned !== null) {
        e.hooks.warning = null;
        for (const l of this.hooksBackListeners) l(e.pane, warned);
      }
    }
    e.hooks.firedAt = Number(call.ns / 1000n) / 1000;
    try {
      for (const sig of signals) this.applyHook(e, sig, call.event, call.stale);
    } finally {
      e.hooks.firedAt = null;
    }
    return null;
  }

  /**
   * Feed one HookSignal to a terminal's pane (the spool does it for every bridge call; tests and other
   * sources may too): the strongest evidence for busy, done, waiting and the session id. `stale`: left
   * from before the supervisor started: only its session counts. False when no pane has that id.
   */
  hookSignal(terminalId: string, signal: HookSignal, event: string, stale = false): boolean {
    const e = this.byTerminal(terminalId);
    if (!e) return false;
    this.applyHook(e, signal, event, stale);
    return true;
  }

  /** The first turn end a hook reported after `turnsBefore` closed turns (its reply, where the payload held it). */
  hookEnd(paneId: string, turnsBefore: number): HookEnd | null {
    return this.entries.get(paneId)?.hooks.ends.find((h) => h.turn > turnsBefore) ?? null;
  }

  /** The pane's profile has hooks, they were installed, and no turn passed without a call of them. */
  hooksExpected(paneId: string): boolean {
    const e = this.entries.get(paneId);
    return Boolean(e?.hooks.installed && !e.hooks.warning);
  }

  /** When the pane's hooks last called the bridge (ms since the epoch), or null. */
  lastHookAt(paneId: string): number | null {
    return this.entries.get(paneId)?.hooks.lastEvent?.at ?? null;
  }

  /** What the pane's hooks did, for `why`: null when its profile has none. */
  hookView(paneId: string): HookView | null {
    const e = this.entries.get(paneId);
    const kind = e?.pane.profile.detect.hooks;
    if (!e || !kind) return null;
    return {
      kind,
      installed: e.hooks.installed,
      calls: e.hooks.calls,
      lastEvent: e.hooks.lastEvent ? { event: e.hooks.lastEvent.event, at: new Date(e.hooks.lastEvent.at).toISOString() } : null,
      warning: e.hooks.warning,
    };
  }

  /**
   * The turn's reply (its transcript, hook or headless output) is a usage limit's message: the agent is
   * `limited` as if its screen showed it (unless it already is: the screen said so first).
   */
  limitSeen(paneId: string, lines: string[], by: string): void {
    const e = this.entries.get(paneId);
    if (!e || e.actor.getSnapshot().value === 'limited') return;
    e.actor.send({ type: 'SCREEN', at: this.now(), classification: { status: 'limited', rule: `usage-limit (the reply, by ${by})`, lines }, source: 'turn' });
  }

  /** Tell the machine the turn engine confirmed the open turn's end (transcript or screen evidence). */
  confirmTurn(paneId: string, by: string): void {
    const e = this.entries.get(paneId);
    // A turn already closed (its hook's end came first) has nothing to confirm: every state ignores it then.
    if (!e?.actor.getSnapshot().context.turnOpen) return;
    e.actor.send({ type: 'TURN_CONFIRMED', at: this.now(), by });
  }

  /**
   * A headless turn runs the agent's CLI outside its pane: the pane's own program is stopped meanwhile.
   * The machine shows busy (rule `reason`) and ignores the pane until `release`, which starts it over.
   */
  hold(paneId: string, reason: string): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    e.held = true;
    this.flow.resume(e.flow);
    e.actor.send({ type: 'SCREEN', at: this.now(), classification: { status: 'busy', rule: reason, lines: [] }, source: 'screen' });
  }

  release(paneId: string, pid: number | null): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    e.held = false;
    this.deaths.restart(e.life, pid);
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

  /**
   * How long the screen may still lag behind a hook's turn end: a hook said the turn ended and no quiet
   * reading of the screen came since (opencode drew its busy footer for over a second after
   * session.idle on a loaded machine, and dropped a prompt typed meanwhile). The ms left of the grace
   * (0: not behind); the screen is looked at soon, so a quiet one ends the wait.
   */
  screenBehind(paneId: string): number {
    const e = this.entries.get(paneId);
    const word = e?.hooks.word;
    if (!e || word?.status !== 'done' || word.confirmed || e.life.dead || e.held) return 0;
    const left = (word.since ?? this.now()) + this.hookGraceMs - this.now();
    if (left <= 0) return 0;
    this.scheduler.want(e.schedule, 0, true, 'catch-up');
    return left;
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
      const timer = this.clock.setTimeout(() => {
        off();
        reject(new Error(`still ${this.status(paneId) ?? 'unknown'} after ${timeoutMs} ms (waited for ${statuses.join(' or ')})`));
      }, timeoutMs);
      const off = this.onChange((c) => {
        if (c.pane.paneId === paneId && statuses.includes(c.status)) {
          this.clock.clearTimeout(timer);
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

  /** What tmux says of a pane now (from a fresh list-panes): see DeathTracker.sync. */
  sync(paneId: string, now: { dead: boolean; pid: number | null }): void {
    this.deaths.sync(paneId, now);
  }

  private onOutput(paneId: string, data: Buffer): void {
    const e = this.entries.get(paneId);
    if (!e) return;
    // Kept as strings: a Buffer here would be a view that keeps tmux's whole read buffer alive.
    const text = data.toString('utf8');
    e.output.push(text);
    const at = this.now();
    if (e.output.saysBusy(text, e.pane.profile.detect.outputBusy)) {
      this.scheduler.busyOutput(e.schedule, at);
      // The state file, where the CLI writes one, decides busy and idle: output may lag it by a second.
      // After a hook's turn end, busy output is the screen lagging behind it (rank() holds it too), also
      // once the screen caught up where turns start by a hook: tmux may hand over the turn's last frame
      // on the output connection after a capture on the other one read the quiet screen (seen 370 ms
      // late at 100 agents, and a turn that never ran). The late look reads the screen as it is.
      const word = e.hooks.word;
      if (
        !e.life.dead &&
        !e.held &&
        e.lastFileStatus === null &&
        (word === null || (word.confirmed && !(word.status === 'done' && this.startsByHook(e)))) &&
        this.status(paneId) !== 'busy'
      ) {
        e.actor.send({ type: 'SCREEN', at, classification: { status: 'busy', rule: 'outputBusy (the output says busy)', lines: [] }, source: 'output' });
      }
      if (word?.status === 'busy') this.scheduler.armQuiet(e.schedule, HOOKED_BUSY_QUIET_MS, 'quiet-hooked');
      else this.scheduler.armQuiet(e.schedule, undefined, this.idleByHooks(e) ? 'quiet-idle-hooked' : word?.status ? 'quiet-hooked' : 'quiet');
      return;
    }
    // A hook decided the state: the screen is read once the output stops, not for every chunk of it
    // (captures per status change with hooks, BENCHMARKS.md "Native hooks").
    // After a permission hook the menu being drawn is read at once: its question goes with the state.
    // A pane idle by its hooks (a turn ended, or none began yet, and the next one starts by a hook) is
    // looked at only once its output has stopped for the grace: typing in its box changes no state.
    const word = e.hooks.word;
    if (this.idleByHooks(e)) this.scheduler.hookedOutput(e.schedule, at, this.hookGraceMs, 'late-look');
    else if (word?.status === 'busy') this.scheduler.hookedOutput(e.schedule, at, HOOKED_BUSY_QUIET_MS, 'quiet-hooked');
    else if (word?.status === 'done') this.scheduler.hookedOutput(e.schedule, at, undefined, 'quiet-hooked');
    else this.scheduler.output(e.schedule, at);
  }

  /** One capture of the pane (sent at `sentAt`) and one reading of its state file, classified and given to its machine. */
  private async read(e: Entry, sentAt: number): Promise<void> {
    let screen: string;
    try {
      screen = await capturePane(this.cmd, e.pane.paneId);
      this.captures++;
    } catch {
      return; // the pane is gone: the death notification says so
    }
    if (this.entries.get(e.pane.paneId) !== e) return; // unwatched meanwhile
    this.scheduler.screenSeen(e.schedule, sentAt);
    const at = this.now();
    // On a pane whose hooks fire, a state file that did not change since its last reading is not read again.
    const cached = this.hooksExpected(e.pane.paneId) && !this.stateFiles.unread(e.file);
    const file = cached ? e.file.last : await this.stateFiles.readInOrder(e.file);
    if (!cached) this.syncFlow(e);
    // The machine moved on while the state file was read (a turn confirmed, a prompt sent): this
    // reading is older than that, and read again rather than applied (a stale busy would open a turn).
    if (e.actor.getSnapshot().context.since > at) {
      this.scheduler.readAgain(e.schedule, 'moved-on');
      return;
    }
    // An unchanged screen with an unchanged file says nothing new (and must not restart a settle wait),
    // unless this reading took in a change left unread while the hooks decided: the file may have said
    // something else between (a turn's busy), and its idle now is news.
    if (screen === e.lastScreen && (file?.status ?? null) === e.lastFileStatus && (cached || !this.tookInSkipped(e))) return;
    e.lastScreen = screen;
    e.lastScreenClass = e.pane.profile.detect.rules.length
      ? classifyAfterLimit(
          {
            screen,
            rules: e.pane.profile.detect.rules,
            get raw() {
              return e.output.text();
            },
          },
          e.actor.getSnapshot().context.limitPassed,
        )
      : NO_RULES;
    e.lastFileStatus = file?.status ?? null;
    e.lastFile = file;
    this.decide(e, at, file, true);
    for (const l of this.screenListeners) l(e.pane.paneId, screen);
  }

  /** Rank the last readings and hand the result to the machine; `fresh`: the screen was read just now. */
  private decide(e: Entry, at: number, file: Classification | null, fresh = false): void {
    if (!e.lastScreenClass || e.life.dead || e.held) return;
    // A menu or an error on a screen read before the pane's latest output (a state file's change, a
    // grace that ended) may be gone by now (a menu answered, its turn ended): read the screen again first.
    const shown = e.lastScreenClass.status;
    const h = e.hooks;
    // So may a busy screen held after the screen caught up with a hook's turn end (a late frame of the
    // busy footer, quiet again since).
    const heldBusy = shown === 'busy' && h.word?.status === 'done' && h.word.confirmed === true && h.word.byPrompt !== true;
    if (!fresh && e.schedule.unjudged && (shown === 'waiting_input' || shown === 'error' || heldBusy)) {
      this.scheduler.want(e.schedule, 0, true, 'stale-screen');
      return;
    }
    if (h.word?.status === 'waiting' && !h.word.menuSeen && at - (h.word.since ?? at) >= this.hookGraceMs) {
      // The CLI asked for a permission and no menu its profile knows came: the hook's word decides.
      h.word.menuSeen = true;
      this.clearHookTimer(e);
      e.actor.send({ type: 'HOOK', at, status: 'waiting_input', rule: `hook ${h.word.event}` });
      return;
    }
    const r = rank(e.lastScreenClass, file, h.word, at, this.hookGraceMs);
    if (r.kind === 'hold') {
      if (h.word?.status === 'busy' || h.word?.status === 'waiting' || h.word?.status === 'done') {
        if (r.until === null) {
          h.word.quietSince = null;
          this.clearHookTimer(e);
        } else {
          if (h.word.status === 'busy') h.word.quietSince ??= at;
          if (h.word.status === 'done' && h.word.confirmed) h.word.busySince ??= at;
          // A screen that stays as it is is not captured again: look again when the grace ends.
          if (!h.timer) {
            const t = this.clock.setTimeout(
              () => {
                h.timer = null;
                if (this.entries.get(e.pane.paneId) === e) this.decideAgain(e);
              },
              Math.max(0, r.until - at),
            );
            h.timer = () => this.clock.clearTimeout(t);
          }
        }
      }
      return;
    }
    // A screen no rule knows (one drawn in part, under load) says nothing: the hook's word stands. Except
    // while a start settles: a cleared screen then means the CLI is still drawing (gemini resuming).
    if (r.c.status === 'unknown' && e.actor.getSnapshot().value !== 'booting') return;
    const quiet = r.c.status === 'idle' || r.c.status === 'done';
    // The screen took over: after a turn start, a menu, an error or a quiet screen past the grace; after
    // a turn end, the first quiet reading (the screen caught up).
    if (h.word?.status === 'waiting' && r.c.status === 'waiting_input') h.word.menuSeen = true;
    // The screen caught up with a hook's turn end, and the next turn starts by a hook: the word stays.
    else if (h.word?.status === 'done' && quiet && this.startsByHook(e)) {
      h.word.confirmed = true;
      h.word.busySince = null;
    }
    // Busy on screen after the screen had caught up: a turn no hook started (yet): the screen decides.
    else if (h.word && (h.word.status === 'busy' || h.word.status === 'waiting' || quiet || h.word.confirmed)) {
      h.word = null;
      this.clearHookTimer(e);
    }
    e.actor.send({ type: 'SCREEN', at, classification: r.c, source: r.source });
    this.catchUp(e);
  }

  private byTerminal(terminalId: string): Entry | undefined {
    for (const e of this.entries.values()) if (e.pane.terminalId === terminalId) return e;
    return undefined;
  }

  private applyHook(e: Entry, sig: HookSignal, event: string, stale: boolean): void {
    const h = e.hooks;
    if (sig.sessionId && sig.sessionId !== h.session) {
      h.session = sig.sessionId;
      for (const l of this.sessionListeners) l(e.pane, sig.sessionId);
    }
    if (stale || e.life.dead || e.held || sig.kind === 'session') return;
    if (sig.kind === 'tool') {
      for (const l of this.toolListeners) l(e.pane, sig.tool, sig.input);
      return;
    }
    const at = this.now();
    const rule = `hook ${event}`;
    this.clearHookTimer(e);
    if (sig.kind === 'turn-start') {
      this.scheduler.withdraw(e.schedule, 'start-look');
      h.startedTurn = true;
      h.missedStart = false;
      h.word = { status: 'busy', event, quietSince: null };
      e.actor.send({ type: 'HOOK', at, status: 'busy', rule });
      this.syncFlow(e);
    } else if (sig.kind === 'turn-end') {
      if (!h.startedTurn) h.missedStart = true;
      h.startedTurn = false;
      const before = e.actor.getSnapshot().context.turns;
      h.word = { status: 'done', event, quietSince: null, since: at };
      // Recorded before the state change goes out: a listener of it (the turn engine) finds the turn's
      // end and its reply, and reads no transcript for it. Taken back if the machine closed no turn.
      const end: HookEnd = {
        turn: before + 1,
        event,
        ...(sig.reply !== undefined ? { reply: sig.reply } : {}),
        ...(sig.transcriptPath ? { transcriptPath: sig.transcriptPath } : {}),
      };
      h.ends.push(end);
      e.actor.send({ type: 'HOOK', at, status: 'done', rule });
      if (e.actor.getSnapshot().context.turns === before) h.ends.splice(h.ends.indexOf(end), 1);
      else if (h.ends.length > 8) h.ends.shift();
      this.syncFlow(e);
      // The rest of the turn's output (its last frames) asks only for the late look.
      if (this.startsByHook(e)) this.scheduler.armQuiet(e.schedule, this.hookGraceMs, 'late-look');
    } else {
      // A permission request: the screen is read at once, and waiting_input comes with the menu's
      // question and choices when it shows (the hook fires before the CLI draws it; a reading without it
      // is the screen lagging, held by rank), or from the hook alone once the grace passed without one.
      // From the menu on, the screen decides (the answer has no hook event: approved work shows busy, a
      // denial ends with no end event).
      h.word = { status: 'waiting', event, quietSince: null, since: at, menuSeen: false };
      this.syncFlow(e);
      const t = this.clock.setTimeout(() => {
        h.timer = null;
        if (this.entries.get(e.pane.paneId) === e) this.decideAgain(e);
      }, this.hookGraceMs);
      h.timer = () => this.clock.clearTimeout(t);
      this.scheduler.want(e.schedule, 0, true, 'hook');
    }
  }

  /** A turn opened or closed on the pane's machine: a turn the hooks said nothing of is warned of once. */
  private noteTurn(e: Entry, turnOpen: boolean, turns: number): void {
    const h = e.hooks;
    if (turnOpen && !h.turnOpen) h.callsAtOpen = h.calls;
    h.turnOpen = turnOpen;
    if (turns <= h.turns) return;
    h.turns = turns;
    const kind = e.pane.profile.detect.hooks;
    if (!kind || h.warning || h.calls > h.callsAtOpen || !h.installed) return;
    h.warning = `no ${kind} hook event came during turn ${turns} of ${e.pane.agent} (hooks disabled in the CLI, or a release without them): its state comes from the state file and the screen`;
    for (const l of this.hookWarningListeners) l(e.pane, h.warning);
  }

  private clearFileCheck(e: Entry): void {
    if (e.fileCheck !== null) this.clock.clearTimeout(e.fileCheck);
    e.fileCheck = null;
  }

  private clearHookTimer(e: Entry): void {
    e.hooks.timer?.();
    e.hooks.timer = null;
  }

  /**
   * Idle, and its next turn starts by a hook: a turn a hook ended (or a prompt went in since), or none
   * yet on an idle pane whose hooks have called (a SessionStart at launch).
   */
  private idleByHooks(e: Entry): boolean {
    const word = e.hooks.word;
    if (word?.status === 'done') return word.confirmed === true || this.startsByHook(e);
    if (word !== null || !e.hooks.heard || !this.startsByHook(e)) return false;
    const status = this.status(e.pane.paneId);
    return status === 'idle' || status === 'done';
  }

  /**
   * The pane's turns start by a hook: its hooks are installed, no turn passed without a call of them, and
   * the last turn a hook ended was started by one too (a CLI that reports only ends, codex's `notify`,
   * is read as before from its first turn's end).
   */
  private startsByHook(e: Entry): boolean {
    return this.hooksExpected(e.pane.paneId) && !e.hooks.missedStart;
  }

  /** The pane's profile has hooks and its program was started with them installed. */
  private installedFor(pane: WatchedPane): boolean {
    return Boolean(pane.profile.detect.hooks) && this.hooksInstalled(pane);
  }

  /**
   * A change of the state file is its own event (inotify, no polling): busy the moment the CLI says
   * so, even if the capture that shows it is still queued, and never a turn lost between readings.
   */
  private onStateFile(e: Entry): void {
    if (!this.hooksDecide(e)) return void this.readStateFile(e);
    // While the pane's hooks decide, its state file's changes are theirs to explain (busy at a turn's
    // start, idle at its end): not read for each change, but with the pane's next capture, once when
    // the hooks stop deciding (catchUp), and at the latest one grace after the change, as of its time
    // (no end event after Esc: the file's idle ends the turn when it would have if read at once).
    e.fileSkipped = e.file.changes;
    e.fileChangedAt = this.now();
    e.fileCheck ??= this.clock.setTimeout(() => {
      e.fileCheck = null;
      if (this.entries.get(e.pane.paneId) === e && this.stateFiles.behind(e.file) && !this.stateFiles.reading(e.file))
        void this.readStateFile(e, false, e.fileChangedAt);
    }, this.hookGraceMs);
  }

  /**
   * Read the state file and apply it. `again`: a grace ended, so the last readings are decided again
   * even when the file says what it said. `changedAt`: when the change read now came (it was left
   * unread): a quiet file after a hook's turn start counts as quiet since then.
   */
  private async readStateFile(e: Entry, again = false, changedAt?: number): Promise<void> {
    const at = this.now();
    const file = await this.stateFiles.readInOrder(e.file);
    if (this.entries.get(e.pane.paneId) !== e) return;
    const status = file?.status ?? null;
    const word = e.hooks.word;
    if (changedAt !== undefined && status === 'idle' && word?.status === 'busy') word.quietSince ??= changedAt;
    // Busy and idle are decided now (also when the file says what it said, if this reading took in a
    // change left unread). Anything else (a menu, a question) is decided with a fresh screen, which says
    // what it asks: the capture asked for below (or by the resumed output) reads both.
    const changed = status !== e.lastFileStatus || this.tookInSkipped(e);
    if (changed && (status === 'busy' || status === 'idle')) {
      e.lastFileStatus = status;
      e.lastFile = file;
      // A change read late is decided now (its time counts where it matters: quietSince above).
      this.decide(e, again || changedAt !== undefined ? this.now() : at, file);
    } else if (changed) this.scheduler.want(e.schedule, 0, true, 'state-file');
    else if (again) this.decide(e, this.now(), e.lastFile);
    this.syncFlow(e);
    // No capture for it: what the screen shows besides (a menu, the turn's summary) is drawn, and that
    // output asks for one.
  }

  /**
   * The pane's hooks decide its turns now, and its state file has nothing to add: its turns start by a
   * hook, the hooks have called, and a turn they started runs, or the pane is idle by them with the
   * screen caught up (or a prompt sent since). Its state file is then not read for each change. Not
   * after a turn end the screen has not caught up with: the file's idle is what catches it up.
   */
  private hooksDecide(e: Entry): boolean {
    if (e.life.dead || e.held || !e.hooks.heard) return false;
    const word = e.hooks.word;
    if (word?.status === 'busy') return this.startsByHook(e);
    if (word?.status === 'done') return word.confirmed === true && this.startsByHook(e);
    return this.idleByHooks(e);
  }

  /**
   * A busy pane's output is paused (its screen looked at every pausedCheckMs) while its state file says
   * busy, or, while its hooks decide, from their turn start on. After their turn end, the file's idle
   * resumes it (as without hooks): the look the resumed output asks for then finds the screen caught up.
   */
  private syncFlow(e: Entry): void {
    const decide = this.hooksDecide(e);
    // Changes left unread are being read (at the hooks' turn end, one grace after them, with the next
    // look): the flow follows that reading, not the one before them.
    if (!decide && this.stateFiles.behind(e.file)) return;
    const busy = decide ? e.hooks.word?.status === 'busy' : e.file.last?.status === 'busy';
    if (busy && e.pane.profile.detect.stateFile && !e.life.dead && !e.held) this.flow.pause(e.flow);
    else this.flow.resume(e.flow);
  }

  /** The reading applied last took in a change left unread (so a status it repeats may still be news). */
  private tookInSkipped(e: Entry): boolean {
    const p = e.file;
    return e.fileSkipped > p.changesRead - p.covered && e.fileSkipped <= p.changesRead;
  }

  /** A grace ended: the last readings are decided again, a state file change left unread read first. */
  private decideAgain(e: Entry): void {
    if (e.pane.profile.detect.stateFile && this.stateFiles.behind(e.file)) void this.readStateFile(e, true);
    else this.decide(e, this.now(), e.lastFile);
  }

  /**
   * The hooks stopped deciding (their turn end, which the screen must catch up with; the screen took
   * over; they went silent): a change they left unread is read once, at once (the file's idle may have
   * come before the hook's turn end, and is what catches the screen up).
   */
  private catchUp(e: Entry): void {
    if (this.stateFiles.behind(e.file) && !this.stateFiles.reading(e.file) && !this.hooksDecide(e)) void this.readStateFile(e);
  }

  /** The pane runs a new program (not a held one): what was known of the old one is forgotten. */
  private restarting(e: Entry): void {
    this.stateFiles.reset(e.file);
    this.flow.resume(e.flow);
    this.clearFileCheck(e);
    this.clearHookTimer(e);
    e.hooks.word = null;
    e.hooks.session = null;
    e.hooks.startedTurn = false;
    e.hooks.missedStart = false;
    e.hooks.heard = false;
    e.lastScreen = null;
    e.lastFileStatus = null;
    e.lastFile = null;
    e.output.reset();
    this.scheduler.forgetEvidence(e.schedule);
  }
}
