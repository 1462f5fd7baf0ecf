// handshake: two agents exchange drafts until both reply with the agreement marker, or a limit.
import { workflowMachine } from '../workflow.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

const agreed = { matches: '^\\W*AGREED\\W*$', of: ['draft_a', 'draft_b'] };

export const definition: WorkflowInput = {
  name: 'handshake',
  description: 'A and B exchange drafts until both reply AGREED, or 4 rounds',
  agents: ['a', 'b'],
  steps: [
    {
      id: 'draft_a',
      agent: 'a',
      reads: ['draft_b'],
      prompt:
        'Task ({{task_id}}: handshake, round {{round}} of {{max_rounds}})\n\n{{task}}\n\nYou and {{agent.b}} must agree on one answer. The latest draft of {{agent.b}}:\n{{reads}}\n\nWrite your draft (or revise it). If you agree with the latest draft of {{agent.b}} as it stands, reply with the word AGREED on a line of its own.',
      until: agreed,
    },
    {
      id: 'draft_b',
      agent: 'b',
      reads: ['draft_a'],
      prompt:
        'Task ({{task_id}}: handshake, round {{round}} of {{max_rounds}})\n\n{{task}}\n\nYou and {{agent.a}} must agree on one answer. The latest draft of {{agent.a}}:\n{{reads}}\n\nWrite your draft (or revise it). If you agree with the draft of {{agent.a}} as it stands, reply with the word AGREED on a line of its own.',
      until: agreed,
      loop: { back: 'draft_a', max: 3 },
    },
  ],
};

export const machine = workflowMachine(definition);
