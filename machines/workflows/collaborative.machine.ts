// collaborative: A proposes, B critiques, A synthesizes (in the same conversation as its proposal).
import { workflowMachine } from '../workflow.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

export const definition: WorkflowInput = {
  name: 'collaborative',
  description: 'A proposes, B critiques, A synthesizes the final answer',
  agents: ['a', 'b'],
  steps: [
    {
      id: 'propose',
      agent: 'a',
      prompt: 'Task ({{task_id}}, step 1 of 3: propose)\n\n{{task}}\n\nPropose a solution. {{agent.b}} will critique your proposal next.',
    },
    {
      id: 'critique',
      agent: 'b',
      reads: ['propose'],
      prompt:
        'Task ({{task_id}}, step 2 of 3: critique)\n\n{{task}}\n\n{{agent.a}} proposed a solution:\n{{reads}}\n\nRead it and critique it: what is wrong, missing or risky, and what you would change. {{agent.a}} will use your critique to write the final version.',
    },
    {
      id: 'synthesize',
      agent: 'a',
      reads: ['propose', 'critique'],
      prompt:
        'Task ({{task_id}}, step 3 of 3: synthesize)\n\n{{task}}\n\n{{agent.b}} critiqued your proposal:\n{{reads}}\n\nWrite the final version: your proposal with the critique taken into account (say which points you did not take, and why).',
    },
  ],
};

export const machine = workflowMachine(definition);
