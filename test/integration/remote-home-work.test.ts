// Work from a host's agent for an agent here (docs/hosts.md, "Jobs and handoffs from a host's agents"),
// against a real sshd on loopback (test/helpers/remote-rig.ts): `far` on box runs `jaggers assign near` and
// `jaggers handoff near` there (through a login of its own, as far: its JAGGERS_TERMINAL_ID). near is no
// agent of box's supervisor: the item waits in its outbox, this supervisor takes it home under its id,
// near runs it here, and its end goes back: the job there ends with near's reply (and, for `assign`, the
// result in far's inbox there), the handoff command there prints the reply. Through a kill -9 of the
// local supervisor while near works on it, and a cut connection (the session's sshd process killed) while
// it waits in the outbox: it ends once, here and there, near taking its prompt once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffResult, HealthView, InboxView, JobResultView, JobView, TerminalView } from '../../src/api/types.js';
import { api } from '../helpers/api.js';
import { promptsOf as prompts, startRemoteRig, until, type RemoteRig } from '../helpers/remote-rig.js';
import { sshdSkipReason } from '../helpers/sshd.js';

const skip = sshdSkipReason();

describe.skipIf(skip !== null)(`work from a host's agent for an agent here${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let r: RemoteRig;
  let nearPrompts: string;
  let farId: string;
  beforeAll(async () => {
    r = await startRemoteRig();
    ({ nearPrompts } = await r.upTeam({ args: ['--boot-ms', '50'] }));
    farId = (await r.far().call<TerminalView[]>('GET', '/v1/terminals')).find((t) => t.agent === 'far')!.terminalId!;
  }, 120_000);
  afterAll(async () => {
    await r?.stop();
  }, 60_000);

  const local = () => api(r.rig);
  const asFar = (args: string[]) => r.onBox(args, { terminalId: farId });
  /** near took the item's prompt once (its pointer names the item's handover file). */
  const tookOnce = (j: JobView) => expect(prompts(nearPrompts).filter((p) => p.includes(path.basename(j.artifact!)))).toHaveLength(1);
  /** The item's record here: recorded once (one job-created in the journal), taken from far on box. */
  function recordedOnceHere(id: string): void {
    const journal = readFileSync(path.join(r.rig.root, '.jaggers', 'events.jsonl'), 'utf8');
    expect(journal.split('\n').filter((l) => l.includes('"job-created"') && l.includes(`"${id}"`))).toHaveLength(1);
  }
  /** far's inbox there holds the job's result once, from near, delivered. */
  async function resultThere(id: string, reply: string): Promise<void> {
    const got = await until(`the result of ${id} delivered to far on box`, async () => {
      const v = await r.far().call<InboxView>('GET', '/v1/terminals/far/inbox');
      const m = v.messages.filter((x) => x.job === id);
      return m.length > 0 && m.every((x) => x.state === 'delivered') ? m : undefined;
    });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ fromAgent: 'near', from: 'near@home', toAgent: 'far' });
    expect(readFileSync(path.join(r.remoteRoot(), got[0]!.file), 'utf8')).toContain(reply);
  }

  /**
   * `wait <id>` there ends 0; the job ended once here (recorded once, near's prompt once) and once there,
   * with the same reply, and its result is in far's inbox there. Returns the reply.
   */
  async function endedOnce(id: string, waitS = 60): Promise<string> {
    const w = await r.onBox(['wait', id, '--timeout', String(waitS)]);
    expect(w.code, w.stdout + w.stderr).toBe(0);
    const here = await local().call<JobView>('GET', `/v1/jobs/${id}`);
    expect(here.history.filter((x) => x.state === 'done')).toHaveLength(1);
    recordedOnceHere(id);
    tookOnce(here);
    const reply = (await local().call<JobResultView>('GET', `/v1/jobs/${id}/result`)).reply!;
    expect(reply).toBeTruthy();
    const there = (await r.far().call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === id);
    expect(there.map((j) => [j.state, j.history.filter((x) => x.state === 'done').length])).toEqual([['done', 1]]);
    expect((await r.far().call<JobResultView>('GET', `/v1/jobs/${id}/result`)).reply).toBe(reply);
    await resultThere(id, reply);
    return reply;
  }

  /** The connection cut (the session's sshd process killed) and the local supervisor's logins refused until `allow()`. */
  async function cutOff(): Promise<{ allow(): Promise<void> }> {
    const logins = await r.refuseLogins();
    expect(r.sshd.cut()).toBeGreaterThan(0);
    await until('the host seen lost', async () => {
      const v = (await local().call<HealthView>('GET', '/v1/health')).hosts?.[0];
      return v && v.state !== 'connected' ? v : undefined;
    });
    return logins;
  }

  /** box's supervisor answers again, another process than `pid` (the keeper started it again). */
  async function restartedThere(pid: number): Promise<void> {
    await until(
      'box supervisor started again',
      async () => {
        const h = await r.far().call<HealthView>('GET', '/v1/health');
        return h.pid !== pid ? h : undefined;
      },
      60_000,
    );
  }

  it("far assigns to near: in box's outbox, run here under its id, done there with near's reply and the result in far's inbox; through a kill -9 here too", async () => {
    const a = await asFar(['assign', 'near', '-m', 'count the files, asked by far on box', '--json']);
    expect(a.code, a.stderr).toBe(0);
    const asked = JSON.parse(a.stdout) as JobView;
    expect(asked).toMatchObject({ state: 'queued', outbox: true, agent: 'near', terminalId: 'near@home', fromAgent: 'far', from: farId });
    const id = asked.id;
    const reply = await endedOnce(id);
    const here = await local().call<JobView>('GET', `/v1/jobs/${id}`);
    expect(here).toMatchObject({ state: 'done', agent: 'near', fromHost: 'box', from: 'far@box', fromAgent: 'far', host: null });

    // There: waited in the outbox, taken home, shown running there as here, then done with near's reply.
    const jobsThere = JSON.parse((await r.onBox(['jobs', '--json'])).stdout) as JobView[];
    const there = jobsThere.find((j) => j.id === id)!;
    expect(there).toMatchObject({ state: 'done', outbox: true, reason: 'near on home: the agent finished its turn' });
    expect(there.history.map((x) => x.state).filter((st, i, all) => st !== all[i - 1])).toEqual(['queued', 'starting', 'running', 'done']);
    expect(there.history[1]!.reason).toBe("taken home: in near's queue there");
    expect((await r.onBox(['result', id])).stdout).toBe(reply.replace(/\n+$/, ''));
    expect(await r.far().call<unknown[]>('GET', '/v1/outbox')).toEqual([]);

    // The local supervisor killed (-9) while near works on one: the next one follows it here, and its end goes there once.
    const b = (JSON.parse((await asFar(['assign', 'near', '-m', 'a job through a kill -9 here', '--json'])).stdout) as JobView).id;
    await until('the job running here', async () => ((await local().call<JobView>('GET', `/v1/jobs/${b}`)).state === 'running' ? true : undefined));
    const before = await local().call<HealthView>('GET', '/v1/health');
    process.kill(before.pid, 'SIGKILL');
    const wh = await r.rig.run(['wait', b, '--timeout', '60'], { env: r.env() });
    expect(wh.code, wh.stdout + wh.stderr).toBe(0);
    expect((await local().call<HealthView>('GET', '/v1/health')).pid).not.toBe(before.pid);
    await endedOnce(b);
  }, 180_000);

  it('far hands off to near (and headless): the handoff there prints the reply of the item run here; MCP there assigns to near', async () => {
    const h = await asFar(['handoff', 'near', '-m', 'review this, far asks', '--json']);
    expect(h.code, h.stderr).toBe(0);
    const hr = JSON.parse(h.stdout) as HandoffResult;
    expect(hr).toMatchObject({ agent: 'near', terminalId: 'near@home' });
    const here = await local().call<JobView>('GET', `/v1/jobs/${hr.job}`);
    expect(here).toMatchObject({ work: 'handoff', state: 'done', task: hr.task, fromHost: 'box' });
    expect(readFileSync(path.join(r.rig.root, here.artifact!), 'utf8')).toContain('review this, far asks');
    tookOnce(here);
    expect(hr.reply?.text).toBe((await local().call<JobResultView>('GET', `/v1/jobs/${hr.job}/result`)).reply);
    expect(hr.reply?.artifact).toBe(path.join(r.remoteRoot(), '.jaggers', 'jobs', `${hr.job}.reply.md`));
    // A handoff's caller has its reply: no result message there.
    expect((await r.far().call<InboxView>('GET', '/v1/terminals/far/inbox')).messages.filter((m) => m.job === hr.job)).toEqual([]);

    const hh = await asFar(['handoff', 'near', '--headless', '-m', 'a headless turn asked from box', '--json']);
    expect(hh.code, hh.stderr).toBe(0);
    const hhr = JSON.parse(hh.stdout) as HandoffResult;
    expect(hhr).toMatchObject({ agent: 'near', terminalId: 'near@home', delivery: { kind: 'headless' } });
    const hj = await local().call<JobView>('GET', `/v1/jobs/${hhr.job}`);
    expect(hj).toMatchObject({ work: 'handoff', headless: true, state: 'done', fromHost: 'box' });
    expect(hhr.reply?.text).toContain('a headless turn asked from box');
    expect(hhr.reply?.text).toBe((await local().call<JobResultView>('GET', `/v1/jobs/${hhr.job}/result`)).reply);

    // `jaggers mcp` there, as far: its assign and wait_job to near.
    const mcp = new Client({ name: 'far-on-box', version: '0' });
    await mcp.connect(new StdioClientTransport({ command: 'ssh', args: r.boxArgv(['mcp'], { terminalId: farId }), stderr: 'pipe' }));
    try {
      const given = (await mcp.callTool({ name: 'assign', arguments: { agent: 'near', message: 'a job given through MCP on box' } })) as {
        content: { text: string }[];
      };
      const job = (JSON.parse(given.content[0]!.text) as { job: string }).job;
      const waited = (await mcp.callTool({ name: 'wait_job', arguments: { job, timeout: 60 } })) as { content: { text: string }[] };
      const end = JSON.parse(waited.content[0]!.text) as { state: string; agent: string; reply: string };
      expect(end, waited.content[0]!.text).toMatchObject({ state: 'done', agent: 'near' });
      expect(end.reply).toBe((await local().call<JobResultView>('GET', `/v1/jobs/${job}/result`)).reply);
      expect(await local().call<JobView>('GET', `/v1/jobs/${job}`)).toMatchObject({ state: 'done', fromHost: 'box', fromAgent: 'far' });
      await resultThere(job, end.reply);
    } finally {
      await mcp.close();
    }
  }, 120_000);

  it('a job asked while the connection is cut waits in the outbox there, and is taken home and ends once after the reconnect', async () => {
    const logins = await cutOff();
    try {
      const a = await asFar(['assign', 'near', '-m', 'asked while the connection was cut', '--json']);
      expect(a.code, a.stderr).toBe(0);
      const id = (JSON.parse(a.stdout) as JobView).id;
      const row = (JSON.parse((await r.onBox(['jobs', '--json'])).stdout) as JobView[]).find((j) => j.id === id)!;
      expect(row).toMatchObject({ state: 'queued', outbox: true });
      expect(row.waiting).toBe('in the outbox: waits for the supervisor that started this host to take it home to near');
      await expect(local().call('GET', `/v1/jobs/${id}`)).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
      await logins.allow();
      await endedOnce(id, 90);
    } finally {
      await logins.allow();
    }
  }, 150_000);

  it("a kill -9 of the host's supervisor while near works on the job here: started again there, the job's end goes there once", async () => {
    const boxPid = (await r.far().call<HealthView>('GET', '/v1/health')).pid;
    const id = (JSON.parse((await asFar(['assign', 'near', '-m', 'running here through a kill -9 there', '--json'])).stdout) as JobView).id;
    await until('the job running here', async () => ((await local().call<JobView>('GET', `/v1/jobs/${id}`)).state === 'running' ? true : undefined));
    process.kill(boxPid, 'SIGKILL');
    await restartedThere(boxPid);
    await endedOnce(id, 90);
  }, 150_000);

  it("a job in the outbox through a kill -9 of the host's supervisor (the connection cut meanwhile): started again there, taken home, ends once", async () => {
    const boxPid = (await r.far().call<HealthView>('GET', '/v1/health')).pid;
    const logins = await cutOff();
    try {
      const id = (JSON.parse((await asFar(['assign', 'near', '-m', 'in the outbox through a kill -9 there', '--json'])).stdout) as JobView).id;
      process.kill(boxPid, 'SIGKILL');
      await logins.allow();
      // The keeper starts it again once connected; its outbox (its journal) still has the job.
      await restartedThere(boxPid);
      await endedOnce(id, 90);
    } finally {
      await logins.allow();
    }
  }, 150_000);
});
