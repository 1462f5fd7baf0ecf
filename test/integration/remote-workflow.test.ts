// A workflow whose two roles are on two hosts (docs/workflows.md, docs/hosts.md), against a real sshd on
// loopback (test/helpers/remote-rig.ts): `collaborative` with `near` here (a task window of its own) and
// `far` on host box (the throwaway user's fake agent, through that host's supervisor). The remote turn
// is forwarded under its id with the local reply it reads carried there; its reply comes back here for
// the last turn, here. Then the same workflow through a `kill -9` of the local supervisor (by pid) at a
// random moment of the remote turn and again of the local turn after it: the next supervisor follows
// each turn to its end, and each agent took each of its prompts once (the fake agents' prompt logs).
// And the same through a `kill -9` of the host's supervisor during the remote turn: this one starts it
// again there (src/hosts/keeper.ts), which follows the turn to its end; once at a random moment, and once
// the moment far took the prompt, before that supervisor saw it taken (far's pointer is 105 characters,
// its nonce tag past the 100th: CI once saw it typed twice there, when the fake agent cut its echo at 100).
import { readFileSync, statSync, watch } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { hostSocketPath } from '../../src/api/paths.js';
import type { HealthView, JobResultView, JobView, TaskView } from '../../src/api/types.js';
import { turnJobId } from '../../src/workflows/task-view.js';
import { api } from '../helpers/api.js';
import { promptsOf as prompts, startRemoteRig, until, type RemoteRig } from '../helpers/remote-rig.js';
import { sshdSkipReason } from '../helpers/sshd.js';

const skip = sshdSkipReason();

/**
 * The process has ended: gone, or a zombie. After a `kill -9` the thread-group leader shows `Z` while its
 * other threads still tear the process down (seen: `exit_mmap` unmapping the heap, and the pool's threads
 * leaving their futex waits), and only then can the tmux server reap it; on a loaded machine that took
 * seconds. The kill took effect at the `Z`: nothing of the supervisor runs any more.
 */
function dead(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

describe.skipIf(skip !== null)(`a workflow across two hosts${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let r: RemoteRig;
  let nearPrompts: string;
  let farPrompts: string;
  beforeAll(async () => {
    r = await startRemoteRig();
    farPrompts = path.join(r.proj, 'far-prompts.jsonl');
    ({ nearPrompts } = await r.upTeam({ args: ['--boot-ms', '50', '--think-ms', '1500'], env: { FAKE_AGENT_PROMPTS: farPrompts } }));
  }, 120_000);
  afterAll(async () => {
    await r?.stop();
  }, 60_000);

  const local = () => api(r.rig);
  const far = () => new ApiClient({ socketPath: hostSocketPath(path.join(r.rig.root, '.jaggers'), 'box') }, r.rig.session);
  /** The host's project: `<dir>/.jaggers/hosted/<session>`. */
  const remoteRoot = () => path.join(r.proj, '.jaggers', 'hosted', r.rig.session);
  const job = (id: string) => local().call<JobView>('GET', `/v1/jobs/${id}`);
  /** Every turn of the task done once, each by its first job (none made again), with its reply here. */
  async function checkTurns(task: string): Promise<JobView[]> {
    const v = await local().call<TaskView>('GET', `/v1/tasks/${task}`);
    expect(v.status, JSON.stringify(v)).toBe('done');
    expect(v.turns.map((t) => [t.step, t.agent, t.state])).toEqual([
      ['propose', 'near', 'done'],
      ['critique', 'far', 'done'],
      ['synthesize', 'near', 'done'],
    ]);
    const jobs = await Promise.all([1, 2, 3].map((n) => job(turnJobId(task, n, 1))));
    for (const j of jobs)
      expect(
        j.history.filter((x) => x.state === 'done'),
        JSON.stringify(j.history),
      ).toHaveLength(1);
    const all = await local().call<JobView[]>('GET', '/v1/jobs');
    expect(all.filter((j) => j.task === task).map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    expect(v.final).toBe(jobs[2]!.reply);
    return jobs;
  }

  /** A detached `collaborative` run: its task, its remote turn's job, and how many prompts each agent had taken before it. */
  async function runDetached(message: string) {
    const before = { near: prompts(nearPrompts).length, far: prompts(farPrompts).length };
    const run = await r.rig.run(['run', 'collaborative', '-m', message, '--agents', 'near,far', '--detach', '--json'], { env: r.env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout) as TaskView).id;
    return { before, id, jid: turnJobId(id, 2, 1) };
  }

  it("runs to its end: the remote turn's handover file written there with the local reply it reads, its reply copied here for the next turn", async () => {
    const run = await r.rig.run(['run', 'collaborative', '-m', 'name three prime numbers', '--agents', 'near,far', '--json'], { env: r.env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const task = (JSON.parse(run.stdout) as TaskView).id;
    const [propose, critique, synthesize] = await checkTurns(task);
    // The remote turn: an item for far on box here, run there under the same id.
    expect(critique).toMatchObject({ agent: 'far', host: 'box', terminalId: 'far@box', work: 'turn', reply: `.jaggers/jobs/${critique!.id}.reply.md` });
    expect(critique!.carry).toEqual([propose!.reply]);
    const there = await far().call<JobView>('GET', `/v1/jobs/${critique!.id}`);
    expect(there).toMatchObject({ work: 'handoff', state: 'done', task, workflow: 'collaborative' });
    // Its handover file is there, and points at the proposal carried there (written by the host's user).
    const handover = readFileSync(path.join(remoteRoot(), there.artifact!), 'utf8');
    const carried = path.join(remoteRoot(), '.jaggers', 'handover', 'carried', critique!.id, path.basename(propose!.reply!));
    expect(handover).toContain(carried);
    expect(handover).not.toContain(propose!.reply!);
    expect(readFileSync(carried, 'utf8')).toBe(readFileSync(path.join(r.rig.root, propose!.reply!), 'utf8'));
    expect(statSync(carried).uid).toBe(r.sshd.uid);
    // Its reply, copied here, is what the host recorded, and the next turn (here) read it by that file.
    const reply = (await far().call<JobResultView>('GET', `/v1/jobs/${critique!.id}/result`)).reply!;
    expect((await local().call<JobResultView>('GET', `/v1/jobs/${critique!.id}/result`)).reply).toBe(reply);
    expect(readFileSync(path.join(r.rig.root, synthesize!.artifact!), 'utf8')).toContain(critique!.reply!);
    // Each agent took each of its prompts once: near two, far one.
    expect(prompts(nearPrompts)).toHaveLength(2);
    expect(prompts(farPrompts)).toHaveLength(1);
    expect(prompts(farPrompts)[0]).toContain(there.artifact!.replace(/^\.jaggers\//, ''));
  }, 180_000);

  it('resumes after a kill -9 of the local supervisor during the remote turn and again during the local turn after it: each turn once', async () => {
    const before = { near: prompts(nearPrompts).length, far: prompts(farPrompts).length };
    const run = await r.rig.run(['run', 'collaborative', '-m', 'name three even numbers', '--agents', 'near,far', '--detach', '--json'], { env: r.env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout) as TaskView).id;
    /** Kill the local supervisor (by its pid) at a random moment while turn `seq`'s job is in flight, then start the next one. */
    const killDuring = async (seq: number) => {
      const jid = turnJobId(id, seq, 1);
      await until(`turn ${seq} in flight`, async () => {
        const j = await job(jid).catch(() => null);
        return j && (j.state === 'starting' || j.state === 'running') ? j : undefined;
      });
      // A random moment of the turn (the agents think 1.5 s): chosen, not waited for.
      await new Promise((res) => setTimeout(res, Math.floor(Math.random() * 1200)));
      const pid = (await local().call<HealthView>('GET', '/v1/health')).pid;
      const inFlight = (await job(jid)).state;
      process.kill(pid, 'SIGKILL');
      await until('the supervisor gone', async () => (dead(pid) ? true : undefined));
      // Any command starts the next supervisor; the detached task goes on by itself there.
      const jobs = await r.rig.run(['jobs', '--json'], { env: r.env() });
      expect(jobs.code, jobs.stderr).toBe(0);
      expect((await local().call<HealthView>('GET', '/v1/health')).pid).not.toBe(pid);
      return inFlight;
    };
    const remoteState = await killDuring(2);
    const localState = await killDuring(3);
    const done = await until(
      'the task done',
      async () => {
        const v = await local().call<TaskView>('GET', `/v1/tasks/${id}/wait?timeout=30`);
        return ['done', 'failed', 'cancelled'].includes(v.status) ? v : undefined;
      },
      120_000,
    );
    expect(done.status, `${done.reason} (killed while turn 2 was ${remoteState}, turn 3 ${localState})`).toBe('done');
    const [, critique] = await checkTurns(id);
    // The last supervisor connects to the host in the background (it may have ended the task before that).
    await until('the host connected again', async () =>
      (await local().call<HealthView>('GET', '/v1/health')).hosts?.[0]?.state === 'connected' ? true : undefined,
    );
    // The host recorded the remote turn once, and far took its prompt once; near took its two once each.
    expect((await far().call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === critique!.id).map((j) => j.state)).toEqual(['done']);
    expect(prompts(farPrompts).length - before.far).toBe(1);
    expect(prompts(nearPrompts).length - before.near).toBe(2);
    expect((await local().call<JobResultView>('GET', `/v1/jobs/${critique!.id}/result`)).reply).toBe(
      (await far().call<JobResultView>('GET', `/v1/jobs/${critique!.id}/result`)).reply,
    );
  }, 240_000);

  it("resumes after a kill -9 of the host's supervisor during the remote turn (started again there by this one): each turn once", async () => {
    const { before, id, jid } = await runDetached('name three square numbers');
    await until('the remote turn in flight there', async () => {
      const j = await far()
        .call<JobView>('GET', `/v1/jobs/${jid}`)
        .catch(() => null);
      return j && (j.state === 'starting' || j.state === 'running') ? j : undefined;
    });
    // A random moment of far's turn (it thinks 1.5 s): chosen, not waited for.
    await new Promise((res) => setTimeout(res, Math.floor(Math.random() * 1200)));
    const hostPid = (await far().call<HealthView>('GET', '/v1/health')).pid;
    const inFlight = (await far().call<JobView>('GET', `/v1/jobs/${jid}`)).state;
    expect(r.sshd.userProcesses()).toContain(hostPid);
    process.kill(hostPid, 'SIGKILL');
    const done = await local().call<TaskView>('GET', `/v1/tasks/${id}/wait?timeout=120`);
    expect(done.status, `${done.reason} (killed while the remote turn was ${inFlight} there)`).toBe('done');
    const [, critique] = await checkTurns(id);
    // Another supervisor there now, as the host's user; it recorded the turn once, and far took its prompt once.
    const now = await far().call<HealthView>('GET', '/v1/health');
    expect(now.pid).not.toBe(hostPid);
    expect(r.sshd.userProcesses()).toContain(now.pid);
    expect((await far().call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === critique!.id).map((j) => j.state)).toEqual(['done']);
    expect(prompts(farPrompts).length - before.far).toBe(1);
    expect(prompts(nearPrompts).length - before.near).toBe(2);
  }, 240_000);

  it("resumes after a kill -9 of the host's supervisor the moment far took the remote turn's prompt, before that supervisor saw it taken: typed once", async () => {
    const { before, id, jid } = await runDetached('name three cube numbers');
    // near's turn comes first (it thinks 1.5 s): the host's supervisor is asked before far gets anything.
    const hostPid = (await far().call<HealthView>('GET', '/v1/health')).pid;
    expect(prompts(farPrompts).length).toBe(before.far);
    // The moment far's prompt log grows, far has taken the prompt (its hook and its redraw come after).
    await new Promise<void>((resolve) => {
      const took = () => {
        if (prompts(farPrompts).length === before.far) return;
        w.close();
        resolve();
      };
      const w = watch(r.proj, took);
      took();
    });
    process.kill(hostPid, 'SIGKILL');
    const journal = path.join(remoteRoot(), '.jaggers', 'events.jsonl');
    const states = () =>
      readFileSync(journal, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { type: string; jobId?: string; state?: string; reason?: string })
        .filter((e) => e.type === 'job-state' && e.jobId === jid);
    const inFlight = states().at(-1)?.state;
    const done = await local().call<TaskView>('GET', `/v1/tasks/${id}/wait?timeout=120`);
    expect(done.status, `${done.reason} (killed while the remote turn was ${inFlight} there)`).toBe('done');
    await checkTurns(id);
    // Found there (on far's screen, or in its session once it answered), not typed again under a new nonce.
    const reasons = states().map((e) => e.reason);
    expect(prompts(farPrompts).length - before.far, `killed while ${inFlight}: ${JSON.stringify(reasons)}`).toBe(1);
    expect(prompts(nearPrompts).length - before.near).toBe(2);
  }, 240_000);

  it('waits for the host while its connection is cut during the remote turn (`jobs` says so), then goes on to its end', async () => {
    const before = prompts(farPrompts).length;
    const run = await r.rig.run(['run', 'collaborative', '-m', 'name three odd numbers', '--agents', 'near,far', '--detach', '--json'], { env: r.env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const id = (JSON.parse(run.stdout) as TaskView).id;
    const jid = turnJobId(id, 2, 1);
    await until('the remote turn running', async () => ((await job(jid).catch(() => null))?.state === 'running' ? true : undefined));
    expect(r.sshd.cut()).toBeGreaterThan(0);
    const waiting = await until('the turn seen waiting for its host', async () => {
      const rows = JSON.parse((await r.rig.run(['jobs', '--json'], { env: r.env() })).stdout) as JobView[];
      const row = rows.find((j) => j.id === jid);
      return row?.waiting?.startsWith('waits for host box: the connection is') ? row : undefined;
    });
    expect(waiting).toMatchObject({ agent: 'far', host: 'box', work: 'turn', task: id });
    const shown = await local().call<TaskView>('GET', `/v1/tasks/${id}`);
    expect(shown).toMatchObject({ status: 'running', step: 'critique', agent: 'far' });
    const done = await local().call<TaskView>('GET', `/v1/tasks/${id}/wait?timeout=60`);
    expect(done.status, done.reason ?? '').toBe('done');
    await checkTurns(id);
    expect(prompts(farPrompts).length - before).toBe(1);
  }, 180_000);
});
