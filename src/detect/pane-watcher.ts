import { watch, type FSWatcher } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import stripAnsi from 'strip-ansi';
import { createActor, type Actor } from 'xstate';
import { publicStatus, terminalMachine, type TerminalStatus } from '../../machines/terminal.machine.js';
import type { Profile } from '../profiles/schema.js';
import { capturePane } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import { classify } from './classify.js';
import { combine, homeOfPid, readStateFile, stateFilePath } from './state-file.js';

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
  status: Exclude<TerminalStatus, 'settling'>;
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
  fileWatch: FSWatcher | null;
  sessionId: string | null;
}

const RAW_KEEP = 4096;

/**
 * Turns tmux output into terminal states, driven only by events: a pane's %output triggers a
 * capture (one in flight per pane; output during it coalesces into one more), pane deaths come from
 * a tmux subscription. Nothing runs while nothing is printed.
 */
export class PaneWatcher {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(c: StatusChange) => void>();
  private readonly sessionListeners = new Set<(pane: WatchedPane, sessionId: string) => void>();
  private readonly offs: (() => void)[] = [];
  captures = 0;

  constructor(
    private readonly client: ControlClient,
    private readonly now: () => number = () => performance.timeOrigin + performance.now(),
  ) {
    this.offs.push(client.onOutput((paneId, data) => this.onOutput(paneId, data)));
    this.offs.push(client.onNotification((name, args) => this.onNotification(name, args)));
  }

  /** Subscribe to pane deaths (tmux reports them on its own 1 s timer) once per connection. */
  async start(): Promise<void> {
    // A one-pane subscription never reports changes on tmux 3.3a; `%*` does.
    await this.client.runOk(['refresh-client', '-B', 'jaggers-dead:%*:#{pane_dead}']);
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

  watch(pane: WatchedPane): void {
    if (this.entries.has(pane.paneId)) return;
    const actor = createActor(terminalMachine, { input: { settleMs: pane.profile.detect.settleMs, doneNeedsEvidence: pane.profile.detect.doneNeedsEvidence, at: this.now() } });
    const entry: Entry = { pane, actor, raw: '', inFlight: false, dirty: false, home: null, last: null, dead: false, fileWatch: null, sessionId: null };
    this.entries.set(pane.paneId, entry);
    actor.subscribe((snap) => {
      const status = publicStatus(snap.value as TerminalStatus);
      const key = `${status}|${snap.context.turns}`;
      if (key === entry.last) return;
      entry.last = key;
      const change: StatusChange = {
        pane, status, since: snap.context.since, rule: snap.context.rule, lines: snap.context.lines, source: snap.context.source, turns: snap.context.turns,
      };
      for (const l of this.listeners) l(change);
    });
    actor.start();
    void this.capture(entry);
  }

  unwatch(paneId: string): void {
    this.entries.get(paneId)?.fileWatch?.close();
    this.entries.get(paneId)?.actor.stop();
    this.entries.delete(paneId);
  }

  /** Tell the machine a prompt went in (delivery does this after pressing Enter). */
  inputSent(paneId: string): void {
    this.entries.get(paneId)?.actor.send({ type: 'INPUT_SENT', at: this.now() });
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
          screen = await capturePane(this.client, e.pane.paneId);
          this.captures++;
        } catch {
          return; // the pane is gone: the death notification says so
        }
        const at = this.now();
        const c = classify({ screen, raw: stripAnsi(e.raw), rules: e.pane.profile.detect.rules });
        const kind = e.pane.profile.detect.stateFile;
        let file = null;
        if (kind && e.pane.pid) {
          e.home ??= await homeOfPid(e.pane.pid, os.homedir());
          // The CLI may not have made its state folder yet: try again on each reading until it has.
          if (!e.fileWatch) this.watchStateFile(e, stateFilePath(kind, e.home, e.pane.pid));
          const reading = await readStateFile(kind, e.home, e.pane.pid);
          file = reading.classification;
          if (reading.sessionId && reading.sessionId !== e.sessionId) {
            e.sessionId = reading.sessionId;
            for (const l of this.sessionListeners) l(e.pane, reading.sessionId);
          }
        }
        const { c: decided, source } = combine(c, file);
        if (decided.status !== 'unknown' && !e.dead) {
          e.actor.send({ type: 'SCREEN', at, classification: decided, source });
        }
      } while (e.dirty);
    } finally {
      e.inFlight = false;
    }
  }

  /**
   * The CLI may write its state file just after its screen: a change of the file triggers one more
   * reading (inotify, no polling), so a file that lagged the screen cannot leave a stale state.
   */
  private watchStateFile(e: Entry, file: string): void {
    e.fileWatch?.close();
    try {
      e.fileWatch = watch(path.dirname(file), (_ev, name) => {
        if (name === path.basename(file) && !e.inFlight) void this.capture(e);
        else if (name === path.basename(file)) e.dirty = true;
      });
    } catch {
      e.fileWatch = null; // no state folder (yet): the screen alone decides
    }
  }

  private onNotification(name: string, args: string[]): void {
    if (name === 'subscription-changed' && args[0] === 'jaggers-dead') {
      const paneId = args.find((a) => a.startsWith('%'));
      const e = paneId ? this.entries.get(paneId) : undefined;
      if (!e) return;
      const dead = args.at(-1) === '1';
      if (dead && !e.dead) {
        e.dead = true;
        void this.client.run(['display-message', '-p', '-t', e.pane.paneId, '#{pane_dead_status}']).then((r) => {
          const status = r.ok && r.lines[0] ? Number(r.lines[0]) : null;
          e.actor.send({ type: 'PANE_EXITED', at: this.now(), exitStatus: Number.isNaN(status) ? null : status });
        });
      } else if (!dead && e.dead) {
        e.dead = false;
        e.home = null;
        e.fileWatch?.close();
        e.fileWatch = null;
        void this.client.run(['display-message', '-p', '-t', e.pane.paneId, '#{pane_pid}']).then((r) => {
          if (r.ok && r.lines[0]) e.pane = { ...e.pane, pid: Number(r.lines[0]) };
          e.actor.send({ type: 'PANE_RESTARTED', at: this.now() });
          void this.capture(e);
        });
      }
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
