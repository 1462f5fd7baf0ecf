import type { Classification } from '../detect/classify.js';
import type { PaneStatusSource } from '../delivery/ports.js';

/** What a turn needs to know of a pane's live state: the supervisor's watcher provides it. */
export interface TurnWatch extends PaneStatusSource {
  /** How many turns the pane's machine closed since it was watched. */
  turns(paneId: string): number;
  /** Tell the machine the open turn ended (the engine saw the evidence). */
  confirmTurn(paneId: string, by: string): void;
  snapshot(paneId: string): { status: string; context: { since: number; rule: string | null; lines: string[] }; screen: Classification | null } | undefined;
}
