// A host's supervisor kept running (src/hosts/keeper.ts; docs/hosts.md, Faults), on a fake connection, a
// scripted supervisor and a simulated clock: when it is started again (its stream ended with the
// connection up and it does not answer twice), the backoff between restarts in a row, what is told, and
// what is never done (a restart while the connection is down, or of a supervisor that answers again).
import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../src/hosts/connection.js';
import { describeSupervisor, SupervisorKeeper, type KeeperEvent } from '../../src/hosts/keeper.js';
import { FakeClock } from '../helpers/fake-clock.js';

const DOWN = 'no supervisor answers at /p/.jaggers/hosts/box.sock (ECONNREFUSED)';

/** Let the keeper's promises run (no time passes). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

class FakeLink {
  state: ConnectionState = { state: 'connected', attempt: 1 };
  private readonly listeners = new Set<(s: ConnectionState) => void>();
  on(l: (s: ConnectionState) => void) {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }
  set(s: ConnectionState) {
    this.state = s;
    for (const l of [...this.listeners]) l(s);
  }
}

/** The host's supervisor as the keeper reaches it: alive or not, its event stream, the restarts asked of it. */
function rig(o: { restart?: () => Promise<string> } = {}) {
  const clock = new FakeClock();
  const link = new FakeLink();
  const told: (KeeperEvent & { at: number })[] = [];
  const restarts: number[] = [];
  const probes: number[] = [];
  let alive = true;
  let endStream: (() => void) | null = null;
  const k = new SupervisorKeeper({
    name: 'box',
    link,
    clock,
    told: (e) => void told.push({ ...e, at: clock.now() }),
    probe: async () => {
      probes.push(clock.now());
      return alive && link.state.state === 'connected' ? null : DOWN;
    },
    watch: (signal) =>
      new Promise<void>((resolve) => {
        endStream = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    restart:
      o.restart ??
      (async () => {
        restarts.push(clock.now());
        alive = true;
        return 'far kept';
      }),
  });
  return {
    k,
    clock,
    link,
    told,
    restarts,
    probes,
    /** The supervisor dies: its stream ends (the forwarded socket closed), nobody answers. */
    kill() {
      alive = false;
      endStream?.();
      endStream = null;
    },
    get streaming() {
      return endStream !== null;
    },
    setAlive(v: boolean) {
      alive = v;
    },
    t0: clock.now(),
  };
}

describe("a host's supervisor kept running", () => {
  it('is watched while it answers; killed, it is started again after 1 s and told as restarting, then restarted with why', async () => {
    const r = rig();
    r.k.start();
    await settle();
    expect(r.k.state).toEqual({ state: 'answering' });
    expect(r.streaming).toBe(true);
    // Nothing polls while it answers: one ask, then the stream.
    r.clock.advance(600_000);
    await settle();
    expect(r.probes).toHaveLength(1);

    r.kill();
    await settle();
    expect(r.k.state).toMatchObject({ state: 'not-answering', reason: DOWN, attempt: 1 });
    expect(describeSupervisor(r.k.state, null, r.clock.now())).toBe(`not answering (${DOWN}); started again in 1 s unless it answers`);
    r.clock.advance(999);
    await settle();
    expect(r.restarts).toEqual([]);
    r.clock.advance(1);
    await settle();
    expect(r.restarts).toEqual([r.t0 + 600_000 + 1000]);
    expect(r.told.map((e) => [e.what, e.was, e.attempt])).toEqual([
      ['restarting', DOWN, 1],
      ['restarted', DOWN, 1],
    ]);
    expect(r.told[1]!.detail).toBe('far kept');
    expect(r.k.state).toEqual({ state: 'answering' });
    expect(r.k.restartCount).toBe(1);
    expect(describeSupervisor(r.k.state, r.k.lastRestart, r.clock.now())).toBe(`restarted at ${new Date(r.t0 + 601_000).toISOString()} (was: ${DOWN})`);
    // Watched again.
    expect(r.streaming).toBe(true);
    await r.k.close();
  });

  it('waits twice as long before each restart in a row, up to 30 s, and starts over once it stayed up 30 s', async () => {
    let fail = 6;
    const at: number[] = [];
    const r: ReturnType<typeof rig> = rig({
      restart: async () => {
        at.push(r.clock.now());
        if (fail-- > 0) throw new Error('jaggers up there failed (exit 1): tmux: no server');
        r.setAlive(true);
        return 'far opened';
      },
    });
    r.k.start();
    await settle();
    r.kill();
    await settle();
    for (let i = 0; i < 200; i++) {
      r.clock.advance(500);
      await settle();
    }
    const t = r.t0;
    // 1, 2, 4, 8, 16, 30, 30 s after each failed try.
    expect(at.map((x) => x - t)).toEqual([1000, 3000, 7000, 15000, 31000, 61000, 91000]);
    expect(r.told.filter((e) => e.what === 'restart-failed').map((e) => e.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.told.filter((e) => e.what === 'restart-failed')[0]!.detail).toBe('jaggers up there failed (exit 1): tmux: no server');
    expect(r.told.at(-1)).toMatchObject({ what: 'restarted', attempt: 7, detail: 'far opened' });

    // Killed again at once: the row goes on (30 s); after 30 s up, a new row starts at 1 s.
    r.kill();
    await settle();
    expect(r.k.state).toMatchObject({ state: 'not-answering', attempt: 8 });
    r.clock.advance(30_000);
    await settle();
    expect(r.k.state).toEqual({ state: 'answering' });
    r.clock.advance(30_000);
    await settle();
    r.kill();
    await settle();
    expect(r.k.state).toMatchObject({ state: 'not-answering', attempt: 1 });
    await r.k.close();
  });

  it('is not started again when it answers the second ask (it was booting, or someone started it meanwhile)', async () => {
    const r = rig();
    r.k.start();
    await settle();
    r.kill();
    await settle();
    r.setAlive(true);
    r.clock.advance(1000);
    await settle();
    expect(r.restarts).toEqual([]);
    expect(r.told).toEqual([]);
    expect(r.k.state).toEqual({ state: 'answering' });
    await r.k.close();
  });

  it('starts nothing while the connection is down; a host that comes back without its supervisor (rebooted) gets it started again', async () => {
    const r = rig();
    r.k.start();
    await settle();
    // The connection drops: the stream ends with it, the socket answers nothing; not the supervisor's fault.
    r.link.set({ state: 'lost', reason: 'the connection dropped' });
    r.link.set({ state: 'retrying', inMs: 1000, attempt: 1, reason: 'the connection dropped' });
    r.kill();
    for (let i = 0; i < 10; i++) {
      r.clock.advance(10_000);
      await settle();
    }
    expect(r.restarts).toEqual([]);
    expect(r.k.state).toEqual({ state: 'unknown' });
    // Back, but the host rebooted: nobody there.
    const back = r.clock.now();
    r.link.set({ state: 'connected', attempt: 2 });
    await settle();
    expect(r.k.state).toMatchObject({ state: 'not-answering', attempt: 1 });
    r.clock.advance(1000);
    await settle();
    expect(r.restarts).toEqual([back + 1000]);
    expect(r.told.map((e) => e.what)).toEqual(['restarting', 'restarted']);
    await r.k.close();
  });

  it('does not start it when the connection drops during the wait; asks again once it is back', async () => {
    const r = rig();
    r.k.start();
    await settle();
    r.kill();
    await settle();
    r.clock.advance(500);
    r.link.set({ state: 'lost', reason: 'the connection dropped' });
    await settle();
    r.clock.advance(5000);
    await settle();
    expect(r.restarts).toEqual([]);
    r.setAlive(true);
    r.link.set({ state: 'connected', attempt: 2 });
    await settle();
    expect(r.k.state).toEqual({ state: 'answering' });
    expect(r.restarts).toEqual([]);
    await r.k.close();
  });

  it('closed, starts nothing more, and waits for a restart in flight to end', async () => {
    let finish: (v: string) => void = () => {};
    const r = rig({ restart: () => new Promise<string>((res) => (finish = res)) });
    r.k.start();
    await settle();
    r.kill();
    await settle();
    r.clock.advance(1000);
    await settle();
    expect(r.k.state).toMatchObject({ state: 'restarting' });
    let closed = false;
    const closing = r.k.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    finish('far kept');
    await closing;
    expect(r.k.state).toEqual({ state: 'stopped' });
    const told = r.told.length;
    r.kill();
    r.clock.advance(60_000);
    await settle();
    expect(r.told).toHaveLength(told);
  });
});
