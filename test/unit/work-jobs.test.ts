// Work items as the API sees them (src/work/jobs.ts), on a fake registry, a fake table of panes, the
// real event hub and journal, and fake runner and workers: validation with codes and texts, where an
// item goes (an agent's queue or a worker), ids given twice, list/get/wait/result, cancel.
import { spawn } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import { renderArtifact } from '../../src/handover/artifact.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { writeDurable } from '../../src/work/files.js';
import { Jobs } from '../../src/work/jobs.js';
import { WorkJournal } from '../../src/work/journal.js';
import type { TerminalEntry } from '../../src/work/ports.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-jobs-');
const T = 'jg-c0de';

async function setup() {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder'), ...terminalEvents('jg-b055', 'boss'));
  const agents = new FakeAgents();
  const coder = agents.add({ agent: 'coder', terminalId: T }, 'idle');
  agents.add({ agent: 'boss', terminalId: 'jg-b055' }, 'idle');
  const hub = new EventHub();
  const log = recordingLog();
  const ended: JobRecord[] = [];
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async (j) => void ended.push(j) });
  const kicks: string[] = [];
  const aborted: string[] = [];
  let pumps = 0;
  const interrupted: TerminalEntry[] = [];
  const profiles = new Set(['claude', 'codex']);
  const jobs = new Jobs({
    store,
    journal,
    agents,
    hub,
    log,
    dirs,
    runner: {
      kick: (t) => void kicks.push(t),
      waiting: (t, id) => `waits in ${t} (${id})`,
      abort: (id) => void aborted.push(id),
    },
    workers: { pump: () => void pumps++, waiting: (j) => `waiting for a ${j.target} worker slot (maxWorkers)` },
    checkProfile: async (name) => {
      if (name === 'broken') throw new JaggersError('E_PROFILE_INVALID', 'profiles/broken.json: field `command` must be a string');
      if (!profiles.has(name)) throw new JaggersError('E_PROFILE_UNKNOWN', `unknown profile ${JSON.stringify(name)}: known profiles: claude, codex`);
    },
    interrupt: async (e) => void interrupted.push(e),
    untilEvent: (match, ms) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        const off = hub.subscribe((e) => match(e) && done());
        function done() {
          clearTimeout(timer);
          off();
          resolve();
        }
      }),
  });
  return { root, dirs, store, agents, coder, hub, journal, jobs, kicks, aborted, interrupted, ended, pumps: () => pumps };
}

async function refused(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: (e as JaggersError).code, message: (e as Error).message };
  }
  throw new Error('expected a refusal');
}

describe('creating work items', () => {
  it('records the prompt file and the item, and kicks the agent’s queue', async () => {
    const h = await setup();
    const v = await h.jobs.create({ target: 'coder', text: 'write the tests\n', name: 'tests', timeout: 90, from: 'boss' });
    expect(v).toMatchObject({
      target: 'coder',
      kind: 'agent',
      terminalId: T,
      state: 'queued',
      work: 'job',
      from: 'jg-b055',
      fromAgent: 'boss',
      timeoutMs: 90_000,
    });
    expect(v.waiting).toBe(`waits in ${T} (${v.id})`);
    expect(v.prompt).toBe(`.jaggers/jobs/${v.id}.md`);
    expect(await readFile(path.join(h.root, v.prompt), 'utf8')).toBe('write the tests\n');
    expect(v.bytes).toBe(16);
    expect(h.kicks).toEqual([T]);
    expect(h.pumps()).toBe(0);
  });

  it('refuses a bad id, an empty text and an unknown agent, each with its code and what was wrong', async () => {
    const h = await setup();
    expect(await refused(h.jobs.create({ id: 'j-1', target: 'coder', text: 'x' }))).toEqual({
      code: 'E_USAGE',
      message: 'job id must look like j-0123456789ab, got "j-1"',
    });
    expect(await refused(h.jobs.create({ target: 'coder', text: '  \n' }))).toEqual({ code: 'E_USAGE', message: 'assign: the prompt is empty' });
    expect(await refused(h.jobs.create({ target: 'coder', text: '', work: 'send' }))).toEqual({ code: 'E_USAGE', message: 'send: the text is empty' });
    expect(await refused(h.jobs.create({ target: 'nobody', text: 'x', work: 'handoff' }))).toEqual({
      code: 'E_AGENT_UNKNOWN',
      message: 'handoff: unknown agent "nobody": agents are boss, coder',
    });
    // An assign may name a profile: neither is an agent unknown as both.
    expect(await refused(h.jobs.create({ target: 'nobody', text: 'x' }))).toEqual({
      code: 'E_AGENT_UNKNOWN',
      message: 'assign: "nobody" is neither an agent (agents are boss, coder) nor a profile (known profiles: claude, codex)',
    });
    // A profile that exists and does not load says so.
    expect(await refused(h.jobs.create({ target: 'broken', text: 'x' }))).toEqual({
      code: 'E_PROFILE_INVALID',
      message: 'profiles/broken.json: field `command` must be a string',
    });
    expect(await refused(h.jobs.create({ target: 'coder', text: 'x', from: 'nobody' }))).toMatchObject({
      code: 'E_AGENT_UNKNOWN',
      message: 'assign --from: unknown agent "nobody": agents are boss, coder',
    });
    expect(await refused(h.jobs.create({ target: 'coder', text: 'x', fromTerminal: 'jg-dead' }))).toMatchObject({
      code: 'E_AGENT_UNKNOWN',
      message: 'assign: the caller\'s JAGGERS_TERMINAL_ID "jg-dead" is not a terminal of this project',
    });
    expect(await refused(h.jobs.create({ target: 'claude', text: 'x', headless: true }))).toEqual({
      code: 'E_USAGE',
      message: 'assign --headless needs an agent with a pinned conversation, not the profile claude',
    });
    expect(h.store.of('job-created')).toEqual([]);
    expect(h.kicks).toEqual([]);
  });

  it('an item for a profile is a worker: no terminal yet, handed to the workers, not to a queue', async () => {
    const h = await setup();
    const v = await h.jobs.create({ target: 'claude', text: 'fix it' });
    expect(v).toMatchObject({ kind: 'worker', terminalId: null, agent: null, target: 'claude', state: 'queued' });
    expect(v.waiting).toBe('waiting for a claude worker slot (maxWorkers)');
    expect(h.pumps()).toBe(1);
    expect(h.kicks).toEqual([]);
  });

  it('an id given twice records the item once, sequentially or at the same time', async () => {
    const h = await setup();
    const a = await h.jobs.create({ id: 'j-0123abcd', target: 'coder', text: 'one' });
    const b = await h.jobs.create({ id: 'j-0123abcd', target: 'coder', text: 'two' });
    expect(b.id).toBe(a.id);
    const [c, d] = await Promise.all([
      h.jobs.create({ id: 'j-4567abcd', target: 'coder', text: 'three' }),
      h.jobs.create({ id: 'j-4567abcd', target: 'coder', text: 'three' }),
    ]);
    expect(c.id).toBe(d.id);
    expect(h.store.of('job-created').map((e) => e.jobId)).toEqual(['j-0123abcd', 'j-4567abcd']);
    expect(await readFile(path.join(h.root, a.prompt), 'utf8')).toBe('one');
  });

  it('takes `__proto__` and `constructor` as plain names: refused as ids and unknown as targets, never a crash', async () => {
    const h = await setup();
    for (const bad of ['__proto__', 'constructor', 'hasOwnProperty']) {
      expect((await refused(h.jobs.create({ id: bad, target: 'coder', text: 'x' }))).code).toBe('E_USAGE');
      expect((await refused(h.jobs.create({ target: bad, text: 'x' }))).code).toBe('E_AGENT_UNKNOWN');
      expect((await refused(h.jobs.create({ target: bad, text: 'x', work: 'handoff' }))).code).toBe('E_AGENT_UNKNOWN');
      expect((await refused(h.jobs.create({ target: 'coder', text: 'x', from: bad }))).code).toBe('E_AGENT_UNKNOWN');
      expect((await refused(h.jobs.create({ target: 'coder', text: 'x', fromTerminal: bad }))).code).toBe('E_AGENT_UNKNOWN');
      expect((await refused(h.jobs.get(bad))).code).toBe('E_NOT_FOUND');
      expect((await refused(h.jobs.cancel(bad))).code).toBe('E_NOT_FOUND');
      expect((await refused(h.jobs.result(bad))).code).toBe('E_NOT_FOUND');
    }
    expect(h.store.of('job-created')).toEqual([]);
    // As a task's name it is a name like any other.
    const v = await h.jobs.create({ target: 'coder', text: 'x', task: 'constructor', workflow: 'w' });
    expect(v).toMatchObject({ task: 'constructor', work: 'turn', terminalId: T });
  });
});

describe('following work items', () => {
  it('lists and gets items; a waiting one says how to attach', async () => {
    const h = await setup();
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    const b = await h.jobs.create({ target: 'claude', text: 'b' });
    expect((await h.jobs.list()).map((j) => j.id)).toEqual([a.id, b.id]);
    await h.journal.change(a.id, 'waiting_input', 'coder asks: Allow? (Yes / No)');
    expect(await h.jobs.get(a.id)).toMatchObject({ state: 'waiting_input', attach: 'jaggers attach coder', waiting: null });
    const miss = await refused(h.jobs.get('j-99999999'));
    expect(miss.code).toBe('E_NOT_FOUND');
    expect(miss.message).toMatch(/^no job "j-99999999" in this project \(see `jaggers jobs`; of ended jobs only the newest 500 are kept/);
  });

  it('wait() returns at once for an ended item, else at its end (or as it is when the time runs out)', async () => {
    const h = await setup();
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    const waited = h.jobs.wait(a.id, 60_000);
    await settle();
    await h.journal.change(a.id, 'running', 'took it');
    await h.journal.change(a.id, 'done', 'finished');
    expect((await waited).state).toBe('done');
    expect((await h.jobs.wait(a.id, 60_000)).state).toBe('done');
    const b = await h.jobs.create({ target: 'coder', text: 'b' });
    expect((await h.jobs.wait(b.id, 1)).state).toBe('queued');
  });

  it("result() reads the reply artifact's body; an item without a reply has none; a reply gone is E_NOT_FOUND", async () => {
    const h = await setup();
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    expect(await h.jobs.result(a.id)).toMatchObject({ reply: null, artifact: null, job: { id: a.id } });
    const reply = '.jaggers/handover/turn_2_abc.md';
    const meta = { task: 't', workflow: 'job', turn: 2, sourceAgent: 'coder', sourceSession: null, targetAgent: 'user', targetSession: null, created: 'now' };
    await writeDurable(path.join(h.root, reply), renderArtifact(meta, 'It is done.\n'));
    await h.journal.change(a.id, 'done', 'finished', { reply });
    expect(await h.jobs.result(a.id)).toMatchObject({ reply: 'It is done.', artifact: reply });
    const b = await h.jobs.create({ target: 'coder', text: 'b' });
    await h.journal.change(b.id, 'done', 'finished', { reply: '.jaggers/handover/gone.md' });
    expect(await refused(h.jobs.result(b.id))).toEqual({ code: 'E_NOT_FOUND', message: `job ${b.id}: its reply: ".jaggers/handover/gone.md" does not exist` });
  });

  it('result() reads a reply only as read_artifact would: a reply turned into a link to a secret out of .jaggers/ is refused', async () => {
    const h = await setup();
    const secret = path.join(h.root, 'secret.txt');
    await writeFile(secret, 'the secret');
    await mkdir(path.join(h.root, '.jaggers', 'handover'), { recursive: true });
    await symlink(secret, path.join(h.root, '.jaggers', 'handover', 'turn_2_abc.md'));
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    await h.journal.change(a.id, 'done', 'finished', { reply: '.jaggers/handover/turn_2_abc.md' });
    expect(await refused(h.jobs.result(a.id))).toEqual({
      code: 'E_FILE_REFUSED',
      message: `job ${a.id}: its reply: ".jaggers/handover/turn_2_abc.md" is a symbolic link, not a regular file`,
    });
  });
});

describe('cancelling work items', () => {
  it('a queued item never starts: cancelled, and the runner stops following it; its agent is not interrupted', async () => {
    const h = await setup();
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    const v = await h.jobs.cancel(a.id);
    expect(v).toMatchObject({ state: 'cancelled', reason: 'cancelled by the user while queued', code: 'E_CANCELLED' });
    expect(h.aborted).toEqual([a.id]);
    expect(h.interrupted).toEqual([]);
    expect(h.ended.map((j) => j.id)).toEqual([a.id]);
    // Cancelling it again changes nothing.
    expect((await h.jobs.cancel(a.id, 'someone else')).reason).toBe('cancelled by the user while queued');
  });

  it('an item in flight gets its agent interrupted; a send is not interrupted (it only types)', async () => {
    const h = await setup();
    const a = await h.jobs.create({ target: 'coder', text: 'a' });
    await h.journal.change(a.id, 'running', 'took it');
    const v = await h.jobs.cancel(a.id, 'boss');
    expect(v.reason).toBe('cancelled by boss while running; the agent was interrupted');
    expect(h.interrupted.map((e) => e.pane.paneId)).toEqual([h.coder.pane.paneId]);
    const s = await h.jobs.create({ target: 'coder', text: 'hello', work: 'send' });
    await h.journal.change(s.id, 'starting', 'typing');
    await h.jobs.cancel(s.id);
    expect(h.interrupted).toHaveLength(1);
    // A dead pane is not interrupted either.
    const b = await h.jobs.create({ target: 'coder', text: 'b' });
    await h.journal.change(b.id, 'running', 'took it');
    h.agents.kill(T);
    await h.jobs.cancel(b.id);
    expect(h.interrupted).toHaveLength(1);
  });

  it('a headless run in flight is stopped: its process group gets SIGTERM and the record says so', async () => {
    const h = await setup();
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_c, sig) => r(sig)));
    const a = await h.jobs.create({ target: 'coder', text: 'a', work: 'handoff', headless: true });
    await h.journal.change(a.id, 'running', 'runs headless', { pid: child.pid! });
    const v = await h.jobs.cancel(a.id);
    expect(v.reason).toBe('cancelled by the user while running; its headless run was stopped');
    expect(await exited).toBe('SIGTERM');
    expect(h.interrupted).toEqual([]);
  });
});
