// Faults of a host (docs/hosts.md, Faults), against a real sshd on loopback (test/helpers/sshd.ts): the
// host's supervisor killed (-9, by its pid there) at a random moment in a job's turn is started again by
// the local supervisor, and the job ends `done` once here and once there, with its reply; a host that
// reboots (the connection cut, every process of its user killed) is found again when it comes back: its
// supervisor started again, its agent back in the same pinned conversation, the job that was in flight
// ended once, here as there. The remote user runs this checkout's node and dist/ through a `jaggers`
// wrapper on its PATH; its tmux servers live in a folder of the test (TMUX_TMPDIR), never the user's.
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { hostSocketPath } from '../../src/api/paths.js';
import type { HealthView, JobResultView, JobView, TerminalView } from '../../src/api/types.js';
import { api } from '../helpers/api.js';
import { Rig } from '../helpers/rig.js';
import { hostTeamFile, hostTools, sshdSkipReason, startSshd, until, type SshdRig } from '../helpers/sshd.js';

const skip = sshdSkipReason();

/** The fake agent's stored conversation there (`~/.fake-agent/sessions/<id>.json` of the host's user): its turns' prompts. */
function turnsOf(home: string, sessionId: string): string[] {
  const text = readFileSync(path.join(home, '.fake-agent', 'sessions', `${sessionId}.json`), 'utf8');
  return (JSON.parse(text) as { turns: { prompt: string }[] }).turns.map((t) => t.prompt);
}

describe.skipIf(skip !== null)(`a host's faults over ssh${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let sshd: SshdRig;
  let rig: Rig;
  let tools: Awaited<ReturnType<typeof hostTools>>;
  let proj: string;
  beforeAll(async () => {
    tools = await hostTools('jgfault');
    sshd = await startSshd({ path: `${tools.bin}:/usr/local/bin:/usr/bin:/bin`, env: { TMUX_TMPDIR: tools.tmuxDir } });
    proj = path.join(sshd.home, 'proj');
    await mkdir(proj);
    await chown(proj, sshd.uid, sshd.gid);
  }, 60_000);
  afterEach(async () => {
    await rig?.run(['down'], { env: env() }).catch(() => {});
    await rig?.cleanup();
  }, 60_000);
  afterAll(async () => {
    await sshd?.stop();
    await tools?.remove();
  }, 60_000);

  const env = () => ({ ...rig.env, JAGGERS_SSH_CONFIG: sshd.configFile });

  /** A team of one agent here and `far` on box (its turns take `thinkMs`), up; far's API through the forwarded socket. */
  async function team(thinkMs: number) {
    rig = await Rig.create();
    await writeFile(path.join(rig.root, 'jaggers.json'), hostTeamFile(proj, ['--boot-ms', '50', '--think-ms', String(thinkMs)]));
    const up = await rig.run(['up'], { env: env() });
    expect(up.code, up.stderr).toBe(0);
    const far = new ApiClient({ socketPath: hostSocketPath(path.join(rig.root, '.jaggers'), 'box') }, rig.session);
    const local = api(rig);
    // The local supervisor's host events, from now on.
    const events: { type: string; data: Record<string, unknown> }[] = [];
    const follow = new AbortController();
    const following = local.events('/v1/events?types=host', (e) => void events.push({ type: e.type, data: e.data }), { signal: follow.signal });
    const stopEvents = async () => {
      follow.abort();
      await following.catch(() => {});
    };
    return { far, local, events, stopEvents };
  }

  it("kill -9 of the host's supervisor at a random moment in a job's turn: started again, the job ends done once here and there, with its reply", async () => {
    const { far, local, events, stopEvents } = await team(3000);
    try {
      const before = await far.call<HealthView>('GET', '/v1/health');
      const [view] = await far.call<TerminalView[]>('GET', '/v1/terminals');
      const session = view!.sessionId!;
      const turns = turnsOf(sshd.home, session).length;

      const id = (await rig.run(['assign', 'far', '-m', 'a job through a kill -9 of the host supervisor'], { env: env() })).stdout.trim();
      expect(id).toMatch(/^j-[0-9a-f]{12}$/);
      await until('the job running there', async () => ((await local.call<JobView>('GET', `/v1/jobs/${id}`)).state === 'running' ? true : undefined));
      // A random moment of its 3 s turn.
      const at = Math.floor(Math.random() * 2500);
      await new Promise((r) => setTimeout(r, at));
      process.kill(before.pid, 'SIGKILL');

      const w = await rig.run(['wait', id, '--timeout', '90'], { env: env() });
      expect(w.code, `killed ${at} ms into the turn: ${w.stdout}${w.stderr}`).toBe(0);
      const after = await far.call<HealthView>('GET', '/v1/health');
      expect(after.pid).not.toBe(before.pid);
      expect(sshd.userProcesses()).toContain(after.pid);

      // Done once here and once there, with the host's reply.
      const here = await local.call<JobView>('GET', `/v1/jobs/${id}`);
      expect(here.state).toBe('done');
      expect(here.history.filter((x) => x.state === 'done')).toHaveLength(1);
      const there = (await far.call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === id);
      expect(there.map((j) => j.state)).toEqual(['done']);
      const reply = (await far.call<JobResultView>('GET', `/v1/jobs/${id}/result`)).reply;
      expect(reply).toContain('a job through a kill -9');
      expect((JSON.parse((await rig.run(['result', id, '--json'], { env: env() })).stdout) as JobResultView).reply).toBe(reply);
      // Typed once: one more turn in far's conversation, its own (far lived on: its tmux server did).
      expect(turnsOf(sshd.home, session).length).toBe(turns + 1);
      expect((await far.call<TerminalView[]>('GET', '/v1/terminals'))[0]!.sessionId).toBe(session);

      // Said: the event, the health, `status`.
      await until('the restart told', async () => (events.some((e) => e.data.supervisor === 'restarted') ? true : undefined));
      const told = events.filter((e) => e.type === 'host').map((e) => e.data.supervisor);
      expect(told).toEqual(['restarting', 'restarted']);
      expect(events[1]!.data).toMatchObject({ host: 'box', was: expect.stringMatching(/supervisor|answer/), detail: expect.stringMatching(/^far kept/) });
      const h = (await local.call<HealthView>('GET', '/v1/health')).hosts![0]!;
      expect(h.supervisor).toMatchObject({ state: 'answering', restarts: 1, detail: expect.stringMatching(/^restarted at \S+ \(was: /) });
      const st = await rig.run(['status'], { env: env() });
      expect(st.stderr).toMatch(/^jaggers: warning: host box: supervisor restarted at \S+ \(was: .+\)$/m);
      expect(st.stdout).toMatch(/^far +box +(idle|done)/m);
    } finally {
      await stopEvents();
    }
  }, 180_000);

  it('a rebooted host is found again: its supervisor started, far back in its pinned conversation, the job in flight ended once', async () => {
    const { far, local, events, stopEvents } = await team(4000);
    try {
      const before = await far.call<HealthView>('GET', '/v1/health');
      const [view] = await far.call<TerminalView[]>('GET', '/v1/terminals');
      const session = view!.sessionId!;
      const done1 = (await rig.run(['assign', 'far', '-m', 'a job before the reboot'], { env: env() })).stdout.trim();
      expect((await rig.run(['wait', done1, '--timeout', '60'], { env: env() })).code).toBe(0);
      const turns = turnsOf(sshd.home, session);

      const id = (await rig.run(['assign', 'far', '-m', 'a job cut by a reboot'], { env: env() })).stdout.trim();
      await until('the job running there', async () => ((await local.call<JobView>('GET', `/v1/jobs/${id}`)).state === 'running' ? true : undefined));
      await sshd.reboot();
      expect(sshd.userProcesses()).toEqual([]);

      const w = await rig.run(['wait', id, '--timeout', '120'], { env: env() });
      const here = await local.call<JobView>('GET', `/v1/jobs/${id}`);
      // It ends once, here as there; which end it is, the host's journal decides (see docs/hosts.md, Faults).
      expect(['done', 'failed'], JSON.stringify(here.history)).toContain(here.state);
      expect(here.history.filter((x) => x.state === 'done' || x.state === 'failed')).toHaveLength(1);
      expect(w.code === 0).toBe(here.state === 'done');
      const there = (await far.call<JobView[]>('GET', '/v1/jobs')).filter((j) => j.id === id);
      expect(there.map((j) => j.state)).toEqual([here.state]);
      if (here.state === 'failed') expect(here.reason).toMatch(/^on host box: .*(restart|lost|died|exited)/i);

      // A new supervisor there, started by the local one; far again in the same conversation.
      const after = await far.call<HealthView>('GET', '/v1/health');
      expect(after.pid).not.toBe(before.pid);
      const again = await until('far back there', async () => {
        const [v] = await far.call<TerminalView[]>('GET', '/v1/terminals');
        return v && v.state !== 'exited' ? v : undefined;
      });
      expect(again.sessionId).toBe(session);
      // Its conversation kept what it had; the cut turn was not typed again (or, when it was, once).
      const now = turnsOf(sshd.home, session);
      expect(now.slice(0, turns.length)).toEqual(turns);
      expect(now.length - turns.length).toBeLessThanOrEqual(here.state === 'done' ? 1 : 0);
      await until('the restart told', async () => (events.some((e) => e.data.supervisor === 'restarted') ? true : undefined));
      const restarted = events.find((e) => e.data.supervisor === 'restarted')!;
      expect(restarted.data.detail).toMatch(new RegExp(`^far (opened|restarted) in session ${session}`));

      // And it works on: a next job there ends done with its reply.
      const next = (await rig.run(['assign', 'far', '-m', 'a job after the reboot'], { env: env() })).stdout.trim();
      const wn = await rig.run(['wait', next, '--timeout', '60'], { env: env() });
      expect(wn.code, wn.stdout + wn.stderr).toBe(0);
      expect(turnsOf(sshd.home, session).at(-1)).toMatch(/^Read /);
    } finally {
      await stopEvents();
    }
  }, 240_000);
});
