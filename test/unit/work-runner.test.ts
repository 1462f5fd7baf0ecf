// The one runner (src/work/runner.ts) on a fake registry, a fake table of panes and a fake executor:
// only the head of an agent's queue runs, only when the agent is ready (or the item is already in
// flight), and the next item goes in as soon as the one before it ends, with no other event needed.
import { describe, expect, it, vi } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import type { WorkItem } from '../../src/work/queue.js';
import { RETRY_FIRST_MS, Runner } from '../../src/work/runner.js';
import type { TerminalEntry } from '../../src/work/ports.js';
import { deferred, FakeAgents, FakeStore, jobEvent, messageEvent, recordingLog, settle, terminalEvents } from '../helpers/work-fakes.js';

const T = 'jg-c0de';

interface Run {
  item: WorkItem;
  e: TerminalEntry | undefined;
  signal: AbortSignal;
  end(): void;
  fail(err: Error): void;
}

function setup(status = 'idle', over: { broken?: (j: JobRecord, err: Error) => Promise<void> } = {}) {
  const store = new FakeStore();
  store.seed(...terminalEvents(T, 'coder'));
  const agents = new FakeAgents();
  const pane = agents.add({ agent: 'coder', terminalId: T }, status);
  const runs: Run[] = [];
  const lost: { id: string; why: string }[] = [];
  const broken: { id: string; err: string }[] = [];
  const log = recordingLog();
  /** How a run behaves; by default it is in flight until the test ends it. */
  let behave: ((r: Run) => void) | null = null;
  const runner = new Runner({
    data: () => store.data,
    pane: (t) => agents.find(t),
    status: (p) => agents.status(p),
    run: (item, e, signal) => {
      const d = deferred();
      // As the real runs do: a job is journaled in flight before anything else happens.
      if (item.kind === 'job' && item.j.state === 'queued') store.seed({ type: 'job-state', jobId: item.id, state: 'running', reason: 'took it' });
      const r: Run = {
        item,
        e,
        signal,
        end: () => {
          if (item.kind === 'job') store.seed({ type: 'job-state', jobId: item.id, state: 'done', reason: 'finished' });
          else store.seed({ type: 'message-delivered', messageId: item.id, how: 'verified' });
          d.resolve();
        },
        fail: (err) => d.reject(err),
      };
      runs.push(r);
      behave?.(r);
      return d.promise;
    },
    lost: async (j: JobRecord, why: string) => {
      lost.push({ id: j.id, why });
      store.seed({ type: 'job-state', jobId: j.id, state: 'failed', reason: why, code: 'E_PANE_GONE' });
    },
    broken: async (j: JobRecord, err: Error) => {
      broken.push({ id: j.id, err: err.message });
      store.seed({ type: 'job-state', jobId: j.id, state: 'failed', reason: err.message, code: 'E_INTERNAL' });
    },
    ...over,
    log,
  });
  const ran = () => runs.map((r) => r.item.id);
  const setStatus = (s: string) => agents.statuses.set(pane.pane.paneId, s);
  return { store, agents, pane, runs, lost, broken, log, runner, ran, setStatus, behave: (b: (r: Run) => void) => (behave = b) };
}

describe('the runner', () => {
  it('runs the head only when the agent is ready; a state change kicks it off', async () => {
    const h = setup('busy');
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual([]);
    expect(h.runner.waiting(T, 'j-01')).toBe('coder is busy; the next item goes in when it is idle or done');
    h.setStatus('waiting_input');
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual([]);
    expect(h.runner.waiting(T)).toMatch(/^coder is waiting_input \(it waits for a person: `jaggers answer coder <choice>` or `jaggers attach coder`\)/);
    h.setStatus('idle');
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runs[0]!.e?.pane.terminalId).toBe(T);
    expect(h.runner.current(T)).toBe('j-01');
    // The item that runs waits for nothing.
    expect(h.runner.waiting(T, 'j-01')).toBeNull();
  });

  it('starts the next item as soon as the one before ends, with no other kick (one that arrived while it ran included)', async () => {
    const h = setup();
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    // Two arrive while j-01 runs: one kicks (as Jobs.create does), one is only in the registry.
    h.store.seed(messageEvent('m-01'));
    h.runner.kick(T);
    h.store.seed(jobEvent('j-02', { work: 'handoff' }));
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runner.waiting(T, 'm-01')).toBe('behind job j-01 (running) for coder');
    expect(h.runner.waiting(T, 'j-02')).toBe('behind job j-01 (running) and 1 more for coder');
    h.runs[0]!.end();
    await settle();
    expect(h.ran()).toEqual(['j-01', 'm-01']);
    h.runs[1]!.end();
    await settle();
    expect(h.ran()).toEqual(['j-01', 'm-01', 'j-02']);
    h.runs[2]!.end();
    await settle();
    expect(h.runner.current(T)).toBeNull();
    expect(h.runner.waiting(T)).toBeNull();
  });

  it('an item that arrives in the same tick the one before ends still goes in', async () => {
    const h = setup();
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    h.store.seed(jobEvent('j-02'));
    h.runner.kick(T);
    h.runs[0]!.end();
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    // Exactly once: a kick while it pumped does not start it twice.
    h.runs[1]!.end();
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
  });

  it('follows an item in flight even when the agent is busy (a supervisor restarted during its turn)', async () => {
    const h = setup('busy');
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'), { type: 'job-state', jobId: 'j-02', state: 'running', reason: 'took it' });
    h.runner.kickAll();
    await settle();
    expect(h.ran()).toEqual(['j-02']);
    expect(h.runs[0]!.item.kind === 'job' && h.runs[0]!.item.j.state).toBe('running');
    h.runs[0]!.end();
    await settle();
    // The queued one still waits for the agent to be ready.
    expect(h.ran()).toEqual(['j-02']);
    h.setStatus('done');
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-02', 'j-01']);
  });

  it('fails an item in flight in a dead pane through `lost`, then waits with the next one for `up`', async () => {
    const h = setup();
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'), { type: 'job-state', jobId: 'j-01', state: 'starting', reason: 'typing' });
    h.agents.kill(T);
    h.runner.kick(T);
    await settle();
    expect(h.lost).toEqual([{ id: 'j-01', why: "coder's pane is dead: run `jaggers up` to restart it" }]);
    expect(h.store.data.jobs['j-01']!.state).toBe('failed');
    expect(h.ran()).toEqual([]);
    // A queued item of a team agent is not lost with the pane: `up` restarts it.
    expect(h.store.data.jobs['j-02']!.state).toBe('queued');
    expect(h.runner.waiting(T, 'j-02')).toBe("coder's pane is dead: run `jaggers up` to restart it");
    // The watcher's `exited` counts as dead as well.
    h.agents.remove(T);
    const e = h.agents.add({ agent: 'coder', terminalId: T }, 'exited');
    h.runner.kick(T);
    await settle();
    expect(h.lost).toHaveLength(1);
    h.agents.statuses.set(e.pane.paneId, 'idle');
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-02']);
  });

  it('a team agent with no window keeps its item in flight and waits (no `lost`); a worker with none is lost', async () => {
    const h = setup();
    h.agents.remove(T);
    h.store.seed(jobEvent('j-01'), { type: 'job-state', jobId: 'j-01', state: 'running', reason: 'took it' });
    h.runner.kick(T);
    await settle();
    expect(h.lost).toEqual([]);
    expect(h.store.data.jobs['j-01']!.state).toBe('running');
    expect(h.runner.waiting(T)).toBe('coder has no window open: run `jaggers up`');

    const W = 'jg-e0e0';
    h.store.seed(
      ...terminalEvents(W, 'claude-j-0a0b0c0d', { task: 'j-0a0b0c0d' }),
      jobEvent('j-0a0b0c0d', { kind: 'worker', target: 'claude', terminalId: null }),
      { type: 'job-state', jobId: 'j-0a0b0c0d', state: 'starting', reason: 'window opened', terminalId: W, agent: 'claude-j-0a0b0c0d' },
    );
    h.runner.kick(W);
    await settle();
    expect(h.lost).toEqual([{ id: 'j-0a0b0c0d', why: 'claude-j-0a0b0c0d has no window open: run `jaggers up`' }]);
  });

  it('a message that fails 3 tries in a row waits for the next kick, then is tried again', async () => {
    const h = setup();
    let failing = true;
    h.behave((r) => (failing ? r.fail(new Error('not ready (busy)')) : r.end()));
    h.store.seed(messageEvent('m-01'), jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['m-01', 'm-01', 'm-01']);
    expect(h.runner.waiting(T, 'm-01')).toMatch(/^the last 3 tries failed \(not ready \(busy\)\); tried again at \S+ or at the agent's next change of state$/);
    expect(h.log.lines.filter((l) => l.msg === 'message not delivered; tried again')).toHaveLength(3);
    await settle();
    expect(h.ran()).toHaveLength(3);
    failing = false;
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['m-01', 'm-01', 'm-01', 'm-01', 'j-01']);
    expect(h.store.data.messages['m-01']!.state).toBe('delivered');
  });

  it('a message whose tries keep failing while no event comes is tried again after 5 s, then 10 s: its queue never stops for good', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const h = setup();
      let failing = true;
      h.behave((r) => (failing ? r.fail(new Error('not ready (a prompt left in the input box)')) : r.end()));
      h.store.seed(messageEvent('m-01'), jobEvent('j-01'));
      const t0 = Date.now();
      h.runner.kick(T);
      await settle();
      expect(h.ran()).toHaveLength(3);
      expect(h.runner.waiting(T, 'm-01')).toContain(`tried again at ${new Date(t0 + RETRY_FIRST_MS).toISOString()}`);
      await vi.advanceTimersByTimeAsync(RETRY_FIRST_MS - 100);
      expect(h.ran()).toHaveLength(3);
      await vi.advanceTimersByTimeAsync(200);
      await settle();
      // The second round: three tries more, then twice the wait.
      expect(h.ran()).toHaveLength(6);
      // (the wake comes 5 ms after its time; the tries take no time on this clock)
      expect(h.runner.waiting(T, 'm-01')).toContain(`tried again at ${new Date(t0 + RETRY_FIRST_MS + 5 + 2 * RETRY_FIRST_MS).toISOString()}`);
      failing = false;
      await vi.advanceTimersByTimeAsync(2 * RETRY_FIRST_MS + 100);
      await settle();
      expect(h.ran()).toEqual(['m-01', 'm-01', 'm-01', 'm-01', 'm-01', 'm-01', 'm-01', 'j-01']);
      expect(h.store.data.messages['m-01']!.state).toBe('delivered');
      h.runner.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a state change during the last failing try is not lost: the message is tried again at once', async () => {
    const h = setup();
    let tries = 0;
    h.behave((r) => {
      tries++;
      if (tries < 3) return r.fail(new Error('not ready (busy)'));
      if (tries === 3) {
        // The agent became ready while the third try was failing.
        h.runner.kick(T);
        return r.fail(new Error('not ready (busy)'));
      }
      r.end();
    });
    h.store.seed(messageEvent('m-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['m-01', 'm-01', 'm-01', 'm-01']);
    expect(h.store.data.messages['m-01']!.state).toBe('delivered');
  });

  it('a job whose run throws is recorded broken and the queue goes on', async () => {
    const h = setup();
    h.behave((r) => (r.item.id === 'j-01' ? r.fail(new Error('disk full')) : r.end()));
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'));
    h.runner.kick(T);
    await settle();
    expect(h.broken).toEqual([{ id: 'j-01', err: 'disk full' }]);
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    expect(h.store.data.jobs['j-02']!.state).toBe('done');
  });

  it('a job held by a full disk is neither failed nor run again in a loop: it waits, says why, and goes on at the next kick', async () => {
    const h = setup();
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const full = new JaggersError('E_DISK_FULL', 'writing .jaggers/handover/turn_1.md failed: ENOSPC: no space left on device, write', { cause: enospc });
    let disk = 'full';
    h.behave((r) => (disk === 'full' ? r.fail(full) : r.end()));
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'));
    h.runner.kick(T);
    await settle();
    // One try, not a loop; not recorded broken (failed): it stays the head.
    expect(h.ran()).toEqual(['j-01']);
    expect(h.broken).toEqual([]);
    expect(h.runner.waiting(T, 'j-01')).toMatch(
      /^held: writing \.jaggers\/handover\/turn_1\.md failed: ENOSPC.*; it goes on when the disk takes writes again$/,
    );
    expect(h.runner.waiting(T, 'j-02')).toBe('behind job j-01 (running) for coder');
    disk = 'ok';
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-01', 'j-02']);
    expect(h.store.data.jobs['j-01']!.state).toBe('done');
  });

  it('a broken job whose end cannot be recorded waits for the next kick instead of running again at once', async () => {
    const h = setup('idle', { broken: async () => Promise.reject(new Error('cannot write')) });
    h.behave((r) => r.fail(new Error('a bug')));
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runner.waiting(T, 'j-01')).toBe('job j-01 broke (a bug) and its end could not be recorded: cannot write');
  });

  it('runs a headless job without a pane', async () => {
    const h = setup();
    h.agents.remove(T);
    h.store.seed(jobEvent('j-01', { headless: true, work: 'handoff' }));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01']);
    expect(h.runs[0]!.e).toBeUndefined();
  });

  it('says why the head waits for a profile that does not load', async () => {
    const h = setup();
    h.agents.remove(T);
    h.agents.add({ agent: 'coder', terminalId: T, profile: null, problem: 'profiles/fake.json: bad' }, 'idle');
    h.store.seed(jobEvent('j-01'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual([]);
    expect(h.runner.waiting(T, 'j-01')).toBe("coder's profile cannot be loaded: profiles/fake.json: bad");
    expect(h.runner.waiting(T, 'j-99')).toBeNull();
  });

  it('abort(id) stops following that item; stop() aborts what runs and starts nothing more', async () => {
    const h = setup();
    h.store.seed(jobEvent('j-01'), jobEvent('j-02'));
    h.runner.kick(T);
    await settle();
    h.runner.abort('j-02');
    expect(h.runs[0]!.signal.aborted).toBe(false);
    h.runner.abort('j-01');
    expect(h.runs[0]!.signal.aborted).toBe(true);
    h.runs[0]!.end();
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    h.runner.stop();
    expect(h.runs[1]!.signal.aborted).toBe(true);
    h.runs[1]!.fail(new Error('stopped'));
    h.store.seed(jobEvent('j-03'));
    h.runner.kick(T);
    await settle();
    expect(h.ran()).toEqual(['j-01', 'j-02']);
    // A run that ends because the supervisor stops is no broken job: the next supervisor follows it.
    expect(h.broken).toEqual([]);
  });
});
