// Agents below jaggers' own CPU priority: `nice` in the launch command, the project's and the agent's
// value, and the pane's session group (Linux autogroup) changed one at a time as the kernel allows.
import { describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_NICE, nicedCommand, planLaunch, type LaunchInput } from '../../src/agents/plan.js';
import { RETRY_MS, SessionNice, type SessionNicePorts } from '../../src/agents/session-nice.js';
import { parseProjectFile } from '../../src/project/project-file.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { isJaggersError } from '../../src/errors.js';
import { launchInput } from '../helpers/launch-input.js';

const profile = ProfileSchema.parse({ name: 'f', command: 'jaggers-fake-agent', args: ['--x'] });
const input = (o: Partial<LaunchInput> = {}): LaunchInput => launchInput('/p', { niceBin: '/usr/bin/nice', ...o });
const spec = { name: 'a', profile: 'f', args: ['--y'], env: {} };

describe('the launch under nice', () => {
  it('starts the CLI under nice 5 by default: nice execs it, so the pane keeps one process', () => {
    const l = planLaunch(input(), spec, profile, 'jg-1', null);
    expect(DEFAULT_AGENT_NICE).toBe(5);
    expect(l.nice).toBe(5);
    expect(l.command).toEqual(['/usr/bin/nice', '-n', '5', 'jaggers-fake-agent', '--x', '--y']);
  });

  it("takes the project's value, and the agent's own over it; 0 runs the CLI as jaggers runs", () => {
    expect(planLaunch(input({ nice: 12 }), spec, profile, 'jg-1', null).command.slice(0, 3)).toEqual(['/usr/bin/nice', '-n', '12']);
    const own = planLaunch(input({ nice: 12 }), { ...spec, nice: 3 }, profile, 'jg-1', null);
    expect(own.nice).toBe(3);
    expect(own.command.slice(0, 3)).toEqual(['/usr/bin/nice', '-n', '3']);
    const zero = planLaunch(input({ nice: 12 }), { ...spec, nice: 0 }, profile, 'jg-1', null);
    expect(zero.nice).toBe(0);
    expect(zero.command).toEqual(['jaggers-fake-agent', '--x', '--y']);
  });

  it('without a nice program the command is the CLI alone', () => {
    expect(planLaunch(input({ niceBin: null }), spec, profile, 'jg-1', null).command).toEqual(['jaggers-fake-agent', '--x', '--y']);
    expect(nicedCommand(['a'], 5, null)).toEqual(['a']);
    expect(nicedCommand(['a'], 0, '/bin/nice')).toEqual(['a']);
  });

  it('jaggers.json: an integer from 0 to 19, on the project and on an agent; anything else names the field', async () => {
    const ok = await parseProjectFile(JSON.stringify({ nice: 10, agents: [{ name: 'a', profile: 'f', nice: 0 }] }), '/p/jaggers.json');
    expect(ok.nice).toBe(10);
    expect(ok.agents[0]!.nice).toBe(0);
    for (const [bad, field] of [
      [{ nice: 20, agents: [{ name: 'a', profile: 'f' }] }, 'nice'],
      [{ nice: -1, agents: [{ name: 'a', profile: 'f' }] }, 'nice'],
      [{ agents: [{ name: 'a', profile: 'f', nice: 2.5 }] }, 'agents[0].nice'],
      [{ agents: [{ name: 'a', profile: 'f', nice: '5' }] }, 'agents[0].nice'],
    ] as const) {
      const e = await parseProjectFile(JSON.stringify(bad), '/p/jaggers.json').catch((x: unknown) => x);
      expect(isJaggersError(e), JSON.stringify(bad)).toBe(true);
      expect((e as Error).message).toContain('/p/jaggers.json');
      expect((e as Error).message).toContain(`\`${field}\``);
    }
  });
});

/** The kernel as the test says: EAGAIN for the next `busy` writes, then whatever `answer` says. */
function fakeKernel(o: { enabled?: boolean; busy?: number; answer?: (pid: number) => string | null } = {}) {
  const writes: { pid: number; nice: number; at: number }[] = [];
  const failed: { pid: number; why: string }[] = [];
  const timers: { at: number; fn: () => void }[] = [];
  let now = 0;
  let busy = o.busy ?? 0;
  const ports: SessionNicePorts = {
    enabled: () => o.enabled ?? true,
    write: (pid, nice) => {
      if (busy > 0) {
        busy--;
        throw Object.assign(new Error('EAGAIN'), { code: 'EAGAIN' });
      }
      const code = o.answer?.(pid) ?? null;
      if (code) throw Object.assign(new Error(code), { code });
      writes.push({ pid, nice, at: now });
    },
    setTimeout: (fn, ms) => timers.push({ at: now + ms, fn }),
    failed: (pid, why) => failed.push({ pid, why }),
  };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      timers.sort((a, b) => a.at - b.at);
      const t = timers[0];
      if (!t || t.at > until) break;
      timers.shift();
      now = t.at;
      t.fn();
    }
    now = until;
  };
  return { ports, writes, failed, timers, advance, setBusy: (n: number) => (busy = n) };
}

describe("the pane's session group (autogroup)", () => {
  it('writes at once when the kernel lets it', () => {
    const k = fakeKernel();
    const s = new SessionNice(k.ports);
    s.set(101, 5);
    expect(k.writes).toEqual([{ pid: 101, nice: 5, at: 0 }]);
    expect(s.pending).toBe(0);
  });

  it('the kernel refuses a second change within 100 ms: each waits its turn, in order, none lost', () => {
    const k = fakeKernel();
    const s = new SessionNice(k.ports);
    s.set(1, 5);
    k.setBusy(1);
    s.set(2, 5);
    s.set(3, 7);
    expect(k.writes.map((w) => w.pid)).toEqual([1]);
    expect(s.pending).toBe(2);
    k.setBusy(1);
    k.advance(RETRY_MS);
    expect(k.writes.map((w) => w.pid)).toEqual([1]);
    k.advance(RETRY_MS);
    expect(k.writes).toEqual([
      { pid: 1, nice: 5, at: 0 },
      { pid: 2, nice: 5, at: 2 * RETRY_MS },
      { pid: 3, nice: 7, at: 2 * RETRY_MS },
    ]);
    expect(k.timers).toHaveLength(0);
    expect(k.failed).toEqual([]);
  });

  it('a pane asked again while it waits gets the latest value, once', () => {
    const k = fakeKernel({ busy: 1 });
    const s = new SessionNice(k.ports);
    s.set(9, 5);
    s.set(9, 8);
    expect(s.pending).toBe(1);
    k.advance(RETRY_MS);
    expect(k.writes).toEqual([{ pid: 9, nice: 8, at: RETRY_MS }]);
  });

  it('a pane gone (ENOENT) is said and skipped; the next one still goes', () => {
    const k = fakeKernel({ answer: (pid) => (pid === 4 ? 'ENOENT' : null) });
    const s = new SessionNice(k.ports);
    s.set(4, 5);
    s.set(5, 5);
    expect(k.failed).toEqual([{ pid: 4, why: 'ENOENT' }]);
    expect(k.writes.map((w) => w.pid)).toEqual([5]);
  });

  it('gives a pane up after about 3 s of refusals, and says so', () => {
    const k = fakeKernel({ busy: 1000 });
    const s = new SessionNice(k.ports);
    s.set(6, 5);
    k.advance(RETRY_MS * 40);
    expect(k.writes).toEqual([]);
    expect(k.failed).toEqual([{ pid: 6, why: 'still refused after 30 tries' }]);
    expect(s.pending).toBe(0);
    expect(k.timers).toHaveLength(0);
  });

  it('does nothing where the kernel does not group by session, or for nice 0 or a bad pid', () => {
    const off = fakeKernel({ enabled: false });
    new SessionNice(off.ports).set(1, 5);
    expect(off.writes).toEqual([]);
    const k = fakeKernel();
    const s = new SessionNice(k.ports);
    s.set(1, 0);
    s.set(0, 5);
    s.set(Number.NaN, 5);
    expect(k.writes).toEqual([]);
    expect(k.failed).toEqual([]);
  });
});
