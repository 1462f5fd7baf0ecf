// Recording a work item's changes (src/work/journal.ts): journaled with their reason, refused once the
// item ended, published as `job` events, the result sent home in the same journal entry as the end.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/api/types.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { WorkJournal } from '../../src/work/journal.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeStore, jobEvent, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-journal-');

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents('jg-c0de', 'coder'), ...terminalEvents('jg-b055', 'boss'));
  const hub = new EventHub();
  const published: StreamEvent[] = [];
  hub.subscribe((e) => published.push(e));
  const ended: JobRecord[] = [];
  const journal = new WorkJournal({ store, hub, log: recordingLog(), dirs, ended: async (j) => void ended.push(j) });
  return { root, dirs, store, hub, published, ended, journal };
}

describe('the work journal', () => {
  it('records a change with its reason and details, publishes it, and calls `ended` only at the end', async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-01'));
    const j = await h.journal.change('j-01', 'starting', 'typing the prompt', { nonce: 'ab12', artifact: 'a.md', turn: 1 });
    expect(j).toMatchObject({ state: 'starting', reason: 'typing the prompt', nonce: 'ab12', artifact: 'a.md', turn: 1 });
    expect(h.store.data.jobs['j-01']!.state).toBe('starting');
    expect(h.published.map((e) => [e.type, e.data.id, e.data.state, e.data.reason])).toEqual([['job', 'j-01', 'starting', 'typing the prompt']]);
    expect(h.ended).toEqual([]);
    await h.journal.change('j-01', 'failed', 'the pane died', { code: 'E_PANE_GONE', cause: 'agent-lost' });
    expect(h.published.at(-1)!.data).toMatchObject({ id: 'j-01', state: 'failed', code: 'E_PANE_GONE' });
    expect(h.ended.map((x) => [x.id, x.state])).toEqual([['j-01', 'failed']]);
  });

  it('refuses to change an item that ended: nothing recorded, nothing published, no second end', async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-01'), { type: 'job-state', jobId: 'j-01', state: 'cancelled', reason: 'by the user' });
    const before = h.store.events.length;
    expect(await h.journal.change('j-01', 'done', 'finished late')).toBeNull();
    expect(await h.journal.change('j-99', 'done', 'no such item')).toBeNull();
    expect(h.store.events.length).toBe(before);
    expect(h.published).toEqual([]);
    expect(h.ended).toEqual([]);
    expect(h.store.data.jobs['j-01']!.state).toBe('cancelled');
  });

  it("sends an ended job's result to the inbox of whoever assigned it, in the same journal entry as its end", async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-01', { name: 'tests', from: 'jg-b055', fromAgent: 'boss' }));
    const writes: number[] = [];
    const update = h.store.update.bind(h.store);
    h.store.update = (fn) => {
      writes.push(0);
      return update(fn);
    };
    await h.journal.change('j-01', 'failed', 'the agent never became ready', { code: 'E_TIMEOUT' });
    expect(writes).toHaveLength(1);
    const [m] = Object.values(h.store.data.messages);
    expect(m).toMatchObject({ to: 'jg-b055', toAgent: 'boss', from: 'jg-c0de', fromAgent: 'coder', job: 'j-01', state: 'pending' });
    const text = await readFile(path.join(h.root, m!.file), 'utf8');
    expect(text).toContain('job: j-01');
    expect(text).toContain('Job j-01 (tests) that you assigned to coder ended failed: the agent never became ready');
  });

  it("a done job's result message carries its reply text", async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-01', { from: 'jg-b055', fromAgent: 'boss' }));
    await h.journal.change('j-01', 'done', 'the agent finished its turn', { reply: '.jaggers/handoffs/r.md' }, 'All green.');
    const [m] = Object.values(h.store.data.messages);
    const text = await readFile(path.join(h.root, m!.file), 'utf8');
    expect(text).toContain('is done. Its reply is in .jaggers/handoffs/r.md:\n\nAll green.\n');
  });

  it('sends nothing home for a handoff or a send (their caller waits itself), nor for a job a person assigned', async () => {
    const h = await setup();
    h.store.seed(
      jobEvent('j-01', { work: 'handoff', from: 'jg-b055', fromAgent: 'boss' }),
      jobEvent('j-02', { work: 'send', from: 'jg-b055', fromAgent: 'boss' }),
      jobEvent('j-03'),
    );
    for (const id of ['j-01', 'j-02', 'j-03']) await h.journal.change(id, 'done', 'finished');
    expect(h.store.data.messages).toEqual({});
    expect(h.ended.map((j) => j.id)).toEqual(['j-01', 'j-02', 'j-03']);
  });

  it('after(): publishes a change recorded elsewhere and acts on its end', async () => {
    const h = await setup();
    h.store.seed(jobEvent('j-01'), { type: 'job-state', jobId: 'j-01', state: 'done', reason: 'replied', reply: 'r.md' });
    const j = await h.journal.after('j-01');
    expect(j?.reply).toBe('r.md');
    expect(h.published.map((e) => e.data.state)).toEqual(['done']);
    expect(h.ended.map((x) => x.id)).toEqual(['j-01']);
    expect(await h.journal.after('j-99')).toBeNull();
  });
});
