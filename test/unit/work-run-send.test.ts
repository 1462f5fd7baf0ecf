// A `send` run (src/work/run-send.ts) on a scripted pane (test/helpers/fake-tui.ts) and an in-memory
// registry: journaled `starting` before anything is typed, done once the agent took the text; after a
// crash in `starting`, text echoed on screen is not typed again and text left in the box is cleared first.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnEventData } from '../../src/api/types.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import type { TurnEnv } from '../../src/turns/turn.js';
import { writeDurable } from '../../src/work/files.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Outcomes } from '../../src/work/outcomes.js';
import { runSend } from '../../src/work/run-send.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-run-send-');
const T = 'jg-c0de';

async function setup(status = 'idle') {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { cwd: root }));
  const agents = new FakeAgents();
  const e = agents.add({ agent: 'coder', terminalId: T }, status);
  const tui = new FakeTui(e.pane.paneId, e.profile!, status);
  const hub = new EventHub();
  const log = recordingLog();
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const outcomes = new Outcomes();
  const emitted: TurnEventData[] = [];
  const env: TurnEnv = { io: tui, watch: tui, registry: store, ...dirs, log, emit: (d) => void emitted.push(d), homeOf: async () => root };
  /** A send item recorded with its text, as Jobs.create leaves it. */
  const send = async (id: string, text: string) => {
    await writeDurable(path.join(root, '.jaggers', 'jobs', `${id}.md`), text);
    store.seed(jobEvent(id, { work: 'send', terminalId: T }));
    return store.data.jobs[id]!;
  };
  const run = (id: string, signal = new AbortController().signal) => runSend({ env, journal, agents, outcomes }, store.data.jobs[id]!, e, signal);
  const history = (id: string) => store.data.jobs[id]!.history.map((h) => [h.state, h.reason]);
  return { root, store, agents, e, tui, journal, outcomes, send, run, history };
}

describe('a send', () => {
  it('journals starting before it types, then done when the agent took the text', async () => {
    const h = await setup();
    await h.send('j-01', '/compact now');
    const typed: string[] = [];
    const paste = h.tui.paste.bind(h.tui);
    h.tui.paste = async (p, text) => {
      // Nothing is typed before the item is journaled as starting.
      typed.push(h.store.data.jobs['j-01']!.state);
      return paste(p, text);
    };
    await h.run('j-01');
    expect(typed).toEqual(['starting']);
    expect(h.tui.prompts).toEqual(['/compact now']);
    expect(h.history('j-01')).toEqual([
      ['queued', 'recorded'],
      ['starting', 'typing the text into coder'],
      ['done', 'coder took the text (busy)'],
    ]);
    expect(h.outcomes.get('j-01')).toMatchObject({ bytes: 12, delivery: { kind: 'delivered', submits: 1, evidence: 'busy' } });
  });

  it('after a crash in `starting`: text echoed on screen went in and is not typed again', async () => {
    const h = await setup('busy');
    await h.send('j-01', 'please run the tests');
    h.store.seed({ type: 'job-state', jobId: 'j-01', state: 'starting', reason: 'typing the text into coder' });
    h.tui.lines.push('❯ please run the tests');
    await h.run('j-01');
    expect(h.tui.pasted).toEqual([]);
    expect(h.tui.keys).toEqual([]);
    expect(h.store.data.jobs['j-01']).toMatchObject({
      state: 'done',
      reason: 'coder had taken the text before the supervisor restarted (found-on-screen)',
    });
  });

  it('after a crash in `starting`: text still in the input box is cleared, then typed again once', async () => {
    const h = await setup();
    await h.send('j-01', 'please run the tests');
    h.store.seed({ type: 'job-state', jobId: 'j-01', state: 'starting', reason: 'typing the text into coder' });
    h.tui.input = 'please run the tests';
    await h.run('j-01');
    expect(h.tui.keys[0]).toEqual(['C-c']);
    expect(h.tui.prompts).toEqual(['please run the tests']);
    expect(h.store.data.jobs['j-01']!.state).toBe('done');
    // Not journaled as starting a second time: it was already.
    expect(h.history('j-01').filter(([s]) => s === 'starting')).toHaveLength(1);
  });

  it('fails with the code of what went wrong: an agent waiting for a person, a pane gone', async () => {
    const h = await setup('waiting_input');
    await h.send('j-01', 'x');
    await h.run('j-01');
    expect(h.store.data.jobs['j-01']).toMatchObject({ state: 'failed', code: 'E_AGENT_WAITING' });
    expect(h.store.data.jobs['j-01']!.reason).toMatch(/^send: coder never became ready \(waiting_input: coder /);
    expect(h.tui.pasted).toEqual([]);
    await h.send('j-02', 'x');
    await runSend(
      {
        env: { io: h.tui, watch: h.tui, projectRoot: h.root, jaggersDir: path.join(h.root, '.jaggers'), log: recordingLog() },
        journal: h.journal,
        agents: h.agents,
        outcomes: h.outcomes,
      },
      h.store.data.jobs['j-02']!,
      undefined,
      new AbortController().signal,
    );
    expect(h.store.data.jobs['j-02']).toMatchObject({ state: 'failed', code: 'E_PANE_GONE', reason: 'send: coder has no window open' });
  });

  it('an item that ended meanwhile (cancelled) is left as it is; an aborted run records nothing more', async () => {
    const h = await setup();
    await h.send('j-01', 'x');
    h.store.seed({ type: 'job-state', jobId: 'j-01', state: 'cancelled', reason: 'by the user' });
    await h.run('j-01');
    expect(h.tui.pasted).toEqual([]);
    await h.send('j-02', 'x');
    const stop = new AbortController();
    const started = h.journal.change.bind(h.journal);
    h.journal.change = async (...a) => {
      const r = await started(...a);
      stop.abort();
      return r;
    };
    await h.run('j-02', stop.signal);
    expect(h.tui.pasted).toEqual([]);
    expect(h.store.data.jobs['j-02']!.state).toBe('starting');
  });
});
