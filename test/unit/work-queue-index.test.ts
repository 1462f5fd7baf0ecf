// The per-agent queue's index (src/work/queue.ts) follows the record tables change by change (the keys
// each in-place change touched, src/sessions/work.ts `changesSince`): after any sequence of commits and
// checks undone, every terminal's queue is what a fresh scan of copies of the tables gives.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { journalEventSchema, type NewJournalEvent } from '../../src/sessions/events.js';
import { applyEvent, emptyRegistry, type RegistryData } from '../../src/sessions/schema.js';
import { changesSince, tableVersion, Undo } from '../../src/sessions/work.js';
import { queueOf, terminalsWithWork } from '../../src/work/queue.js';
import { jobEvent, messageEvent } from '../helpers/work-fakes.js';

const TERMINALS = ['jg-a', 'jg-b', 'jg-c'];
const stamped = (e: NewJournalEvent) => journalEventSchema.parse({ ...e, ts: new Date(0).toISOString() });

type Op =
  | { op: 'message'; t: number }
  | { op: 'job'; t: number; compact: boolean }
  | { op: 'claim' | 'deliver'; k: number }
  | { op: 'job-state'; k: number; state: 'starting' | 'running' | 'done' | 'failed' | 'cancelled' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('message' as const), t: fc.nat(2) }),
  fc.record({ op: fc.constant('job' as const), t: fc.nat(2), compact: fc.boolean() }),
  fc.record({ op: fc.constantFrom('claim' as const, 'deliver' as const), k: fc.nat(40) }),
  fc.record({
    op: fc.constant('job-state' as const),
    k: fc.nat(40),
    state: fc.constantFrom('starting' as const, 'running' as const, 'done' as const, 'failed' as const, 'cancelled' as const),
  }),
);

/** The event an op makes, given the records so far (null: it names nothing there). */
function eventOf(data: RegistryData, o: Op, n: number): NewJournalEvent | null {
  const messages = Object.keys(data.messages);
  const jobs = Object.keys(data.jobs);
  switch (o.op) {
    case 'message':
      return messageEvent(`m-${n}`, { to: TERMINALS[o.t]! });
    case 'job':
      return jobEvent(`j-${n}`, { terminalId: TERMINALS[o.t]!, ...(o.compact ? { work: 'compact' } : {}) });
    case 'claim':
      return messages.length ? { type: 'message-claimed', messageId: messages[o.k % messages.length]!, nonce: `n${n}` } : null;
    case 'deliver':
      return messages.length ? { type: 'message-delivered', messageId: messages[o.k % messages.length]!, how: 'verified' } : null;
    case 'job-state':
      return jobs.length ? { type: 'job-state', jobId: jobs[o.k % jobs.length]!, state: o.state, reason: 'test' } : null;
  }
}

/** Each terminal's queue as a fresh scan sees it (copies of the tables are tables never indexed). */
function fresh(data: RegistryData): Record<string, string[]> {
  const copy = { ...data, jobs: { ...data.jobs }, messages: { ...data.messages } };
  return Object.fromEntries(TERMINALS.map((t) => [t, queueOf(copy, t).map((i) => i.id)]));
}
const indexed = (data: RegistryData): Record<string, string[]> => Object.fromEntries(TERMINALS.map((t) => [t, queueOf(data, t).map((i) => i.id)]));

describe('the queue index', () => {
  it('after any commits and undone checks, every queue is what a fresh scan gives', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(opArb, fc.boolean()), { minLength: 1, maxLength: 80 }), (ops) => {
        let data = emptyRegistry();
        let n = 0;
        for (const [o, checkOnly] of ops) {
          const e = eventOf(data, o, n++);
          if (!e) continue;
          const mode = checkOnly ? new Undo() : ('commit' as const);
          try {
            // A commit's data goes on (its seq counted); a check's is dropped, as the owner does.
            const next = applyEvent(data, stamped(e), mode);
            if (mode === 'commit') data = next;
          } catch {
            // An event that does not fit (a job moved back from its end, a message delivered twice) is refused, as the owner would.
          }
          // Read while a check is applied, then again once it is undone.
          expect(indexed(data)).toEqual(fresh(data));
          expect([...terminalsWithWork(data)].sort()).toEqual(TERMINALS.filter((t) => fresh(data)[t]!.length > 0));
          if (mode !== 'commit') {
            mode.restore();
            expect(indexed(data)).toEqual(fresh(data));
          }
        }
      }),
      { seed: 20261126, numRuns: 300 },
    );
  });

  it('says which keys changed since a version, and that it does not know past its log or for a prune', () => {
    let data = emptyRegistry();
    const v0 = tableVersion(data.messages);
    data = applyEvent(data, stamped(messageEvent('m-1')), 'commit');
    data = applyEvent(data, stamped(messageEvent('m-2')), 'commit');
    expect(changesSince(data.messages, v0)).toEqual(['m-1', 'm-2']);
    expect(changesSince(data.messages, tableVersion(data.messages))).toEqual([]);
    expect(changesSince(data.messages, v0 + 5)).toBeNull();
    expect(changesSince({}, 3)).toBeNull();
    // 5,000 changes: the oldest are no longer known.
    for (let i = 0; i < 5000; i++) data = applyEvent(data, stamped(messageEvent(`m-x${i}`)), 'commit');
    expect(changesSince(data.messages, v0)).toBeNull();
    expect(changesSince(data.messages, tableVersion(data.messages) - 2)).toEqual(['m-x4998', 'm-x4999']);
  });
});
