// What the work services need from the rest of the supervisor, as narrow interfaces: the registry, the
// table of agent panes with their live states, the event stream, a clock. The composition root
// (src/supervisor/main.ts) hands in the real ones; the unit tests hand in fakes.
import type { StreamEvent, StreamEventType } from '../api/types.js';
import type { RegistryData, RegistryStore } from '../sessions/registry.js';
import type { TurnTarget } from '../turns/turn.js';
import type { TerminalEntry } from '../agents/table.js';

export type { TerminalEntry };

/** The registry as its one writer holds it: the data now, and journaled changes. */
export interface Store extends RegistryStore {
  readonly data: RegistryData;
}

export interface Publish {
  publish(type: StreamEventType, data: Record<string, unknown>): void;
}

export interface Subscribe {
  subscribe(l: (e: StreamEvent) => void): () => void;
}

export type Hub = Publish & Subscribe;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(t: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t as NodeJS.Timeout),
};

/** The agents' panes as tmux and the watcher show them. */
export interface Agents {
  /** An agent by name (its window for `task` first) or by terminal id; undefined when tmux has no such pane. */
  find(nameOrId: string, task?: string | null): TerminalEntry | undefined;
  /** Like `find`, reading tmux again if needed; E_AGENT_UNKNOWN naming the agents when there is none. */
  get(nameOrId: string, task?: string | null, what?: string, op?: string): Promise<TerminalEntry>;
  list(task?: string | null): TerminalEntry[];
  refresh(): Promise<void>;
  /** The pane's live state, undefined when it is not watched. */
  status(paneId: string): string | undefined;
  /** The last screen the watcher read of the pane. */
  lastScreen(paneId: string): string | null;
  /** What a turn needs of the pane; E_PANE_GONE for a dead pane, E_PROFILE_INVALID for a profile that does not load. */
  target(e: TerminalEntry, what: string): TurnTarget;
}

/** Project folders, as every service that writes files needs them. */
export interface Dirs {
  projectRoot: string;
  jaggersDir: string;
}
