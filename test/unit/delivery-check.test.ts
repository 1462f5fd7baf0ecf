// The check behind the inbox crash test (test/integration/inbox-crash.test.ts) can fail: it reports a
// lost, a doubled, a misrouted and an out-of-order message, and a prompt that is no message.
import { describe, expect, it } from 'vitest';
import { checkDeliveries, deliveryProblems, messageIdOf, parsePromptLog, type Receipt, type SentMessage } from '../helpers/deliveries.js';

const sent: SentMessage[] = [
  { id: 'm-000000000001', from: 's0', to: 'a', seq: 0 },
  { id: 'm-000000000002', from: 's1', to: 'a', seq: 0 },
  { id: 'm-000000000003', from: 's0', to: 'a', seq: 1 },
  { id: 'm-000000000004', from: 's0', to: 'b', seq: 2 },
  { id: 'm-000000000005', from: 's0', to: 'a', seq: 3 },
];
const pointer = (id: string, nonce = '0123456789abcdef') => `Read .jaggers/inbox/${id}.md and do what it asks. [jg:${nonce}]`;
const got = (agent: string, n: number): Receipt => {
  const id = `m-00000000000${n}`;
  return { agent, id, prompt: pointer(id) };
};
const clean = { lost: [], doubled: [], misrouted: [], outOfOrder: [], strays: [] };

describe('checking deliveries against the receipts', () => {
  it('every message once, in order: no problems (other senders may come in between)', () => {
    const v = checkDeliveries(sent, [got('a', 1), got('a', 2), got('a', 3), got('b', 4), got('a', 5)]);
    expect(v).toEqual(clean);
    expect(deliveryProblems(v, sent)).toEqual([]);
  });

  it('reports a lost message, and only that', () => {
    const v = checkDeliveries(sent, [got('a', 1), got('a', 2), got('b', 4), got('a', 5)]);
    expect(v).toEqual({ ...clean, lost: ['m-000000000003'] });
    expect(deliveryProblems(v, sent)).toEqual(['lost: m-000000000003 (s0 #1 -> a)']);
  });

  it('reports a doubled message (typed again, e.g. after a crash), and only that', () => {
    const v = checkDeliveries(sent, [got('a', 1), got('a', 2), got('a', 3), got('a', 3), got('b', 4), got('a', 5)]);
    expect(v).toEqual({ ...clean, doubled: [{ id: 'm-000000000003', times: 2 }] });
    expect(deliveryProblems(v, sent)).toEqual(['received 2 times: m-000000000003 (s0 #1 -> a)']);
  });

  it('reports messages from one sender to one receiver that came out of order', () => {
    const v = checkDeliveries(sent, [got('a', 2), got('a', 3), got('a', 1), got('b', 4), got('a', 5)]);
    expect(v).toEqual({
      ...clean,
      outOfOrder: [
        { from: 's0', to: 'a', sent: ['m-000000000001', 'm-000000000003', 'm-000000000005'], received: ['m-000000000003', 'm-000000000001', 'm-000000000005'] },
      ],
    });
    expect(deliveryProblems(v, sent)).toHaveLength(1);
  });

  it('reports a message received by the wrong agent (and so lost for its receiver)', () => {
    const v = checkDeliveries(sent, [got('a', 1), got('a', 2), got('a', 3), got('a', 4), got('a', 5)]);
    expect(v).toEqual({ ...clean, lost: ['m-000000000004'], misrouted: [{ id: 'm-000000000004', to: 'b', by: 'a' }] });
  });

  it('reports a prompt that names no message sent', () => {
    const stray: Receipt = { agent: 'b', id: null, prompt: 'hello' };
    const v = checkDeliveries(sent, [got('a', 1), got('a', 2), got('a', 3), got('b', 4), stray, got('a', 5)]);
    expect(v).toEqual({ ...clean, strays: [stray] });
  });

  it('reads the receipts from the fake agent prompt log', () => {
    const log = [pointer('m-000000000001'), 'hello', pointer('m-000000000003', 'fedcba9876543210')]
      .map((prompt, i) => JSON.stringify({ t: i, pid: 7, agent: 'a', prompt }))
      .join('\n');
    expect(parsePromptLog(`${log}\n`, 'a').map((r) => r.id)).toEqual(['m-000000000001', null, 'm-000000000003']);
    // A line still being written is read next time.
    expect(parsePromptLog(`${log}\n{"t":3,"pid":7,"ag`, 'a')).toHaveLength(3);
    expect(messageIdOf('Read ../.jaggers/inbox/m-0123abcd.md and do what it asks.')).toBe('m-0123abcd');
  });
});
