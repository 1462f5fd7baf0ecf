// The agents as the API shows them: each pane's live state and what decided it (the watcher's), its
// pinned session (the registry's), the question it asks; one agent with a fresh reading of its screen;
// its screen; and a wait for it to reach a state. Reads only: nothing here changes a pane.
import { publicStatus, type LimitSeen, type TerminalStatus } from '../../machines/terminal.machine.js';
import type { QueueEntry, ScreenView, TerminalDetail, TerminalView } from '../api/types.js';
import { classify } from '../detect/classify.js';
import { readQuestion } from '../detect/question.js';
import type { PaneIO } from '../delivery/ports.js';
import { JaggersError } from '../errors.js';
import type { RegistryData } from '../sessions/registry.js';
import type { StatusChange } from '../panes/watcher.js';
import type { TerminalEntry } from './table.js';
import { waitingFor } from './waiting-for.js';
import { tokenTotal } from '../usage/tokens.js';
import type { ContextView } from '../work/context.js';
import { own } from '../ids.js';

export interface ViewsPorts {
  table: {
    refresh(): Promise<void>;
    list(task?: string | null): TerminalEntry[];
    get(nameOrId: string, task?: string | null, what?: string, op?: string): Promise<TerminalEntry>;
    byPane(paneId: string): TerminalEntry | undefined;
  };
  watcher: {
    snapshot(paneId: string):
      | {
          machine: TerminalStatus;
          context: { since: number; rule: string | null; lines: string[]; source: string; turns: number; exitStatus: number | null; limit?: LimitSeen | null };
        }
      | undefined;
    lastScreen(paneId: string): string | null;
    pane(paneId: string): { pid: number | null } | undefined;
    status(paneId: string): string | undefined;
    onChange(l: (c: StatusChange) => void): () => void;
    hookView?(paneId: string): TerminalDetail['hooks'];
  };
  data(): RegistryData;
  io: Pick<PaneIO, 'capture'>;
  stopping: AbortSignal;
  /** The terminal's work items that have not ended, in order, with what each waits for. */
  queue(terminalId: string): QueueEntry[];
  /** What the watchdog found on the pane and still stands (docs/limits.md). */
  stuck?(paneId: string): { kind: string; since: number; reason: string } | null;
  /** How full the terminal's context is (src/work/context.ts); null before its first turn with usage. */
  context?(terminalId: string): ContextView | null;
}

/** A limit as the API shows it: when it resets (ISO), what said so. */
export function limitView(l: LimitSeen): NonNullable<TerminalView['limit']> {
  return {
    seenAt: new Date(l.at).toISOString(),
    resetAt: l.resetAt === null ? null : new Date(l.resetAt).toISOString(),
    retryAt: new Date(l.until).toISOString(),
    said: l.said,
    lines: l.lines,
  };
}

export class AgentViews {
  constructor(private readonly p: ViewsPorts) {}

  view(e: TerminalEntry, data: RegistryData = this.p.data()): TerminalView {
    const snap = this.p.watcher.snapshot(e.pane.paneId);
    const machine: TerminalStatus = snap?.machine ?? (e.pane.dead ? 'exited' : 'error');
    const state = publicStatus(machine);
    const ctx = snap?.context;
    const screen = state === 'waiting_input' ? this.p.watcher.lastScreen(e.pane.paneId) : null;
    return {
      agent: e.pane.agent!,
      terminalId: e.pane.terminalId,
      task: e.pane.task,
      profile: e.pane.profile,
      window: e.pane.windowId,
      windowIndex: e.pane.windowIndex,
      pane: e.pane.paneId,
      pid: this.p.watcher.pane(e.pane.paneId)?.pid ?? e.pane.panePid,
      state,
      since: ctx ? new Date(ctx.since).toISOString() : null,
      rule: ctx?.rule ?? (e.problem ? 'profile-invalid' : null),
      lines: ctx?.lines ?? (e.problem ? [e.problem] : []),
      source: ctx?.source ?? 'tmux',
      turns: ctx?.turns ?? 0,
      sessionId: (e.pane.terminalId && data.terminals[e.pane.terminalId]?.sessionId) || null,
      exitStatus: ctx?.exitStatus ?? e.pane.deadStatus,
      waitingFor: waitingFor(machine, e.profile, e.pane.agent!, ctx?.limit),
      ...(machine === 'limited' && ctx?.limit ? { limit: limitView(ctx.limit) } : {}),
      question: screen ? readQuestion(screen) : null,
      problem: e.problem,
      usage: tokenTotal(own(data.usage.agents, e.pane.agent!)),
      ...((f) => (f ? { stuck: { kind: f.kind, since: new Date(f.since).toISOString(), reason: f.reason } } : {}))(this.p.stuck?.(e.pane.paneId) ?? null),
      context: e.pane.terminalId && this.p.context ? this.p.context(e.pane.terminalId) : null,
    };
  }

  /** Every agent pane, read from tmux again first (a pane restarted a moment ago shows as such). */
  async terminals(task?: string | null, o: { fresh?: boolean } = { fresh: true }): Promise<TerminalView[]> {
    if (o.fresh) await this.p.table.refresh();
    const data = this.p.data();
    return this.p.table.list(task).map((e) => this.view(e, data));
  }

  /** One agent, with a fresh reading of what is on screen now (not the reading that decided the state). */
  async terminal(agent: string, task?: string | null): Promise<TerminalDetail> {
    const e = await this.p.table.get(agent, task);
    const view = this.view(e);
    const screen = await this.p.io.capture(e.pane.paneId).catch(() => '');
    const reading = e.profile
      ? classify({ screen, raw: '', rules: e.profile.detect.rules.filter((r) => r.region !== 'raw') })
      : { status: 'unknown', rule: null, lines: [] };
    const screenLines = screen.split('\n').map((l) => l.trimEnd());
    while (screenLines.length && screenLines.at(-1) === '') screenLines.pop();
    return {
      ...view,
      now: { ...reading, screenLines: screenLines.slice(-12) },
      queue: e.pane.terminalId ? this.p.queue(e.pane.terminalId) : [],
      hooks: this.p.watcher.hookView?.(e.pane.paneId) ?? null,
    };
  }

  async screen(agent: string, o: { ansi: boolean; history: number; task?: string | null }): Promise<ScreenView> {
    const e = await this.p.table.get(agent, o.task);
    const screen = await this.p.io.capture(e.pane.paneId, { ansi: o.ansi, ...(o.history ? { history: o.history } : {}) });
    return { agent: e.pane.agent!, terminalId: e.pane.terminalId, pane: e.pane.paneId, ansi: o.ansi, screen: screen.replace(/\n+$/, '') + '\n' };
  }

  /** Resolves with the agent's view once its state is one of `states` (at once if it is); E_TIMEOUT after `timeoutMs`. */
  async waitFor(agent: string, states: readonly string[], timeoutMs: number, task?: string | null): Promise<TerminalView> {
    const e = await this.p.table.get(agent, task);
    const paneId = e.pane.paneId;
    const now = () => this.view(this.p.table.byPane(paneId) ?? e);
    const current = this.p.watcher.status(paneId) ?? (e.pane.dead ? 'exited' : undefined);
    if (current && states.includes(current)) return now();
    const stopping = this.p.stopping;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        off();
        stopping.removeEventListener('abort', stopped);
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new JaggersError(
            'E_TIMEOUT',
            `${e.pane.agent} is still ${this.p.watcher.status(paneId) ?? 'unwatched'} after ${timeoutMs} ms (waited for ${states.join(' or ')})`,
          ),
        );
      }, timeoutMs);
      const stopped = () => {
        done();
        reject(new JaggersError('E_SUPERVISOR_DOWN', 'the supervisor is stopping'));
      };
      stopping.addEventListener('abort', stopped, { once: true });
      const off = this.p.watcher.onChange((c) => {
        if (c.pane.paneId !== paneId || !states.includes(c.status)) return;
        done();
        resolve();
      });
    });
    return now();
  }
}
