// Jobs and messages in the registry: the reducer refuses a second end or a second delivery, an older
// snapshot without them still loads, and the queue's order (the item in flight first, then first in, first out).
import { describe, expect, it } from 'vitest';
import type { JournalEvent, NewJournalEvent } from '../../src/sessions/events.js';
import { applyEvent, emptyRegistry, registrySchema, type RegistryData } from '../../src/sessions/schema.js';
import { Undo } from '../../src/sessions/work.js';
import { emptyUsage } from '../../src/sessions/usage.js';
import { queueOf } from '../../src/work/queue.js';

let clock = 0;
const ts = () => new Date(Date.UTC(2026, 10, 23, 12, 0, clock++)).toISOString();
const apply = (data: RegistryData, ...events: NewJournalEvent[]) => events.reduce((d, e) => applyEvent(d, { ...e, ts: ts() } as JournalEvent), data);

const job = (jobId: string, terminalId: string | null = 'jg-1') =>
  ({
    type: 'job-created',
    jobId,
    name: null,
    target: 'coder',
    kind: terminalId ? 'agent' : 'worker',
    terminalId,
    from: null,
    fromAgent: null,
    prompt: `.jaggers/jobs/${jobId}.md`,
    bytes: 3,
    timeoutMs: null,
    keep: false,
  }) as const;
const msg = (messageId: string, to = 'jg-1') =>
  ({
    type: 'message-created',
    messageId,
    to,
    toAgent: 'coder',
    from: null,
    fromAgent: 'user',
    file: `.jaggers/inbox/${messageId}.md`,
    bytes: 1,
    job: null,
  }) as const;

describe('jobs and messages in the registry', () => {
  it('records each job state with its time and reason; a job that ended cannot change again', () => {
    let d = apply(emptyRegistry(), job('j-1'));
    d = apply(
      d,
      { type: 'job-state', jobId: 'j-1', state: 'starting', reason: 'typing', nonce: 'abcd', artifact: 'a.md', turn: 1 },
      { type: 'job-state', jobId: 'j-1', state: 'running', reason: 'took it' },
      { type: 'job-state', jobId: 'j-1', state: 'done', reason: 'finished', reply: 'r.md' },
    );
    const j = d.jobs['j-1']!;
    expect(j.history.map((h) => [h.state, h.reason])).toEqual([
      ['queued', 'recorded'],
      ['starting', 'typing'],
      ['running', 'took it'],
      ['done', 'finished'],
    ]);
    expect([j.nonce, j.artifact, j.reply, j.turn]).toEqual(['abcd', 'a.md', 'r.md', 1]);
    expect(() => apply(d, { type: 'job-state', jobId: 'j-1', state: 'failed', reason: 'late' })).toThrow(/already done; it cannot become failed/);
    expect(() => apply(d, job('j-1'))).toThrow(/already exists/);
    expect(() => apply(d, { type: 'job-state', jobId: 'j-9', state: 'running', reason: '' })).toThrow(/unknown job/);
  });

  it('counts claims, and refuses a claim or a delivery after a message was delivered', () => {
    let d = apply(emptyRegistry(), msg('m-1'));
    d = apply(d, { type: 'message-claimed', messageId: 'm-1', nonce: 'aa' }, { type: 'message-claimed', messageId: 'm-1', nonce: 'bb' });
    expect([d.messages['m-1']!.state, d.messages['m-1']!.claims, d.messages['m-1']!.nonce]).toEqual(['claimed', 2, 'bb']);
    d = apply(d, { type: 'message-delivered', messageId: 'm-1', how: 'found-on-screen' });
    expect(d.messages['m-1']!.how).toBe('found-on-screen');
    expect(() => apply(d, { type: 'message-delivered', messageId: 'm-1', how: 'verified' })).toThrow(/already delivered/);
    expect(() => apply(d, { type: 'message-claimed', messageId: 'm-1', nonce: 'cc' })).toThrow(/already delivered/);
  });

  it('keeps the newest 500 delivered messages and ended jobs in the snapshot, every pending one, dropping 100 more at a time', () => {
    const created: NewJournalEvent[] = [];
    for (let i = 0; i < 700; i++) created.push(msg(`m-${i}`), job(`j-${i}`));
    const ended: NewJournalEvent[] = [];
    for (let i = 0; i < 650; i++)
      ended.push(
        { type: 'message-delivered', messageId: `m-${i}`, how: 'verified' } as const,
        { type: 'job-state', jobId: `j-${i}`, state: 'done', reason: '' } as const,
      );
    // Up to 600 ended, all kept; the 601st drops the oldest 101, then 49 more end: 549 ended, 50 pending.
    const ids = (r: Record<string, unknown>) => Object.keys(r);
    const d = apply(apply(emptyRegistry(), ...created), ...ended);
    expect(ids(d.messages)).toHaveLength(599);
    expect(ids(d.messages)[0]).toBe('m-101');
    expect(Object.values(d.messages).filter((m) => m.state === 'pending')).toHaveLength(50);
    expect(ids(d.jobs)).toHaveLength(599);
    expect(d.jobs['j-100']).toBeUndefined();
    expect(d.jobs['j-101']!.state).toBe('done');
    expect(d.jobs['j-699']!.state).toBe('queued');
    // In place for good (as the registry's owner applies them) gives the same records, in the same order.
    const stamped = [...created, ...ended].map((e) => ({ ...e, ts: ts() }) as JournalEvent);
    const inPlace = stamped.reduce((x, e) => applyEvent(x, e, 'commit'), emptyRegistry());
    expect(ids(inPlace.messages)).toEqual(ids(d.messages));
    expect(ids(inPlace.jobs)).toEqual(ids(d.jobs));
    expect(Object.values(inPlace.messages).map((m) => m.state)).toEqual(Object.values(d.messages).map((m) => m.state));
  });

  it('checks events in place and puts every record back: a new one removed, a changed one as it was, the order kept', () => {
    const d = apply(emptyRegistry(), msg('m-1'), msg('m-2'), job('j-1'));
    const before = JSON.stringify(d);
    const undo = new Undo();
    let x = applyEvent(d, { ...msg('m-3'), ts: ts() } as JournalEvent, undo);
    x = applyEvent(x, { type: 'message-claimed', messageId: 'm-1', nonce: 'aa', ts: ts() }, undo);
    x = applyEvent(x, { type: 'message-delivered', messageId: 'm-1', how: 'verified', ts: ts() }, undo);
    x = applyEvent(x, { type: 'job-state', jobId: 'j-1', state: 'done', reason: '', ts: ts() }, undo);
    expect(d.messages['m-3']).toBeDefined();
    expect(d.messages['m-1']!.state).toBe('delivered');
    // A later event that does not fit is found by the same check.
    expect(() => applyEvent(x, { type: 'message-claimed', messageId: 'm-1', nonce: 'bb', ts: ts() }, undo)).toThrow(/already delivered/);
    undo.restore();
    expect(JSON.stringify(d)).toBe(before);
  });

  it('loads a snapshot written before jobs and messages existed', () => {
    const old = { version: 1, journal: { bytes: 0, lines: 0 }, terminals: {}, tasks: {} };
    expect(registrySchema.parse(old)).toEqual({ ...old, jobs: {}, messages: {}, seq: 0, usage: emptyUsage(), budgets: { set: {}, raised: {} } });
  });

  it("orders a terminal's work: the item in flight first, then jobs and messages alike in the order they were recorded", () => {
    let d = apply(emptyRegistry(), msg('m-old'), job('j-queued'), msg('m-other', 'jg-2'), job('j-running'), msg('m-new'), job('j-done'), job('j-worker', null));
    // One order for jobs and messages: each gets the next place.
    expect([d.messages['m-old']!.seq, d.jobs['j-queued']!.seq, d.messages['m-other']!.seq, d.jobs['j-running']!.seq, d.messages['m-new']!.seq]).toEqual([
      1, 2, 3, 4, 5,
    ]);
    d = apply(d, { type: 'job-state', jobId: 'j-running', state: 'running', reason: '' }, { type: 'job-state', jobId: 'j-done', state: 'done', reason: '' });
    const ids = () => queueOf(d, 'jg-1').map((i) => i.id);
    expect(ids()).toEqual(['j-running', 'm-old', 'j-queued', 'm-new']);
    d = apply(d, { type: 'job-state', jobId: 'j-running', state: 'done', reason: '' });
    expect(ids()).toEqual(['m-old', 'j-queued', 'm-new']);
    d = apply(d, { type: 'message-claimed', messageId: 'm-new', nonce: 'aa' });
    // A claimed message (a try under way when a supervisor died) is followed first.
    expect(ids()).toEqual(['m-new', 'm-old', 'j-queued']);
    d = apply(d, { type: 'message-delivered', messageId: 'm-new', how: 'verified' }, { type: 'message-delivered', messageId: 'm-old', how: 'verified' });
    expect(ids()).toEqual(['j-queued']);
    expect(queueOf(d, 'jg-2').map((i) => i.id)).toEqual(['m-other']);
  });
});
