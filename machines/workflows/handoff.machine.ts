// handoff: one agent, one turn.
import { workflowMachine } from '../workflow.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

export const definition: WorkflowInput = {
  name: 'handoff',
  description: 'one agent, one turn: the task goes to the agent and its reply is the result',
  agents: ['agent'],
  steps: [{ id: 'work', agent: 'agent', prompt: '{{task}}' }],
};

export const machine = workflowMachine(definition);
