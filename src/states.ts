// The states in which a work item (a job of any kind) or a workflow task has ended and never changes
// again: one definition, light enough for the client commands.
export const FINAL_STATES = ['done', 'failed', 'cancelled'] as const;

export type FinalState = (typeof FINAL_STATES)[number];

export function isFinalState(state: string): state is FinalState {
  return (FINAL_STATES as readonly string[]).includes(state);
}

/**
 * The states an agent (its pane's terminal) is shown in: one definition for the profiles' schema, the
 * API and the commands. `limited`: the CLI hit its plan's usage limit or the service's rate limit and
 * waits for the reset (docs/limits.md).
 */
export const AGENT_STATES = ['starting', 'idle', 'busy', 'waiting_input', 'limited', 'done', 'error', 'exited'] as const;

export type AgentStateName = (typeof AGENT_STATES)[number];
