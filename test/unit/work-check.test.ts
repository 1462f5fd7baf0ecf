// The check behind the mixed crash test (test/integration/work-crash.test.ts) can fail: it reports a
// lost item, one received twice, one received by another agent, a terminal's items out of their queue's
// order, and prompts that carry no item.
import { describe, expect, it } from 'vitest';
import { checkWork, workProblems, type WorkItemSeen } from '../helpers/work-check.js';

const items: WorkItemSeen[] = [
  { id: 'j-1', kind: 'job', terminalId: 'jg-a', agent: 'a', seq: 1, key: '.jaggers/handover/turn_1_aaaaaa.md' },
  { id: 'm-2', kind: 'message', terminalId: 'jg-a', agent: 'a', seq: 2, key: '.jaggers/inbox/m-2.md' },
  { id: 'j-3', kind: 'send', terminalId: 'jg-a', agent: 'a', seq: 3, key: 'send number 3' },
  { id: 'j-4', kind: 'handoff', terminalId: 'jg-b', agent: 'b', seq: 4, key: '.jaggers/handover/turn_1_bbbbbb.md' },
];
const prompt = (agent: string, key: string) => ({ agent, prompt: key.startsWith('.jaggers') ? `Read ${key} and do what it asks. [jg:0011]` : key });

describe('checkWork', () => {
  it('passes when each item came once, to its agent, in its queue order', () => {
    const v = checkWork(items, [prompt('a', items[0]!.key), prompt('b', items[3]!.key), prompt('a', items[1]!.key), prompt('a', items[2]!.key)]);
    expect(workProblems(v)).toEqual([]);
  });

  it('reports lost, doubled, misrouted, out of order and strays', () => {
    const v = checkWork(items, [
      prompt('a', items[1]!.key),
      prompt('a', items[0]!.key),
      prompt('a', items[0]!.key),
      prompt('a', items[3]!.key),
      prompt('a', 'something else'),
    ]);
    expect(v.lost).toEqual(['j-3']);
    expect(v.doubled).toEqual([{ id: 'j-1', times: 2 }]);
    expect(v.misrouted).toEqual([{ id: 'j-4', agent: 'b', by: 'a' }]);
    expect(v.outOfOrder).toEqual([{ terminalId: 'jg-a', received: ['m-2#2', 'j-1#1'] }]);
    expect(v.strays).toHaveLength(1);
    expect(workProblems(v)).toHaveLength(5);
  });
});
