// troubleshoot: A reproduces and diagnoses, B proposes a fix, A verifies; until verified or a limit.
import { workflowMachine } from '../workflow.machine.js';
import type { WorkflowInput } from '../../src/workflows/schema.js';

export const definition: WorkflowInput = {
  name: 'troubleshoot',
  description: 'A reproduces and diagnoses, B proposes a fix, A verifies it; until A replies VERIFIED or 3 fixes',
  agents: ['a', 'b'],
  steps: [
    {
      id: 'diagnose',
      agent: 'a',
      prompt:
        'Problem ({{task_id}}: reproduce and diagnose)\n\n{{task}}\n\nReproduce the problem and diagnose its cause. Say exactly how you reproduced it. {{agent.b}} will propose a fix from your diagnosis.',
    },
    {
      id: 'fix',
      agent: 'b',
      reads: ['diagnose', 'verify'],
      prompt:
        'Problem ({{task_id}}: propose a fix, attempt {{round}} of {{max_rounds}})\n\n{{task}}\n\nWhat {{agent.a}} found (the diagnosis, and the result of the last verification if there was one):\n{{reads}}\n\nPropose a fix (apply it if you can). {{agent.a}} will verify it.',
    },
    {
      id: 'verify',
      agent: 'a',
      reads: ['fix'],
      prompt:
        'Problem ({{task_id}}: verify, attempt {{round}} of {{max_rounds}})\n\n{{task}}\n\n{{agent.b}} proposed a fix:\n{{reads}}\n\nVerify it the way you reproduced the problem. If the problem is gone, reply with the word VERIFIED on a line of its own; otherwise say what still fails.',
      until: { matches: '^\\W*VERIFIED\\W*$' },
      loop: { back: 'fix', max: 2 },
    },
  ],
};

export const machine = workflowMachine(definition);
