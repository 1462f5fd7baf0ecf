// The states in which a work item (a job of any kind) or a workflow task has ended and never changes
// again: one definition, light enough for the client commands.
export const FINAL_STATES = ['done', 'failed', 'cancelled'] as const;

export type FinalState = (typeof FINAL_STATES)[number];

export function isFinalState(state: string): state is FinalState {
  return (FINAL_STATES as readonly string[]).includes(state);
}
