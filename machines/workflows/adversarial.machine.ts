// adversarial: A produces, B attacks, A defends or fixes, until B accepts or the round limit.
import { workflowMachine } from '../workflow.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

export const definition: WorkflowInput = {
  name: 'adversarial',
  description: 'A produces, B attacks, A defends or fixes; until B replies ACCEPTED or 3 rounds',
  agents: ['a', 'b'],
  steps: [
    { id: 'produce', agent: 'a', prompt: 'Task ({{task_id}}: produce)\n\n{{task}}\n\nDo it. {{agent.b}} will attack your work next.' },
    {
      id: 'attack',
      agent: 'b',
      reads: ['defend', 'produce'],
      prompt:
        'Task ({{task_id}}: attack, round {{round}} of {{max_rounds}})\n\n{{task}}\n\n{{agent.a}} produced this (the latest first if there are several):\n{{reads}}\n\nAttack it: find what breaks, what is wrong or unproven. If it holds, reply with the word ACCEPTED on a line of its own; otherwise list the problems.',
      until: { matches: '^\\W*ACCEPTED\\W*$' },
    },
    {
      id: 'defend',
      agent: 'a',
      reads: ['attack'],
      prompt:
        'Task ({{task_id}}: defend, round {{round}} of {{max_rounds}})\n\n{{task}}\n\n{{agent.b}} attacked your work:\n{{reads}}\n\nFix what is right in the attack, and defend what is not (say why).',
      loop: { back: 'attack', max: 2 },
    },
  ],
};

export const machine = workflowMachine(definition);
