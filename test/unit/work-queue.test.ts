// The per-agent queue read from the registry (src/work/queue.ts): the item in flight first, then jobs
// and messages in the one order they were recorded in; ended items are gone from it.
import { describe, expect, it } from 'vitest';
import { journalEventSchema, type NewJournalEvent } from '../../src/sessions/events.js';
import { applyEvent } from '../../src/sessions/schema.js';
import { Undo } from '../../src/sessions/work.js';
import { describeItem, inFlight, itemAgent, placeOf, queueOf, terminalsWithWork } from '../../src/work/queue.js';
import { FakeStore, jobEvent, messageEvent } from '../helpers/work-fakes.js';

const ids = (s: FakeStore, t = 'jg-c0de') => queueOf(s.data, t).map((i) => i.id);

describe('the per-agent queue', () => {
  it('interleaves jobs and messages in the order they were recorded, whatever their kind', () => {
    const s = new FakeStore();
    s.seed(
      messageEvent('m-01'),
      jobEvent('j-01', { work: 'handoff' }),
      messageEvent('m-02'),
      jobEvent('j-02', { work: 'send' }),
      jobEvent('j-03', { work: 'turn', task: 't-1', workflow: 'w' }),
    );
    expect(ids(s)).toEqual(['m-01', 'j-01', 'm-02', 'j-02', 'j-03']);
    expect(queueOf(s.data, 'jg-c0de').map((i) => i.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('puts the item in flight first, then goes by seq; a claimed message counts as in flight', () => {
    const s = new FakeStore();
    s.seed(jobEvent('j-01'), messageEvent('m-01'), jobEvent('j-02'), messageEvent('m-02'));
    s.seed({ type: 'job-state', jobId: 'j-02', state: 'running', reason: 'took it' });
    expect(ids(s)).toEqual(['j-02', 'j-01', 'm-01', 'm-02']);
    expect(inFlight(queueOf(s.data, 'jg-c0de')[0]!)).toBe(true);
    expect(inFlight(queueOf(s.data, 'jg-c0de')[1]!)).toBe(false);

    const t = new FakeStore();
    t.seed(jobEvent('j-01'), messageEvent('m-01'), messageEvent('m-02'));
    t.seed({ type: 'message-claimed', messageId: 'm-02', nonce: 'ab12' });
    expect(ids(t)).toEqual(['m-02', 'j-01', 'm-01']);
    // Every state between queued and the end is in flight: starting and waiting_input too (by seq among them).
    t.seed({ type: 'job-state', jobId: 'j-01', state: 'waiting_input', reason: 'asks' });
    expect(
      queueOf(t.data, 'jg-c0de')
        .filter(inFlight)
        .map((i) => i.id),
    ).toEqual(['j-01', 'm-02']);
  });

  it('leaves out ended jobs and delivered messages, and other terminals’ items', () => {
    const s = new FakeStore();
    s.seed(jobEvent('j-01'), jobEvent('j-02'), jobEvent('j-03'), messageEvent('m-01'), messageEvent('m-02', { to: 'jg-0ther' }));
    s.seed(
      { type: 'job-state', jobId: 'j-01', state: 'done', reason: 'finished' },
      { type: 'job-state', jobId: 'j-02', state: 'failed', reason: 'broke' },
      { type: 'job-state', jobId: 'j-03', state: 'cancelled', reason: 'stop' },
    );
    expect(ids(s)).toEqual(['m-01']);
    s.seed({ type: 'message-delivered', messageId: 'm-01', how: 'verified' });
    expect(ids(s)).toEqual([]);
    expect(ids(s, 'jg-0ther')).toEqual(['m-02']);
    expect([...terminalsWithWork(s.data)]).toEqual(['jg-0ther']);
  });

  it('says where an item stands and which terminals have work; a worker not yet opened has none', () => {
    const s = new FakeStore();
    s.seed(jobEvent('j-01'), messageEvent('m-01'), jobEvent('j-09', { kind: 'worker', terminalId: null, target: 'claude' }));
    expect(placeOf(s.data, 'jg-c0de', 'm-01')).toMatchObject({ place: 1, head: { id: 'j-01' } });
    expect(placeOf(s.data, 'jg-c0de', 'j-09').place).toBe(-1);
    expect([...terminalsWithWork(s.data)]).toEqual(['jg-c0de']);
  });

  it('names an item and its agent', () => {
    const s = new FakeStore();
    s.seed(jobEvent('j-01', { work: 'handoff', headless: true }), messageEvent('m-01', { toAgent: 'reviewer', to: 'jg-be' }));
    const [j] = queueOf(s.data, 'jg-c0de');
    const [m] = queueOf(s.data, 'jg-be');
    expect([describeItem(j!), itemAgent(j!)]).toEqual(['headless handoff j-01', 'coder']);
    expect([describeItem(m!), itemAgent(m!)]).toEqual(['message m-01', 'reviewer']);
  });

  it('follows the tables as the registry owner changes them in place: a commit, a check undone, a record replaced', () => {
    const s = new FakeStore();
    s.seed(messageEvent('m-01'));
    const data = s.data;
    const stamped = (e: NewJournalEvent) => journalEventSchema.parse({ ...e, ts: new Date(0).toISOString() });
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-01']);
    // The same data object, its tables changed under it (the owner's commit).
    expect(applyEvent(data, stamped(messageEvent('m-02')), 'commit').messages).toBe(data.messages);
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-01', 'm-02']);
    expect([...terminalsWithWork(data)]).toEqual(['jg-c0de']);
    // A check applies in place and is undone.
    const undo = new Undo();
    applyEvent(data, stamped({ type: 'message-delivered', messageId: 'm-01', how: 'verified' }), undo);
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-02']);
    undo.restore();
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-01', 'm-02']);
    // A record replaced: claimed goes first.
    applyEvent(data, stamped({ type: 'message-claimed', messageId: 'm-02', nonce: 'ab12' }), 'commit');
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-02', 'm-01']);
    applyEvent(data, stamped({ type: 'message-delivered', messageId: 'm-02', how: 'verified' }), 'commit');
    applyEvent(data, stamped({ type: 'message-delivered', messageId: 'm-01', how: 'verified' }), 'commit');
    expect(queueOf(data, 'jg-c0de')).toEqual([]);
    expect(terminalsWithWork(data).size).toBe(0);
    // What a caller does with the list it got does not change the next one.
    applyEvent(data, stamped(messageEvent('m-03')), 'commit');
    queueOf(data, 'jg-c0de').pop();
    expect(queueOf(data, 'jg-c0de').map((i) => i.id)).toEqual(['m-03']);
  });
});
