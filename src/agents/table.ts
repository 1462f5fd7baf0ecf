// The supervisor's table of agent panes, rebuilt from tmux's window tags: each pane with its profile,
// watched by the one PaneWatcher. Commands ask for agents by name (or terminal id) through the API.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { TERMINAL_ID } from '../ids.js';
import type { Log } from '../logger.js';
import { loadProfile } from '../profiles/load.js';
import type { Profile } from '../profiles/schema.js';
import { listPanes, type PaneInfo } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { PaneWatcher } from '../panes/watcher.js';
import { offeredNames, windowName } from '../window-name.js';

export interface TerminalEntry {
  pane: PaneInfo;
  profile: Profile | null;
  /** Why the pane is not watched (its profile could not be loaded). */
  problem: string | null;
}

export class TerminalTable {
  private readonly entries = new Map<string, TerminalEntry>();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly tmux: ControlClient,
    private readonly session: string,
    private readonly jaggersDir: string,
    private readonly watcher: PaneWatcher,
    private readonly log: Log,
  ) {}

  /** Read the panes from tmux again; resolves after a pass that started after this call. */
  refresh(): Promise<void> {
    if (!this.running) {
      this.running = this.pass().finally(() => (this.running = null));
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.refresh();
    });
    return this.queued;
  }

  private async pass(): Promise<void> {
    const panes = (await listPanes(this.tmux, this.session)).filter((p) => p.agent !== null);
    const seen = new Set<string>();
    for (const p of panes) {
      seen.add(p.paneId);
      const old = this.entries.get(p.paneId);
      let { profile, problem } = old && old.pane.profile === p.profile ? old : { profile: null as Profile | null, problem: null as string | null };
      if (!old || old.pane.profile !== p.profile) {
        try {
          profile = (await loadProfile(p.profile ?? '', this.jaggersDir)).profile;
          problem = null;
        } catch (e) {
          problem = (e as Error).message;
          this.log.warn({ agent: p.agent, pane: p.paneId, err: problem }, 'agent pane not watched: its profile cannot be loaded');
        }
      }
      this.entries.set(p.paneId, { pane: p, profile, problem });
      if (profile) {
        this.watcher.watch({ paneId: p.paneId, windowId: p.windowId, agent: p.agent!, profile, pid: p.panePid, terminalId: p.terminalId });
        this.watcher.sync(p.paneId, { dead: p.dead, pid: p.panePid });
      }
    }
    const live = new Set(panes.map((p) => p.terminalId));
    for (const id of [...this.entries.keys()]) {
      if (seen.has(id)) continue;
      const tid = this.entries.get(id)?.pane.terminalId;
      this.entries.delete(id);
      this.watcher.unwatch(id);
      // Its window closed: its hook files go with it (a new start writes them again).
      if (tid && !live.has(tid)) void rm(path.join(this.jaggersDir, 'hooks', tid), { recursive: true, force: true }).catch(() => {});
    }
  }

  list(task?: string | null): TerminalEntry[] {
    const all = [...this.entries.values()].sort((a, b) => a.pane.windowIndex - b.pane.windowIndex);
    return task === undefined ? all : all.filter((e) => e.pane.task === task);
  }

  /**
   * An agent by name (its window for `task` when it has one, else the default team's), by the name of a
   * task's window (`coder+t-1a2b3c4d`, as `ls` shows it) or by terminal id (`jg-...`); undefined when
   * tmux has no such pane.
   */
  find(nameOrId: string, task?: string | null): TerminalEntry | undefined {
    const all = this.list();
    if (TERMINAL_ID.test(nameOrId)) return all.find((e) => e.pane.terminalId === nameOrId);
    const named = all.filter((e) => e.pane.agent === nameOrId);
    if (named.length === 0) return all.find((e) => e.pane.agent !== null && windowName(e.pane.agent, e.pane.task) === nameOrId);
    return (task ? named.find((e) => e.pane.task === task) : undefined) ?? named.find((e) => e.pane.task === null) ?? named[0];
  }

  /** Like `find`, after one more read of tmux if needed (a window made a moment ago); else E_AGENT_UNKNOWN naming the agents. */
  async get(nameOrId: string, task?: string | null, what = 'agent', op = ''): Promise<TerminalEntry> {
    let e = this.find(nameOrId, task);
    if (!e) {
      await this.refresh();
      e = this.find(nameOrId, task);
    }
    if (!e) {
      const known = offeredNames(this.list().map((x) => x.pane));
      throw new JaggersError(
        'E_AGENT_UNKNOWN',
        `${op ? `${op}: ` : ''}unknown ${what} ${JSON.stringify(nameOrId)} in session ${this.session}: agents are ${known}`,
      );
    }
    return e;
  }

  byPane(paneId: string): TerminalEntry | undefined {
    return this.entries.get(paneId);
  }
}
