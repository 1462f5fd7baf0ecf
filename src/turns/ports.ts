import type { Classification } from '../detect/classify.js';
import type { PaneStatusSource } from '../delivery/ports.js';

/** What a turn needs to know of a pane's live state: the supervisor's watcher provides it. */
export interface TurnWatch extends PaneStatusSource {
  /** How many turns the pane's machine closed since it was watched. */
  turns(paneId: string): number;
  /** Tell the machine the open turn ended (the engine saw the evidence). */
  confirmTurn(paneId: string, by: string): void;
  /** The turn's reply is a usage limit's message (`lines`): the agent is limited (docs/limits.md). */
  limitSeen?(paneId: string, lines: string[], by: string): void;
  /** The first turn end a CLI's hook reported after `turnsBefore` closed turns, with its reply where the payload held it. */
  hookEnd?(paneId: string, turnsBefore: number): { event: string; reply?: string } | null;
  /** The pane's CLI calls its hooks (installed, and not gone silent): its turn end is worth a moment's wait. */
  hooksExpected?(paneId: string): boolean;
  snapshot(paneId: string): { status: string; context: { since: number; rule: string | null; lines: string[] }; screen: Classification | null } | undefined;
}
