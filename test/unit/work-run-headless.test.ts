// A headless work item (src/work/run-headless.ts) with a real `sh` for the agent's CLI (no tmux): its
// phases journaled, its run's files under .jaggers/work/<id>/, the pane's TUI stopped and resumed around
// it, and a supervisor restarted during the run waiting for the status file instead of running it again.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnEventData } from '../../src/api/types.js';
import { parseArtifact } from '../../src/handover/artifact.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import type { HeadlessPane } from '../../src/turns/headless.js';
import type { TurnEnv } from '../../src/turns/turn.js';
import { writeDurable } from '../../src/work/files.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Outcomes } from '../../src/work/outcomes.js';
import { runHeadless } from '../../src/work/run-headless.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { FakeAgents, FakeStore, jobEvent, reaches, recordingLog, terminalEvents } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-run-headless-');
const T = 'jg-c0de';
const SESSION = '11111111-2222-3333-4444-555555555555';

// The agent's CLI: counts its runs, waits for $GATE when it is set (a file the test creates), then
// prints its reply, or fails with $FAIL as its exit status.
// With $LIMIT (a file): the first run prints the file's words (a usage limit) and exits $LIMIT_EXIT (1 by default).
const CLI = [
  'echo run >> "$COUNT"',
  'if [ -n "$LIMIT" ] && [ ! -e "$LIMIT.shown" ]; then : > "$LIMIT.shown"; cat "$LIMIT"; exit "${LIMIT_EXIT:-1}"; fi',
  'if [ -n "$GATE" ]; then while [ ! -e "$GATE" ]; do sleep 0.02; done; fi',
  'if [ -n "$FAIL" ]; then echo "model overloaded" >&2; exit "$FAIL"; fi',
  'printf "Reply to <%s> in %s\\n" "$2" "$1"',
].join('\n');

async function setup(o: { pinned?: boolean; pane?: boolean; env?: Record<string, string> } = {}) {
  const root = await temp();
  const dirs = { projectRoot: root, jaggersDir: path.join(root, '.jaggers') };
  const profile = ProfileSchema.parse({ name: 'hl', command: 'sh', session: { headlessArgs: ['-c', CLI, 'fake-cli', '{sessionId}', '{prompt}'] } });
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder', { cwd: root, profile: 'hl', ...(o.pinned === false ? {} : { sessionId: SESSION }) }));
  const agents = new FakeAgents();
  const e = o.pane ? agents.add({ agent: 'coder', terminalId: T, profile }, 'idle') : undefined;
  const tui = new FakeTui(e?.pane.paneId ?? '%0', profile, 'idle');
  const hub = new EventHub();
  const log = recordingLog();
  const journal = new WorkJournal({ store, hub, log, dirs, ended: async () => {} });
  const emitted: TurnEventData[] = [];
  const env: TurnEnv = { io: tui, watch: tui, registry: store, ...dirs, log, emit: (d) => void emitted.push(d), homeOf: async () => root };
  const count = path.join(root, 'runs.txt');
  const paneCalls: string[] = [];
  const pane: HeadlessPane = {
    stop: async () => void paneCalls.push('stop'),
    hold: () => void paneCalls.push('hold'),
    resume: async (sessionId, conversation) => void paneCalls.push(`resume ${sessionId} ${conversation}`),
  };
  const launches: string[] = [];
  const ports = {
    env,
    journal,
    outcomes: new Outcomes(),
    profile: async () => profile,
    launch: async (terminalId: string, task: string) => {
      launches.push(`${terminalId} ${task}`);
      return { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', COUNT: count, ...o.env }, args: [], cwd: root };
    },
    pane: () => pane,
  };
  await writeDurable(path.join(root, '.jaggers', 'jobs', 'j-01.md'), 'Summarize the repo.');
  store.seed(jobEvent('j-01', { terminalId: T, work: 'handoff', headless: true, task: 't-1', workflow: 'handoff' }));
  const run = (signal = new AbortController().signal) => runHeadless(ports, store.data.jobs['j-01']!, e, signal);
  const j = () => store.data.jobs['j-01']!;
  const runs = async () => (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  const work = path.join(dirs.jaggersDir, 'work', 'j-01');
  return { root, store, hub, e, tui, journal, emitted, run, j, runs, work, paneCalls, launches, until: (s: string) => reaches(hub, store, 'j-01', s) };
}

describe('a headless work item', () => {
  it('runs the CLI once in the pinned conversation, leaves its output under .jaggers/work/<id>/ and records the reply', async () => {
    const h = await setup();
    await h.run();
    const j = h.j();
    expect(j.history.map((x) => x.state)).toEqual(['queued', 'starting', 'running', 'done']);
    expect(j.reason).toBe('the headless run finished');
    expect(j.pid).toBeGreaterThan(0);
    expect((await readdir(h.work)).sort()).toEqual(['1.err', '1.json', '1.out', '1.pid', '1.status']);
    expect((await readFile(path.join(h.work, '1.status'), 'utf8')).trim()).toBe('0');
    expect(Number(await readFile(path.join(h.work, '1.pid'), 'utf8'))).toBe(j.pid);
    const pointer = `Read ${j.artifact} and do what it asks. [jg:${j.nonce}]`;
    expect(await readFile(path.join(h.work, '1.out'), 'utf8')).toBe(`Reply to <${pointer}> in ${SESSION}\n`);
    expect(JSON.parse(await readFile(path.join(h.work, '1.json'), 'utf8'))).toMatchObject({ command: 'sh', n: 1, sessionId: SESSION, usesFile: false });
    const reply = parseArtifact(await readFile(path.join(h.root, j.reply!), 'utf8'));
    expect(reply.body).toBe(`Reply to <${pointer}> in ${SESSION}\n`);
    expect(reply.meta).toMatchObject({ task: 't-1', turn: 2, source_agent: 'coder', source_session: SESSION });
    expect(await h.runs()).toBe(1);
    expect(h.launches).toEqual([`${T} t-1`]);
    expect(h.emitted.map((x) => x.phase)).toEqual(['delivered', 'done']);
  });

  it("stops the agent's TUI in its pane for the run and resumes it in the conversation afterwards", async () => {
    const h = await setup({ pane: true });
    await h.run();
    expect(h.j().state).toBe('done');
    expect(h.paneCalls).toEqual(['stop', `resume ${SESSION} true`]);
  });

  it('a supervisor restarted during the run waits for its status file instead of running the CLI again', async () => {
    const gate = path.join(await temp(), 'gate');
    const h = await setup({ pane: true, env: { GATE: gate } });
    const first = new AbortController();
    const one = h.run(first.signal);
    await h.until('running');
    const pid = h.j().pid;
    // The supervisor stops: it leaves the run as the journal says, the CLI goes on.
    first.abort();
    await one;
    expect(h.j().state).toBe('running');
    expect(h.paneCalls).toEqual(['stop']);
    // The next supervisor follows the same item from `running`.
    const two = h.run();
    await new Promise((r) => setImmediate(r));
    await writeFile(gate, '');
    await two;
    expect(h.j()).toMatchObject({ state: 'done', pid });
    expect(await h.runs()).toBe(1);
    expect(h.launches).toHaveLength(1);
    expect(existsSync(path.join(h.work, '2.json'))).toBe(false);
    // The pane still holds its placeholder: told so, then resumed at the end.
    expect(h.paneCalls).toEqual(['stop', 'hold', `resume ${SESSION} true`]);
  });

  it("files an agent put in the run's folder (a FIFO where its attempt and pid files go) are never waited on", async () => {
    const h = await setup({ pane: true });
    await mkdir(h.work, { recursive: true, mode: 0o700 });
    for (const name of ['1.json', '2.json', '1.json.tmp', '1.pid']) execFileSync('mkfifo', [path.join(h.work, name)]);
    await h.run();
    expect(h.j().state).toBe('done');
    expect(await h.runs()).toBe(1);
  });

  it('fails with the exit status and the end of stderr when the CLI fails; the pane gets its TUI back', async () => {
    const h = await setup({ pane: true, env: { FAIL: '3' } });
    await h.run();
    expect(h.j()).toMatchObject({ state: 'failed', code: 'E_FILE' });
    expect(h.j().reason).toMatch(/^handoff \(headless\): sh exited 3: model overloaded; the handover file stays at \.jaggers\/handover\/turn_1_[0-9a-f]+\.md$/);
    // Resumed as it was: the conversation has no turn yet (the run that failed made none).
    expect(h.paneCalls).toEqual(['stop', `resume ${SESSION} false`]);
  });

  it.each([
    ['exits 1 with the limit on stdout (claude -p)', "You've hit your session limit · resets 10:14pm (UTC)", '1'],
    ["exits 0 with a limit's message as its whole reply", '[API Error: 429 Rate limit reached]', '0'],
  ])('a run that stopped at a usage limit (%s): the agent is limited, the item waits and runs again once', async (_what, words, exit) => {
    const limit = path.join(await temp(), 'limit.txt');
    await writeFile(limit, `${words}\n`);
    const h = await setup({ pane: true, env: { LIMIT: limit, LIMIT_EXIT: exit } });
    await h.run();
    const j = h.j();
    expect(j).toMatchObject({ state: 'queued', reply: null, limited: { cuts: 1, terminalId: T } });
    expect(j.reason).toMatch(new RegExp(`^its turn was cut by coder's usage limit \\(${words.replace(/[()[\]|.]/g, '\\$&')}\\): it runs again `));
    expect(j.history.map((x) => x.state)).toEqual(['queued', 'starting', 'running', 'queued']);
    // The pane's machine is told (it becomes limited), after the TUI came back.
    expect(h.tui.limitsSeen).toEqual([{ lines: [words], by: 'headless' }]);
    expect(h.paneCalls).toEqual(['stop', `resume ${SESSION} ${exit === '0'}`]);
    expect(Object.values(h.store.data.messages)).toEqual([]);
    // Its run's files are kept aside; the next run starts anew and answers.
    expect(existsSync(path.join(`${h.work}-cut1`, '1.out'))).toBe(true);
    await h.run();
    expect(h.j()).toMatchObject({ state: 'done', limited: { cuts: 1 } });
    expect(await h.runs()).toBe(2);
    expect(parseArtifact(await readFile(path.join(h.root, h.j().reply!), 'utf8')).body).toMatch(/^Reply to </);
  });

  it('refuses an agent with no pinned conversation (and no way to learn one) before anything runs', async () => {
    const h = await setup({ pinned: false });
    await h.run();
    expect(h.j()).toMatchObject({ state: 'failed', code: 'E_NOT_PINNED', reason: `handoff (headless): agent coder (${T}) has no pinned session yet` });
    expect(await h.runs()).toBe(0);
  });
});
