// Assign and forget on a real tmux server with fake agents: jobs for team agents and for worker windows
// of a profile, `maxWorkers`, cancel, waiting_input, results routed home by terminal id across a
// supervisor kill -9 and a restart of the assigning agent's window, and the inbox's bad input.
// The fake agents write every prompt they receive to FAKE_AGENT_PROMPTS: the ground truth of delivery.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthView, InboxView, JobResultView, JobView } from '../../src/api/types.js';
import { api, promptsReceived, readRegistry, untilEvent, waitPidGone } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

describe('assign and forget: jobs and the inbox', () => {
  let rig: Rig;
  let promptsFile: string;

  const received = () => promptsReceived(promptsFile);
  const jg = (args: string[], env?: NodeJS.ProcessEnv) => rig.run(args, env ? { env: { ...rig.env, ...env } } : {});
  const jobOf = async (id: string) => JSON.parse((await jg(['jobs', '--json'])).stdout).find((j: JobView) => j.id === id) as JobView;
  const until = <T>(check: () => Promise<T | null>, types: string, what: string) => untilEvent(api(rig), types, check, what);
  const untilState = async (id: string, states: string[]): Promise<JobView> =>
    until(
      async () => {
        const j = await api(rig).call<JobView>('GET', `/v1/jobs/${id}`);
        return states.includes(j.state) ? j : null;
      },
      'job',
      `job ${id} ${states.join('/')}`,
    );
  const inboxDelivered = async (agent: string): Promise<InboxView> =>
    until(
      async () => {
        const ib = JSON.parse((await jg(['inbox', agent, '--json'])).stdout) as InboxView;
        return ib.messages.length > 0 && ib.pending === 0 ? ib : null;
      },
      'message',
      `${agent}'s inbox delivered`,
    );

  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300', '--replies', 'work'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '2500', '--replies', 'work'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'slow' },
      ],
      maxWorkers: { fake: 1 },
    });
    expect((await jg(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  it('assign returns at once with a job id; jobs for one agent run one at a time, in order; wait and result give the reply', async () => {
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const r = await jg(['assign', 'alpha', '-m', `job number ${n}`, '--name', `n${n}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^j-[0-9a-f]{12}\n$/);
      ids.push(r.stdout.trim());
    }
    const w = await jg(['wait', ...ids, '--timeout', '60']);
    expect(w.code, w.stdout + w.stderr).toBe(0);
    const list = JSON.parse((await jg(['jobs', '--json'])).stdout) as JobView[];
    expect(list.map((j) => [j.id, j.name, j.state])).toEqual(ids.map((id, i) => [id, `n${i + 1}`, 'done']));
    // One at a time: each started after the one before it was done.
    for (let i = 1; i < list.length; i++) {
      const prevDone = list[i - 1]!.history.find((h) => h.state === 'done')!.at;
      const started = list[i]!.history.find((h) => h.state === 'running')!.at;
      expect(Date.parse(started)).toBeGreaterThanOrEqual(Date.parse(prevDone));
    }
    for (const j of list) expect(j.history.map((h) => h.state)).toEqual(['queued', 'starting', 'running', 'done']);
    const res = JSON.parse((await jg(['result', ids[1]!, '--json'])).stdout) as JobResultView;
    expect(res.reply).toContain('job number 2');
    expect(res.artifact).toMatch(/^\.jaggers\/handover\/turn_2_[0-9a-f]+\.md$/);
    expect((await jg(['result', ids[1]!])).stdout).toBe(`${res.reply}\n`);
    // Each prompt went to alpha once.
    const toAlpha = (await received()).filter((p) => p.agent === 'alpha');
    expect(toAlpha).toHaveLength(3);
  });

  it('a profile job gets its own worker window, pinned session and terminal id; maxWorkers queues the rest; the window closes unless --keep', async () => {
    const a = (await jg(['assign', 'fake', '-m', 'first worker job'])).stdout.trim();
    const b = (await jg(['assign', 'fake', '-m', 'second worker job', '--keep'])).stdout.trim();
    // maxWorkers is 1 for `fake`: the second waits while the first has its worker.
    const first = await untilState(a, ['running', 'done']);
    // (It may have started by now if the first was quick: the history below shows it waited.)
    expect((await jobOf(b)).history[0]?.state).toBe('queued');
    expect(first.agent).toBe(`fake-${a}`);
    expect(first.kind).toBe('worker');
    expect((await jg(['wait', a, b, '--timeout', '60'])).code).toBe(0);
    const [ja, jb] = [await jobOf(a), await jobOf(b)];
    expect(Date.parse(jb.history.find((h) => h.state === 'starting')!.at)).toBeGreaterThanOrEqual(Date.parse(ja.history.find((h) => h.state === 'done')!.at));
    const reg = readRegistry(rig.root);
    const ta = reg.terminals[ja.terminalId!]!;
    const tb = reg.terminals[jb.terminalId!]!;
    expect(ja.terminalId).not.toBe(jb.terminalId);
    expect([ta.agent, tb.agent]).toEqual([`fake-${a}`, `fake-${b}`]);
    expect(ta.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(tb.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ta.sessionId).not.toBe(tb.sessionId);
    expect(ta.task).toBe(a);
    // The first worker's window is gone, the kept one is still there and idle.
    const windows = await rig.tmux(['list-windows', '-t', rig.session, '-F', '#{window_name}']);
    expect(windows.split('\n')).not.toContain(`fake-${a}`);
    expect(windows.split('\n')).toContain(`fake-${b}`);
    const worker = (await received()).filter((p) => p.agent?.startsWith('fake-j-'));
    expect(worker.map((p) => p.agent)).toEqual([`fake-${a}`, `fake-${b}`]);
  });

  it('cancel works while queued and while running; an agent asking for permission makes its job waiting_input and names the window', async () => {
    const asking = (await jg(['assign', 'alpha', '-m', 'run the tool that needs-approval'])).stdout.trim();
    const queued = (await jg(['assign', 'alpha', '-m', 'never runs'])).stdout.trim();
    const waiting = await untilState(asking, ['waiting_input']);
    expect(waiting.attach).toBe('jaggers attach alpha');
    expect(waiting.reason).toMatch(
      /^alpha asks: "Allow execution of .*" \[1\. Allow once \/ 2\. Deny\]; answer it with `jaggers answer alpha <number or label>`$/,
    );
    expect((await jobOf(queued)).state).toBe('queued');
    const c1 = await jg(['cancel', queued]);
    expect(c1.code, c1.stderr).toBe(0);
    expect(c1.stdout).toMatch(/cancelled: cancelled by the user while queued/);
    const c2 = await jg(['cancel', asking, '--json']);
    expect((JSON.parse(c2.stdout) as JobView).state).toBe('cancelled');
    const w = await jg(['wait', asking, queued, '--timeout', '10']);
    expect(w.code).toBe(1);
    // The interrupt reached the agent (its menu answered with Escape), and the queued prompt never went in.
    await rig.waitForScreen('alpha', /denied/);
    expect((await received()).filter((p) => p.agent === 'alpha')).toHaveLength(1);
    // Cancelling again is no change.
    expect((await jg(['cancel', queued])).stdout).toMatch(/cancelled/);
    // A running one: beta thinks for 2.5 s.
    const running = (await jg(['assign', 'beta', '-m', 'a long one'])).stdout.trim();
    await untilState(running, ['running']);
    expect((await jg(['cancel', running])).code).toBe(0);
    await rig.waitForScreen('beta', /Interrupted\./);
    expect((await jobOf(running)).state).toBe('cancelled');
  });

  it("a handoff run in an agent's pane records that agent as its sender; run in another project's pane, a person's", async () => {
    const alpha = JSON.parse((await jg(['ls', '--json'])).stdout).find((r: { agent: string }) => r.agent === 'alpha') as { terminalId: string };
    const h = await jg(['handoff', 'beta', '-m', 'from alpha', '--no-wait', '--json'], { JAGGERS_TERMINAL_ID: alpha.terminalId });
    expect(h.code, h.stderr).toBe(0);
    const mine = (await jobOf((JSON.parse(h.stdout) as { job: string }).job))!;
    expect([mine.work, mine.from, mine.fromAgent]).toEqual(['handoff', alpha.terminalId, 'alpha']);
    const other = await jg(['handoff', 'beta', '-m', 'from elsewhere', '--no-wait', '--json'], { JAGGERS_TERMINAL_ID: 'jg-0e1sewhe' });
    expect(other.code, other.stderr).toBe(0);
    const theirs = (await jobOf((JSON.parse(other.stdout) as { job: string }).job))!;
    expect([theirs.work, theirs.from]).toEqual(['handoff', null]);
  });

  it('a job assigned by an agent survives a supervisor kill -9 mid-job and a restart of the assigner: the result comes home once', async () => {
    const alphaEnv = JSON.parse((await jg(['ls', '--json'])).stdout).find((r: { agent: string }) => r.agent === 'alpha') as { terminalId: string };
    // As alpha would run it from its pane: JAGGERS_TERMINAL_ID names the caller.
    const id = (await jg(['assign', 'beta', '-m', 'work for alpha'], { JAGGERS_TERMINAL_ID: alphaEnv.terminalId })).stdout.trim();
    await untilState(id, ['running']);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    process.kill(pid, 'SIGKILL');
    await waitPidGone(pid);
    // alpha's window is restarted meanwhile: its process dies, `up` starts it again with the same terminal id.
    const alphaPane = await rig.paneOf('alpha');
    const alphaPid = Number(await rig.tmux(['display-message', '-p', '-t', alphaPane, '#{pane_pid}']));
    process.kill(alphaPid, 'SIGKILL');
    await rig.waitForDead(alphaPane);
    expect((await jg(['up'])).code).toBe(0);
    const w = await jg(['wait', id, '--timeout', '60']);
    expect(w.code, w.stdout + w.stderr).toBe(0);
    const res = JSON.parse((await jg(['result', id, '--json'])).stdout) as JobResultView;
    expect(res.reply).toContain('work for alpha');
    // The result message reaches alpha (the same terminal id after `up`), exactly once.
    const ib = await inboxDelivered('alpha');
    expect(ib.terminalId).toBe(alphaEnv.terminalId);
    expect(ib.messages).toHaveLength(1);
    const m = ib.messages[0]!;
    expect([m.state, m.job, m.fromAgent]).toEqual(['delivered', id, 'beta']);
    const file = await readFile(path.join(rig.root, m.file), 'utf8');
    expect(file).toMatch(new RegExp(`Job ${id} that you assigned to beta is done`));
    const toAlpha = (await received()).filter((p) => p.agent === 'alpha' && p.prompt.includes(path.basename(m.file)));
    expect(toAlpha).toHaveLength(1);
    // beta got the job's prompt once, though the supervisor died while it worked on it.
    expect((await received()).filter((p) => p.agent === 'beta')).toHaveLength(1);
  });

  it('down while a job runs: the supervisor exits at once; after up, the turn lost with the agent fails and says so', async () => {
    const id = (await jg(['assign', 'beta', '-m', 'cut short'])).stdout.trim();
    await untilState(id, ['running']);
    const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
    expect((await jg(['down'])).code).toBe(0);
    // Nothing the running job waits for keeps the stopped supervisor alive.
    await waitPidGone(pid, 5000);
    expect((await jg(['up'])).code).toBe(0);
    const j = await untilState(id, ['failed']);
    expect(j.reason).toMatch(/beta was restarted during the job's turn \(pid \d+, now \d+\): the turn was lost; assign it again/);
  });

  it('bad input: unknown agent or profile, empty text, a 1 MB message, control characters and unicode arrive exactly', async () => {
    const unknown = await jg(['assign', 'nobody', '-m', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/"nobody" is neither an agent \(agents are alpha, beta\) nor a profile \(known profiles are .*fake/);
    const nobody = await jg(['message', 'nobody', '-m', 'x']);
    expect(nobody.stderr).toMatch(/message: unknown agent "nobody": agents are alpha, beta/);
    expect((await jg(['message', 'alpha', '-m', '  '])).stderr).toMatch(/message --message: the message is empty/);
    expect((await jg(['assign', 'alpha'])).stderr).toMatch(/give exactly one of --message TEXT or --file PATH/);
    expect((await jg(['message', 'alpha', '-m', 'x', '--from', 'ghost'])).stderr).toMatch(/--from: unknown agent "ghost"/);
    expect((await jg(['result', 'j-00000000'])).stderr).toMatch(/no job "j-00000000"/);
    const big = 'x'.repeat(1024 * 1024 - 10) + '\n€ end ✓\n';
    const hostile = 'ctrl \x01\x07\x1b[31mred\x1b[0m \u202e rtl \u0000 nul\ttab\r\nnext 🦊\n';
    const { writeFile } = await import('node:fs/promises');
    await writeFile(path.join(rig.root, 'big.txt'), big);
    const sent: string[] = [];
    for (const [text, args] of [
      [big, ['-f', 'big.txt']],
      [hostile, ['-m', hostile]],
    ] as const) {
      const r = await jg(['message', 'alpha', ...args, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const m = JSON.parse(r.stdout) as { id: string; file: string; bytes: number };
      expect(m.bytes).toBe(Buffer.byteLength(text));
      const body = (await readFile(path.join(rig.root, m.file), 'utf8')).replace(/^---\n[\s\S]*?\n---\n/, '');
      expect(body === text, 'the message file holds the text exactly').toBe(true);
      sent.push(m.id);
    }
    const ib = await inboxDelivered('alpha');
    expect(ib.messages.map((m) => [m.id, m.state])).toEqual(sent.map((id) => [id, 'delivered']));
    const got = (await received()).filter((p) => p.agent === 'alpha');
    expect(got.map((p) => sent.findIndex((id) => p.prompt.includes(id)))).toEqual([0, 1]);
  });
});

/** The supervisor killed with kill -9 (by its pid), and the registry as it left it: a test adds what a dying one would have left. */
async function killSupervisor(rig: Rig) {
  const { pid } = await api(rig).call<HealthView>('GET', '/v1/health');
  process.kill(pid, 'SIGKILL');
  await waitPidGone(pid);
  const { Registry } = await import('../../src/sessions/registry.js');
  return new Registry(path.join(rig.root, '.jaggers'));
}

// A supervisor killed after it claimed a message and typed its pointer, before it recorded the
// delivery: the next one must find the pointer on screen (submitted) and not type it again, or find
// it still sitting in the input box (never submitted) and type it once, with a new nonce.
describe('the inbox after a crash between claim and delivery', () => {
  let rig: Rig;
  let promptsFile: string;
  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    const { builtinProfilesDir } = await import('../../src/package-root.js');
    const demo = JSON.parse(await readFile(path.join(builtinProfilesDir, 'demo.json'), 'utf8')) as { session: Record<string, unknown> };
    // No transcript for jaggers to read: only the screen can tell (as with gemini, qwen and codex).
    const { transcript: _none, ...session } = demo.session;
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '1500'], { env: { FAKE_AGENT_PROMPTS: promptsFile }, session });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  /** As a supervisor that died would leave it: the message recorded and claimed, its pointer typed (and submitted or not). */
  const leftBehind = async (submit: boolean) => {
    const reg = await killSupervisor(rig);
    const { renderMessage, writeDurable } = await import('../../src/work/files.js');
    const to = Object.values((await reg.read()).terminals).find((t) => t.agent === 'alpha')!.terminalId;
    const id = 'm-0123456789ab';
    const nonce = 'feedc0de12345678';
    const file = `.jaggers/inbox/${id}.md`;
    const sent = new Date().toISOString();
    await writeDurable(path.join(rig.root, file), renderMessage({ id, fromAgent: 'user', from: null, toAgent: 'alpha', to, sent, job: null }, 'left behind\n'));
    await reg.record(
      { type: 'message-created', messageId: id, to, toAgent: 'alpha', from: null, fromAgent: 'user', file, bytes: 12, job: null },
      { type: 'message-claimed', messageId: id, nonce },
    );
    const pane = await rig.paneOf('alpha');
    await rig.tmux(['send-keys', '-t', pane, '-l', `Read ${file} and do what it asks. [jg:${nonce}]`]);
    if (submit) await rig.tmux(['send-keys', '-t', pane, 'Enter']);
    await rig.waitForScreen('alpha', submit ? /esc to interrupt|Worked for/ : new RegExp(`\\[jg:${nonce}\\]`));
    return { id, nonce };
  };
  /** `inbox` brings the supervisor back; its answer says whether the claim is settled. */
  const settled = (id: string) =>
    untilEvent(
      api(rig),
      'message',
      async () => {
        const ib = JSON.parse((await rig.run(['inbox', 'alpha', '--json'])).stdout) as InboxView;
        const m = ib.messages.find((x) => x.id === id)!;
        return m.state === 'delivered' ? m : null;
      },
      `message ${id} delivered`,
    );
  const prompts = async () => (await promptsReceived(promptsFile)).map((p) => p.prompt);

  it('submitted before the crash: found on screen, not typed again', async () => {
    const { id, nonce } = await leftBehind(true);
    const m = await settled(id);
    expect(m.how).toBe('found-on-screen');
    expect(m.claims).toBe(1);
    expect((await prompts()).filter((p) => p.includes(id))).toEqual([`Read .jaggers/inbox/${id}.md and do what it asks. [jg:${nonce}]`]);
  });

  it('left in the input box: cleared, then typed once with a new nonce', async () => {
    const { id, nonce } = await leftBehind(false);
    const m = await settled(id);
    expect(m.how).toBe('verified');
    expect(m.claims).toBe(2);
    expect(m.nonce).not.toBe(nonce);
    expect((await prompts()).filter((p) => p.includes(id))).toEqual([`Read .jaggers/inbox/${id}.md and do what it asks. [jg:${m.nonce}]`]);
  });
});

// A supervisor killed after the Enter of a job's pointer and before it recorded `running`, the pointer
// longer than 100 characters (as a host's agent gets it: `.jaggers/hosted/<session>/.jaggers/handover/...`,
// its nonce tag past the 100th), or so long that its echo wraps. The next supervisor must find the tag
// where the CLI shows and keeps the whole prompt (its echo while the agent thinks, its transcript once it
// answered) and not type the prompt again (CI: remote-workflow's host kill, far took the turn's prompt twice).
describe('a job after a crash between the Enter of a long pointer and `running`', () => {
  let rig: Rig;
  let promptsFile: string;
  beforeEach(async () => {
    rig = await Rig.create();
    promptsFile = path.join(rig.root, '..', 'prompts.jsonl');
    // quick answers at once; slow is still thinking when the next supervisor looks.
    await writeFakeProfile(rig.root, 'quick', ['--think-ms', '300'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '600000'], { env: { FAKE_AGENT_PROMPTS: promptsFile } });
    await writeProject(rig.root, {
      agents: [
        { name: 'quick', profile: 'quick' },
        { name: 'slow', profile: 'slow' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => rig.cleanup());

  /** As a supervisor that died would leave it: the job `starting` with its nonce, its pointer typed and submitted. */
  const leftBehind = async (agent: string, seen: RegExp, far: number) => {
    const reg = await killSupervisor(rig);
    const { renderArtifact } = await import('../../src/handover/artifact.js');
    const { writeDurable } = await import('../../src/work/files.js');
    const term = Object.values((await reg.read()).terminals).find((t) => t.agent === agent)!;
    const id = agent === 'quick' ? 'j-0123456789ab' : 'j-ba9876543210';
    const nonce = 'feedc0de12345678';
    const artifact = `.jaggers/handover/turn_1_0a1b2c-${'far'.repeat(far)}.md`;
    const created = new Date().toISOString();
    await writeDurable(path.join(rig.root, `.jaggers/jobs/${id}.md`), 'name two colours\n');
    const meta = { task: id, workflow: 'job', turn: 1, sourceAgent: null, sourceSession: null, targetAgent: agent, targetSession: term.sessionId, created };
    await writeDurable(path.join(rig.root, artifact), renderArtifact(meta, 'name two colours\n'));
    await reg.record(
      {
        type: 'job-created',
        jobId: id,
        name: null,
        target: agent,
        kind: 'agent',
        terminalId: term.terminalId,
        from: null,
        fromAgent: null,
        prompt: `.jaggers/jobs/${id}.md`,
        bytes: 17,
        timeoutMs: null,
        keep: false,
      },
      // As prepare records them (src/turns/artifacts.ts, writePrompt): the task, its agent, the turn.
      { type: 'task-created', taskId: id, workflow: 'job' },
      { type: 'task-agent', taskId: id, agent, terminalId: term.terminalId },
      { type: 'turn', taskId: id, agent, terminalId: term.terminalId, sessionId: term.sessionId, turn: 1, handoverFile: artifact, direction: 'prompt' },
      { type: 'job-state', jobId: id, state: 'starting', reason: 'typing the prompt', terminalId: term.terminalId, agent, nonce, artifact, turn: 1 },
    );
    const pointer = `Read ${artifact} and do what it asks. [jg:${nonce}]`;
    expect(pointer.length).toBeGreaterThan(100);
    const pane = await rig.paneOf(agent);
    await rig.tmux(['send-keys', '-t', pane, '-l', pointer]);
    await rig.tmux(['send-keys', '-t', pane, 'Enter']);
    await rig.waitForScreen(agent, seen);
    return { id, pointer };
  };
  const prompts = async (agent: string) => (await promptsReceived(promptsFile)).filter((p) => p.agent === agent).map((p) => p.prompt);
  /** `jobs` brings the next supervisor; then the job as soon as `ok` holds. */
  const followed = async (id: string, ok: (j: JobView) => boolean, what: string) => {
    expect((await rig.run(['jobs'])).code).toBe(0);
    return untilEvent(
      api(rig),
      'job',
      async () => {
        const v = await api(rig).call<JobView>('GET', `/v1/jobs/${id}`);
        return ok(v) ? v : null;
      },
      `job ${id} ${what}`,
    );
  };

  it('answered before the next supervisor looks: found in its transcript, recorded done, typed once', async () => {
    // 105 characters: the tag across the 100th.
    const { id, pointer } = await leftBehind('quick', /Worked for/, 12);
    expect(pointer.indexOf('[jg:')).toBeLessThan(100);
    const j = await followed(id, (v) => v.state === 'done' || v.state === 'failed', 'ended');
    expect(j.state, j.reason).toBe('done');
    expect(j.history.map((h) => h.reason)).toContain('quick had taken the prompt before the supervisor restarted (found-in-transcript)');
    expect(await prompts('quick')).toEqual([pointer]);
  });

  it('still thinking when the next supervisor looks: found on screen, followed as running, typed once', async () => {
    // 206 characters: the tag across the edge of the echo's first line (200 columns, 196 after ` > `),
    // where the CLIs break the line at the space before it.
    const { id, pointer } = await leftBehind('slow', /esc to cancel/, 41);
    expect(pointer.indexOf('[jg:')).toBeLessThan(196);
    expect(pointer.length).toBeGreaterThan(196);
    // Settled: running, or `starting` again under a new nonce (typed again).
    const j = await followed(id, (v) => v.state !== 'starting' || v.history.length > 2, 'settled');
    expect(j.state, j.reason).toBe('running');
    expect(j.reason).toBe('slow had taken the prompt before the supervisor restarted (found-on-screen)');
    expect(await prompts('slow')).toEqual([pointer]);
  });
});
