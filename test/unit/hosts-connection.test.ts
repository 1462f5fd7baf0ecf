// A host's connection kept up (src/hosts/connection.ts) on fake ssh processes and a simulated clock:
// the events of each change, the backoff, forwards made again, commands refused while it is down.
import { describe, expect, it } from 'vitest';
import { backoffDelay, HostConnection, type ConnectionState, type MasterProcess, type SshPorts } from '../../src/hosts/connection.js';
import { FakeClock } from '../helpers/fake-clock.js';

class FakeMaster implements MasterProcess {
  ready: Promise<void>;
  exited: Promise<{ reason: string }>;
  killed = false;
  private up!: () => void;
  private fail!: (e: Error) => void;
  private end!: (r: { reason: string }) => void;
  constructor() {
    this.ready = new Promise((resolve, reject) => {
      this.up = resolve;
      this.fail = reject;
    });
    this.ready.catch(() => {});
    this.exited = new Promise((resolve) => (this.end = resolve));
  }
  connect() {
    this.up();
  }
  die(reason: string) {
    this.fail(new Error(reason));
    this.end({ reason });
  }
  kill() {
    this.killed = true;
    this.die('killed');
  }
}

function setup() {
  const masters: FakeMaster[] = [];
  const calls: string[] = [];
  const ports: SshPorts = {
    startMaster: () => {
      const m = new FakeMaster();
      masters.push(m);
      return m;
    },
    run: async (argv) => {
      calls.push(`run ${argv.join(' ')}`);
      return { exitCode: 0, stdout: 'ok\n', stderr: '' };
    },
    start: () => {
      throw new Error('not used');
    },
    forward: async (l, r) => void calls.push(`forward ${l} ${r}`),
    cancel: async (l, r) => void calls.push(`cancel ${l} ${r}`),
    release: (l) => void calls.push(`release ${l}`),
  };
  const clock = new FakeClock();
  const conn = new HostConnection('box', ports, clock, { initialMs: 1000, factor: 2, maxMs: 8000 });
  const seen: ConnectionState[] = [];
  conn.on((s) => seen.push(s));
  return { conn, masters, calls, clock, seen, last: () => masters[masters.length - 1]! };
}

/** Let the promise callbacks the fakes set off run. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('backoff', () => {
  it('doubles from the first wait up to the most', () => {
    const b = { initialMs: 1000, factor: 2, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(b, n))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });
});

describe('HostConnection', () => {
  it('connects: connecting, then connected; runs commands only while connected', async () => {
    const h = setup();
    await expect(h.conn.run(['id'])).rejects.toMatchObject({ code: 'E_SSH', message: 'host box: cannot run a command: the connection is closed' });
    h.conn.open();
    expect(h.seen).toEqual([{ state: 'connecting', attempt: 1 }]);
    await expect(h.conn.run(['id'])).rejects.toMatchObject({ code: 'E_SSH', message: expect.stringContaining('is connecting') });
    h.last().connect();
    await settle();
    expect(h.seen.at(-1)).toEqual({ state: 'connected', attempt: 1 });
    expect(await h.conn.run(['id', '-un'])).toMatchObject({ exitCode: 0 });
    expect(h.calls).toEqual(['run id -un']);
  });

  it('a drop: lost, retrying in 1 s, and nothing more until the clock says so; then connected again with its forwards', async () => {
    const h = setup();
    h.conn.open();
    h.last().connect();
    await settle();
    await h.conn.forward('/l/api.sock', '/r/api.sock');
    expect(h.calls).toEqual(['forward /l/api.sock /r/api.sock']);

    h.last().die('host box (box): the connection dropped');
    await settle();
    expect(h.seen.slice(2)).toEqual([
      { state: 'lost', reason: 'host box (box): the connection dropped' },
      { state: 'retrying', inMs: 1000, attempt: 1, reason: 'host box (box): the connection dropped' },
    ]);
    await expect(h.conn.run(['id'])).rejects.toMatchObject({ message: expect.stringContaining('is retrying in 1 s (host box (box): the connection dropped)') });
    h.clock.advance(999);
    expect(h.masters).toHaveLength(1);
    h.clock.advance(1);
    expect(h.masters).toHaveLength(2);
    expect(h.seen.at(-1)).toEqual({ state: 'connecting', attempt: 2 });
    h.last().connect();
    await settle();
    // The forward is made again before the connection counts as connected.
    expect(h.calls).toEqual(['forward /l/api.sock /r/api.sock', 'forward /l/api.sock /r/api.sock']);
    expect(h.seen.at(-1)).toEqual({ state: 'connected', attempt: 2 });
  });

  it('failed attempts wait longer each time (no `lost`: it was not up), and the wait starts over once connected', async () => {
    const h = setup();
    h.conn.open();
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      h.last().die('cannot connect');
      await settle();
      const s = h.seen.at(-1)!;
      expect(s.state).toBe('retrying');
      waits.push((s as { inMs: number }).inMs);
      h.clock.advance((s as { inMs: number }).inMs);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(h.seen.some((s) => s.state === 'lost')).toBe(false);
    h.last().connect();
    await settle();
    h.last().die('dropped');
    await settle();
    expect(h.seen.at(-1)).toMatchObject({ state: 'retrying', inMs: 1000, attempt: 1 });
  });

  it('close(): ends the master, stops retrying, says closed once; whenConnected() then rejects', async () => {
    const h = setup();
    h.conn.open();
    const waiting = h.conn.whenConnected();
    h.last().die('refused');
    await settle();
    await h.conn.close();
    expect(h.seen.at(-1)).toEqual({ state: 'closed' });
    await expect(waiting).rejects.toMatchObject({ code: 'E_SSH' });
    h.clock.advance(60_000);
    expect(h.masters).toHaveLength(1);

    const g = setup();
    g.conn.open();
    g.last().connect();
    await settle();
    await g.conn.close();
    expect(g.last().killed).toBe(true);
    expect(g.seen.map((s) => s.state)).toEqual(['connecting', 'connected', 'closed']);
  });

  it('an attempt that is not connected in time is ended and retried, saying why', async () => {
    const h = setup();
    h.conn.open();
    h.clock.advance(29_999);
    expect(h.last().killed).toBe(false);
    h.clock.advance(1);
    expect(h.last().killed).toBe(true);
    await settle();
    expect(h.seen.at(-1)).toEqual({ state: 'retrying', inMs: 1000, attempt: 1, reason: 'host box: not connected within 30 s' });
    h.clock.advance(1000);
    h.last().connect();
    await settle();
    // Connected in time: the deadline of that attempt does nothing later.
    h.clock.advance(60_000);
    expect(h.last().killed).toBe(false);
    expect(h.seen.at(-1)).toMatchObject({ state: 'connected' });
  });

  it("close(): the forwards' local sockets are removed", async () => {
    const h = setup();
    h.conn.open();
    h.last().connect();
    await settle();
    await h.conn.forward('/l/a', '/r/a');
    await h.conn.close();
    expect(h.calls).toEqual(['forward /l/a /r/a', 'release /l/a']);
  });

  it('unforward: cancelled now, and not made again after a reconnect', async () => {
    const h = setup();
    h.conn.open();
    h.last().connect();
    await settle();
    await h.conn.forward('/l/a', '/r/a');
    await h.conn.unforward('/l/a');
    h.last().die('dropped');
    await settle();
    h.clock.advance(1000);
    h.last().connect();
    await settle();
    expect(h.calls).toEqual(['forward /l/a /r/a', 'cancel /l/a /r/a']);
  });
});
