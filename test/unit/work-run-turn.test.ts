// A work item's turn in a pane (src/work/run-turn.ts) on a scripted pane (test/helpers/fake-tui.ts) and an
// in-memory registry: its phases journaled in order, each before the next begins; after a crash in
// `starting`, a nonce found on screen is not typed again and one found nowhere is typed under a new one.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnEventData } from '../../src/api/types.js';
import { parseArtifact, writeArtifact } from '../../src/handover/artifact.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import type { TurnEnv } from '../../src/turns/turn.js';
import { writeDurable } from '../../src/work/files.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Outcomes } from '../../src/work/outcomes.js';
import { runPaneTurn } from '../../src/work/run-turn.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, reaches, recordingLog, settle, terminalEvents, testProfile } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-run-turn-');
const T = 'jg-c0de';
const NONCE = /\[jg:([0-9a-f]{16})\]/;

async function setup(status = 'idle') {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { cwd: root }), ...terminalEvents('jg-b055', 'boss', { cwd: root }));
  const agents = new FakeAgents();
  const e = agents.add({ agent: 'coder', terminalId: T, pid: 4242 }, status);
  const tui = new FakeTui(e.pane.paneId, e.profile!, status);
  const hub = new EventHub();
  const log = recordingLog();
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const outcomes = new Outcomes();
  const emitted: TurnEventData[] = [];
  const env: TurnEnv = { io: tui, watch: tui, registry: store, ...dirs, log, emit: (d) => void emitted.push(d), homeOf: async () => root };
  const job = async (id: string, text: string, o: Parameters<typeof jobEvent>[1] = {}) => {
    await writeDurable(path.join(root, '.jaggers', 'jobs', `${id}.md`), text);
    store.seed(jobEvent(id, { terminalId: T, ...o }));
    return store.data.jobs[id]!;
  };
  const run = (id: string, signal = new AbortController().signal, o: { pane: typeof e | undefined } = { pane: e }) =>
    runPaneTurn({ env, journal, agents, outcomes }, store.data.jobs[id]!, o.pane, signal);
  const history = (id: string) => store.data.jobs[id]!.history.map((x) => x.state);
  /** A turn that a supervisor began and died in: its handover file written and `starting` recorded with `nonce`. */
  const startedBefore = async (id: string, nonce: string) => {
    const artifact = await writeArtifact(
      dirs.jaggersDir,
      { task: id, workflow: 'job', turn: 1, sourceAgent: null, sourceSession: null, targetAgent: 'coder', targetSession: null, created: 'then' },
      'do the thing',
    );
    // As prepareTurn records it: the task, its agent, the turn's prompt and the item's `starting`, in one entry.
    store.seed(
      { type: 'task-created', taskId: id, workflow: 'job' },
      { type: 'task-agent', taskId: id, agent: 'coder', terminalId: T },
      { type: 'turn', taskId: id, agent: 'coder', terminalId: T, sessionId: null, turn: 1, handoverFile: path.relative(root, artifact), direction: 'prompt' },
      { type: 'job-state', jobId: id, state: 'starting', reason: 'typing the prompt into coder', nonce, artifact: path.relative(root, artifact), turn: 1 },
    );
    return artifact;
  };
  const until = (id: string, state: string) => reaches(hub, store, id, state);
  return { root, store, agents, e, tui, hub, journal, outcomes, emitted, job, run, history, startedBefore, until };
}

describe("a work item's turn in a pane", () => {
  it('prepares, delivers, awaits and records, each phase journaled before the next begins', async () => {
    const h = await setup();
    await h.job('j-01', 'Write the tests.', { from: 'jg-b055', fromAgent: 'boss' });
    const seen: string[] = [];
    // What the registry says at each thing the pane sees.
    const paste = h.tui.paste.bind(h.tui);
    h.tui.paste = async (p, t) => (seen.push(`paste while ${h.store.data.jobs['j-01']!.state}`), paste(p, t));
    h.tui.autoReply = () => 'Tests written.';
    await h.run('j-01');
    expect(seen).toEqual(['paste while starting']);
    const j = h.store.data.jobs['j-01']!;
    expect(j.history.map((x) => [x.state, x.reason])).toEqual([
      ['queued', 'recorded'],
      ['starting', 'typing the prompt into coder'],
      ['running', 'coder took the prompt (busy)'],
      ['done', 'the agent finished its turn'],
    ]);
    expect(j).toMatchObject({ turn: 1, pid: 4242, agent: 'coder' });
    // The pointer names the handover file and carries the nonce recorded before it was typed.
    expect(h.tui.prompts).toEqual([`Read ${j.artifact} and do what it asks. [jg:${j.nonce}]`]);
    const handover = parseArtifact(await readFile(path.join(h.root, j.artifact!), 'utf8'));
    expect(handover.body).toBe('Write the tests.\n');
    expect(handover.meta).toMatchObject({ task: 'j-01', workflow: 'job', turn: 1, source_agent: 'boss', target_agent: 'coder' });
    expect(parseArtifact(await readFile(path.join(h.root, j.reply!), 'utf8')).body).toBe('Tests written.\n');
    // The starting entry also counts the turn for the task; the reply entry carries the result home.
    expect(h.store.of('turn').map((t) => t.direction)).toEqual(['prompt', 'reply']);
    const [home] = Object.values(h.store.data.messages);
    expect(home).toMatchObject({ to: 'jg-b055', job: 'j-01' });
    expect(h.emitted.map((x) => x.phase)).toEqual(['written', 'delivered', 'done']);
    expect(h.tui.confirmed).toEqual(['screen']);
    expect(h.outcomes.get('j-01')).toMatchObject({ confirmedBy: 'screen', replyFrom: 'screen', delivery: { evidence: 'busy', submits: 1 } });
  });

  it('after a crash in `starting` with its nonce on screen: it had gone in, and is not typed again', async () => {
    const h = await setup('busy');
    await h.job('j-01', 'x');
    await h.startedBefore('j-01', '0123456789abcdef');
    h.tui.lines.push('❯ Read .jaggers/handover/turn_1.md and do what it asks. [jg:0123456789abcdef]');
    const done = h.run('j-01');
    await h.until('j-01', 'running');
    expect(h.store.data.jobs['j-01']).toMatchObject({
      state: 'running',
      reason: 'coder had taken the prompt before the supervisor restarted (found-on-screen)',
    });
    h.tui.finish('Done before the restart.');
    await done;
    expect(h.tui.pasted).toEqual([]);
    expect(h.store.data.jobs['j-01']).toMatchObject({ state: 'done', nonce: '0123456789abcdef' });
    expect(parseArtifact(await readFile(path.join(h.root, h.store.data.jobs['j-01']!.reply!), 'utf8')).body).toBe('Done before the restart.\n');
  });

  it('after a crash in `starting` with its nonce nowhere: typed again under a new nonce, recorded first', async () => {
    const h = await setup();
    await h.job('j-01', 'x');
    const artifact = await h.startedBefore('j-01', '0123456789abcdef');
    h.tui.autoReply = () => 'ok';
    let nonceWhenTyped: string | null = null;
    const paste = h.tui.paste.bind(h.tui);
    h.tui.paste = async (p, t) => ((nonceWhenTyped = h.store.data.jobs['j-01']!.nonce), paste(p, t));
    await h.run('j-01');
    const j = h.store.data.jobs['j-01']!;
    expect(j.history.map((x) => [x.state, x.reason])).toEqual([
      ['queued', 'recorded'],
      ['starting', 'typing the prompt into coder'],
      ['starting', 'typing the prompt into coder again (the last try left no trace)'],
      ['running', 'coder took the prompt (busy)'],
      ['done', 'the agent finished its turn'],
    ]);
    expect(j.nonce).not.toBe('0123456789abcdef');
    expect(nonceWhenTyped).toBe(j.nonce);
    expect(h.tui.prompts).toHaveLength(1);
    expect(NONCE.exec(h.tui.prompts[0]!)?.[1]).toBe(j.nonce);
    // The same handover file, not a new one.
    expect(path.resolve(h.root, j.artifact!)).toBe(artifact);
  });

  it('a prompt the agent swallowed (no busy, no echo, not in its input box) and that is nowhere is typed once more under a new nonce', async () => {
    // gemini 0.61 under load: its ready-looking screen read idle, then it cleared it to load the
    // conversation, and the pointer typed meanwhile went nowhere.
    const h = await setup();
    Object.assign(h.e, { profile: testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 200, readyTimeoutMs: 5000 } }) });
    await h.job('j-01', 'x');
    h.tui.autoReply = () => 'ok';
    const paste = h.tui.paste.bind(h.tui);
    const nonces: (string | null | undefined)[] = [];
    h.tui.paste = async (p, t) => {
      nonces.push(h.store.data.jobs['j-01']!.nonce);
      if (nonces.length === 1) return void h.tui.pasted.push(t); // swallowed
      return paste(p, t);
    };
    await h.run('j-01');
    const j = h.store.data.jobs['j-01']!;
    expect(j.history.map((x) => [x.state, x.reason])).toEqual([
      ['queued', 'recorded'],
      ['starting', 'typing the prompt into coder'],
      ['starting', 'typing the prompt into coder again (the last try left no trace: no sign of it within 200 ms)'],
      ['running', 'coder took the prompt (busy)'],
      ['done', 'the agent finished its turn'],
    ]);
    // Each try typed under the nonce recorded before it; the one that went in is the item's.
    expect(h.tui.pasted).toHaveLength(2);
    expect(nonces[0]).not.toBe(nonces[1]);
    expect(nonces[1]).toBe(j.nonce);
    expect(h.tui.prompts.map((x) => NONCE.exec(x)?.[1])).toEqual([j.nonce]);
  });

  it('a prompt that left no trace twice fails the item; one still in the input box, or found on screen after all, is not typed again', async () => {
    const h = await setup();
    Object.assign(h.e, { profile: testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 200, readyTimeoutMs: 5000 } }) });
    await h.job('j-01', 'x');
    h.tui.paste = async (_p, t) => void h.tui.pasted.push(t); // every paste swallowed
    await h.run('j-01');
    expect(h.store.data.jobs['j-01']).toMatchObject({ state: 'failed', code: 'E_TIMEOUT' });
    expect(h.history('j-01')).toEqual(['queued', 'starting', 'starting', 'failed']);
    expect(h.tui.pasted).toHaveLength(2);

    // Seen in the input box (its Enter lost every time; the look comes 1.5 s after the key): not typed again.
    const b = await setup();
    Object.assign(b.e, { profile: testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 1700, readyTimeoutMs: 5000, maxSubmitRetries: 0 } }) });
    await b.job('j-02', 'x');
    b.tui.sendKeys = async (_p, keys) => void b.tui.keys.push([...keys]);
    await b.run('j-02');
    expect(b.store.data.jobs['j-02']).toMatchObject({ state: 'failed', code: 'E_TIMEOUT' });
    expect(b.store.data.jobs['j-02']!.reason).toContain('(it is still in the input box)');
    expect(b.tui.pasted).toHaveLength(1);

    // Its echo on screen when the wait ran out (no event told of it): it went in; the turn goes on.
    const c = await setup();
    Object.assign(c.e, { profile: testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 200, readyTimeoutMs: 5000 } }) });
    await c.job('j-03', 'x');
    c.tui.paste = async (_p, t) => {
      c.tui.pasted.push(t);
      c.tui.lines.push(`❯ ${t}`); // on screen, but no event told the delivery (and its first look comes after its wait)
    };
    const run = c.run('j-03');
    await c.until('j-03', 'running');
    expect(c.store.data.jobs['j-03']!.reason).toBe('coder took the prompt after all (found-on-screen)');
    c.tui.finish('late but done');
    await run;
    expect(c.store.data.jobs['j-03']).toMatchObject({ state: 'done' });
    expect(c.tui.pasted).toHaveLength(1);
  });

  it('a turn in flight after a restart is followed to its end; one whose agent was restarted meanwhile is lost', async () => {
    const h = await setup('busy');
    await h.job('j-01', 'x');
    await h.startedBefore('j-01', '0123456789abcdef');
    h.store.seed({ type: 'job-state', jobId: 'j-01', state: 'running', reason: 'took it', pid: 4242 });
    h.tui.lines.push('❯ Read it. [jg:0123456789abcdef]');
    const done = h.run('j-01');
    // It waits for the turn's end (the agent still busy), and then records it.
    await settle();
    h.tui.finish('Followed.');
    await done;
    expect(h.store.data.jobs['j-01']!.state).toBe('done');
    expect(h.tui.pasted).toEqual([]);

    await h.job('j-02', 'x');
    await h.startedBefore('j-02', '00000000000000aa');
    h.store.seed({ type: 'job-state', jobId: 'j-02', state: 'running', reason: 'took it', pid: 1111 });
    await h.run('j-02');
    expect(h.store.data.jobs['j-02']).toMatchObject({
      state: 'failed',
      code: 'E_PANE_GONE',
      cause: 'agent-lost',
      reason: "coder was restarted during the job's turn (pid 1111, now 4242): the turn was lost; assign it again",
    });
  });

  it('the agent asking a person makes the item waiting_input, and its answer running again', async () => {
    const h = await setup();
    await h.job('j-01', 'x');
    const states: string[] = [];
    h.hub.subscribe((e) => e.type === 'job' && states.push(String(e.data.state)));
    const done = h.run('j-01');
    await h.until('j-01', 'running');
    // Its turn is awaited now (the run follows what the agent asks from then on).
    await settle();
    h.tui.lines.push(' Do you want to proceed?', ' ❯ 1. Yes', '   2. No');
    // The watcher's last screen of the pane, as the table reads it.
    h.agents.screens.set(h.e.pane.paneId, h.tui.screen());
    h.tui.set('waiting_input');
    await h.until('j-01', 'waiting_input');
    expect(h.store.data.jobs['j-01']!.reason).toBe(
      'coder asks: "Do you want to proceed?" [1. Yes / 2. No]; answer it with `jaggers answer coder <number or label>`',
    );
    h.tui.set('busy');
    await h.until('j-01', 'running');
    h.tui.finish('Proceeded.');
    await done;
    expect(states).toEqual(['starting', 'running', 'waiting_input', 'running', 'done']);
  });

  it('a turn in a task named like a property of every object (`constructor`) is recorded under that task', async () => {
    const h = await setup();
    await h.job('j-01', 'x', { work: 'handoff', task: 'constructor', workflow: 'handoff' });
    h.tui.autoReply = () => 'ok';
    await h.run('j-01');
    expect(h.store.data.jobs['j-01']!.reason).toBe('the agent finished its turn');
    expect(Object.keys(h.store.data.tasks)).toEqual(['constructor']);
    expect(h.store.data.tasks.constructor).toMatchObject({ id: 'constructor', workflow: 'handoff', agents: { coder: { terminalId: T, turns: 1 } } });
  });

  it('fails with the reason and code when the pane is gone or dies during the turn; a cancelled run records nothing', async () => {
    const h = await setup();
    await h.job('j-01', 'x');
    await h.run('j-01', undefined, { pane: undefined });
    expect(h.store.data.jobs['j-01']).toMatchObject({
      state: 'failed',
      code: 'E_PANE_GONE',
      cause: 'agent-lost',
      reason: 'job j-01: coder has no window open',
    });

    await h.job('j-02', 'x', { work: 'handoff' });
    const done = h.run('j-02');
    await h.until('j-02', 'running');
    h.tui.set('exited');
    await done;
    expect(h.store.data.jobs['j-02']).toMatchObject({ state: 'failed', code: 'E_PANE_GONE' });
    expect(h.store.data.jobs['j-02']!.reason).toMatch(/^handoff: coder's pane died before its turn ended; the handover file stays at /);
    expect(h.emitted.at(-1)).toMatchObject({ phase: 'failed', job: 'j-02' });

    h.tui.set('idle');
    await h.job('j-03', 'x');
    const stop = new AbortController();
    const cancelled = h.run('j-03', stop.signal);
    await h.until('j-03', 'running');
    stop.abort();
    await cancelled;
    expect(h.store.data.jobs['j-03']!.state).toBe('running');
  });
});
