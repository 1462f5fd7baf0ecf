// Pure lookups over the registry snapshot, id generators, and rebuilding terminals from tmux tags.
import { randomUUID } from 'node:crypto';
import type { JournalEvent } from './events.js';
import { applyEvents, type RegistryData, type TerminalRecord } from './schema.js';

import { own } from '../ids.js';

export { newTerminalId } from '../ids.js';

/** A fresh session id for CLIs that take one up front (`--session-id`). */
export function newSessionId(): string {
  return randomUUID();
}

/**
 * The terminal that `agent` works in for `task` (null: the project's default team). A task's explicit
 * assignment (`task-agent`) wins; otherwise the newest terminal created for that agent and task.
 */
export function findTerminal(data: RegistryData, query: { agent: string; task: string | null }): TerminalRecord | null {
  if (query.task !== null) {
    const assigned = own(own(data.tasks, query.task)?.agents, query.agent);
    const t = assigned ? own(data.terminals, assigned.terminalId) : undefined;
    if (t) return t;
  }
  let best: TerminalRecord | null = null;
  for (const t of Object.values(data.terminals)) {
    if (t.agent !== query.agent || t.task !== query.task) continue;
    // `>=`: on equal times the later-recorded terminal (later in insertion order) wins.
    if (!best || Date.parse(t.created) >= Date.parse(best.created)) best = t;
  }
  return best;
}

/** Pinned session of an agent in a task, or null. */
export function pinnedSession(data: RegistryData, query: { agent: string; task: string | null }): string | null {
  return findTerminal(data, query)?.sessionId ?? null;
}

/** A window that tmux knows as a jaggers terminal (from its window user options). */
export interface TmuxTaggedWindow {
  terminalId: string;
  agent: string;
  profile: string;
  /** tmux window id, `@3`. */
  window: string;
  /** Pane's working folder when known; '' otherwise. */
  cwd?: string;
  task?: string | null;
}

/**
 * Events that make the registry know every tagged tmux window: `terminal-created` for terminals it
 * lacks, `terminal-window` where the window id changed. Record them so the journal stays the truth.
 */
export function tmuxTagEvents(data: RegistryData, windows: readonly TmuxTaggedWindow[], ts: string): JournalEvent[] {
  const events: JournalEvent[] = [];
  const seen = new Set<string>();
  for (const w of windows) {
    if (seen.has(w.terminalId)) continue;
    seen.add(w.terminalId);
    const known = own(data.terminals, w.terminalId);
    if (!known) {
      events.push({
        ts,
        type: 'terminal-created',
        terminalId: w.terminalId,
        agent: w.agent,
        profile: w.profile,
        cwd: w.cwd ?? '',
        task: w.task ?? null,
      });
    }
    if (known?.window !== w.window) events.push({ ts, type: 'terminal-window', terminalId: w.terminalId, window: w.window });
  }
  return events;
}

/** Pure: `data` plus the terminals tmux knows and the registry does not (see `tmuxTagEvents`). */
export function mergeTmuxTags(data: RegistryData, windows: readonly TmuxTaggedWindow[], now: Date = new Date()): RegistryData {
  return applyEvents(data, tmuxTagEvents(data, windows, now.toISOString()));
}
