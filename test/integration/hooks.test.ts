// Native hooks first (issue 27), end to end on real tmux with the fake agent: its hooks call the bridge,
// the bridge drops each call into the spool, the supervisor's watcher ranks it above the state file and
// the screen. The same handoff passes with hooks turned off (the screen and state file decide), and a
// CLI whose hooks never fire falls back with one warning.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/api/types.js';
import { api, collectEvents } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

/** Every path under `dir`, relative, sorted. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) out.push(path.relative(dir, path.join(e.parentPath, e.name)));
  return out.sort();
}

interface Why {
  state: string;
  rule: string | null;
  source: string;
  turns: number;
  terminalId: string;
  hooks: { kind: string; installed: boolean; calls: number; warning: string | null } | null;
}

const why = async (rig: Rig, agent: string) => JSON.parse((await rig.run(['why', agent, '--json'])).stdout) as Why;

describe('native hooks on real tmux with the fake agent', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
  });
  afterEach(async () => rig.cleanup());

  async function handoff(agent: string, message: string) {
    const r = await rig.run(['handoff', agent, '--message', message, '--json']);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { reply: { text: string; from: string } };
  }

  it("with hooks, a handoff's busy and done come from hook events, the reply from the Stop payload; nothing is written outside .jaggers/ and the agent's home; down removes the hook folder", async () => {
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300']);
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake' }] });
    const homeBefore = await tree(rig.home);
    expect((await rig.run(['up'])).code).toBe(0);
    const client = api(rig);
    const events = collectEvents(client, '/v1/events?types=state&agent=claude');
    try {
      const first = await handoff('claude', 'hello with hooks');
      expect(first.reply.from).toBe('hook');
      expect(first.reply.text).toMatch(/turn 1 of session/);
      const busy = await events.waitFor((e: StreamEvent) => e.data.state === 'busy', 'a busy state event');
      expect(busy.data.rule).toBe('hook UserPromptSubmit');
      const done = await events.waitFor((e: StreamEvent) => e.data.state === 'done', 'a done state event');
      expect(done.data.rule).toBe('hook Stop');
      // How long each hook call took from the bridge's start to the supervisor applying it.
      for (const e of [busy, done])
        expect(e.data.hookLagMs, JSON.stringify(e.data)).toSatisfy((ms: unknown) => typeof ms === 'number' && ms >= 0 && ms < 10_000);
      const w = await why(rig, 'claude');
      expect([w.state, w.rule, w.source]).toEqual(['done', 'hook Stop', 'hook']);
      expect(w.hooks).toMatchObject({ kind: 'fake-agent', installed: true, warning: null });
      expect(w.hooks!.calls).toBeGreaterThanOrEqual(3); // SessionStart, UserPromptSubmit, Stop
      expect(await rig.run(['why', 'claude'])).toMatchObject({
        stdout: expect.stringMatching(/decided by: hook Stop \(hook\)[\s\S]*hooks: fake-agent, \d+ calls/),
      });
      // The reply is the fake agent's own record of the turn, byte for byte.
      const session = JSON.parse(
        await readFile(
          path.join(rig.home, '.fake-agent', 'sessions', `${(await rig.run(['sessions', '--json'])).stdout.match(/"sessionId":\s*"([^"]+)"/)![1]}.json`),
          'utf8',
        ),
      ) as {
        turns: { reply: string }[];
      };
      expect(first.reply.text).toBe(session.turns[0]!.reply);
      const hookDir = path.join(rig.root, '.jaggers', 'hooks', w.terminalId);
      expect(existsSync(path.join(hookDir, 'fake-agent-hooks.json'))).toBe(true);
      // The spool is empty once every call was taken, and none was skipped (its files are written in place, named with their size).
      expect(await readdir(path.join(rig.root, '.jaggers', 'hook-spool'))).toEqual([]);
      const log = await readFile(path.join(rig.root, '.jaggers', 'logs', 'supervisor.log'), 'utf8').catch(() => '');
      expect(log.split('\n').filter((l) => l.includes('hook spool file skipped'))).toEqual([]);
      // The bash 5 on PATH here, run once by the supervisor, named for the bridge to run as.
      expect(await readFile(path.join(rig.root, '.jaggers', 'hook-spool.bash'), 'utf8')).toMatch(/^\/\S*bash\n$/);
    } finally {
      await events.stop();
    }
    // Outside .jaggers/, only the fake agent's own files in its throwaway home changed.
    const added = (await tree(rig.home)).filter((p) => !homeBefore.includes(p));
    expect(added.filter((p) => !p.startsWith('.fake-agent'))).toEqual([]);
    expect((await tree(rig.root)).filter((p) => !p.startsWith('.jaggers') && p !== 'jaggers.json')).toEqual([]);
    expect((await rig.run(['down'])).code).toBe(0);
    expect(existsSync(path.join(rig.root, '.jaggers', 'hooks'))).toBe(false);
  }, 60_000);

  it('with hooks turned off (JAGGERS_HOOKS=0, or "hooks": false on the agent) the same handoff passes on the screen and state file', async () => {
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300']);
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake', hooks: false }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const r = await handoff('claude', 'hello without hooks');
    expect(r.reply.from).toBe('transcript');
    expect(r.reply.text).toMatch(/turn 1 of session/);
    const w = await why(rig, 'claude');
    expect(w.source).not.toBe('hook');
    expect(w.hooks).toMatchObject({ installed: false, calls: 0, warning: null });
    expect(existsSync(path.join(rig.root, '.jaggers', 'hooks', w.terminalId))).toBe(false);
    await rig.run(['down']);

    // The same through the environment, for every agent.
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake' }] });
    const env = { ...rig.env, JAGGERS_HOOKS: '0' };
    expect((await rig.run(['up'], { env })).code).toBe(0);
    const r2 = await rig.run(['handoff', 'claude', '--message', 'again without hooks', '--json'], { env });
    expect(r2.code, r2.stderr).toBe(0);
    expect((JSON.parse(r2.stdout) as { reply: { from: string } }).reply.from).toBe('transcript');
    expect((await why(rig, 'claude')).hooks).toMatchObject({ installed: false, calls: 0 });
  }, 60_000);

  it('a fake agent whose hooks never fire (an older release) falls back to the screen with one warning, never a hang', async () => {
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '300', '--no-hooks']);
    await writeProject(rig.root, { agents: [{ name: 'claude', profile: 'fake' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    const r = await handoff('claude', 'hooks are silent');
    expect(r.reply.from).toBe('transcript');
    const w = await why(rig, 'claude');
    expect(w.state).toBe('done');
    expect(w.hooks).toMatchObject({ installed: true, calls: 0 });
    expect(w.hooks!.warning).toMatch(/no fake-agent hook event came during turn 1/);
    expect((await rig.run(['why', 'claude'])).stdout).toMatch(/warning: no fake-agent hook event/);
    const log = await readFile(path.join(rig.root, '.jaggers', 'logs', 'supervisor.log'), 'utf8').catch(() => '');
    expect(log.split('\n').filter((l) => l.includes('no fake-agent hook event')).length).toBeLessThanOrEqual(1);
  }, 60_000);
});
