// Worker windows for items assigned to a profile (src/work/workers.ts): at most `maxWorkers` of a
// profile at once, a window being opened counts, a failure to open is the item's end with its code.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { EventHub } from '../../src/supervisor/event-hub.js';
import { WorkJournal } from '../../src/work/journal.js';
import { Workers } from '../../src/work/workers.js';
import { tempDirs } from '../helpers/temp-dir.js';
import { deferred, FakeStore, jobEvent, recordingLog, settle, testProfile } from '../helpers/work-fakes.js';

const temp = tempDirs('jaggers-workers-');

async function setup(max: Record<string, number> = { claude: 2, codex: 1 }) {
  const root = await temp();
  const store = new FakeStore();
  const hub = new EventHub();
  const journal = new WorkJournal({
    store,
    hub,
    log: recordingLog(),
    dirs: { projectRoot: root, jaggersDir: path.join(root, '.jaggers') },
    ended: async () => {},
  });
  const opens: { j: JobRecord; done: ReturnType<typeof deferred<boolean>> }[] = [];
  const kicks: string[] = [];
  const panes = new Set<string>();
  let n = 0;
  const workers = new Workers({
    store,
    journal,
    log: recordingLog(),
    maxWorkers: async (name) => max[name] ?? 1,
    loadProfile: async (name) => {
      if (name === 'gone') throw new JaggersError('E_PROFILE_UNKNOWN', 'unknown profile "gone"');
      return testProfile({ name });
    },
    open: (j) => {
      const done = deferred<boolean>();
      opens.push({ j, done });
      return done.promise;
    },
    hasPane: (t) => panes.has(t),
    kick: (t) => void kicks.push(t),
  });
  /** The launcher opened the window: the item is `starting` in it. */
  const opened = async (i: number) => {
    const { j, done } = opens[i]!;
    const terminalId = `jg-${(++n).toString(16).padStart(4, '0')}`;
    store.seed(
      { type: 'terminal-created', terminalId, agent: `${j.target}-${j.id}`, profile: j.target, cwd: root, task: j.id },
      { type: 'job-state', jobId: j.id, state: 'starting', reason: 'window opened', terminalId, agent: `${j.target}-${j.id}`, window: `@${n}` },
    );
    panes.add(terminalId);
    done.resolve(true);
    await settle();
    return terminalId;
  };
  const worker = (id: string, target = 'claude') => jobEvent(id, { kind: 'worker', target, terminalId: null });
  return { store, workers, opens, kicks, panes, opened, worker, opening: () => opens.map((o) => o.j.id) };
}

describe('worker windows', () => {
  it('opens at most maxWorkers per profile, oldest first; the rest wait for a slot', async () => {
    const h = await setup();
    h.store.seed(h.worker('j-01'), h.worker('j-02'), h.worker('j-03'), h.worker('j-04', 'codex'), h.worker('j-05', 'codex'));
    h.workers.pump();
    await settle();
    expect(h.opening()).toEqual(['j-01', 'j-02', 'j-04']);
    const j = (id: string) => h.store.data.jobs[id]!;
    expect(h.workers.waiting(j('j-01'))).toBe('opening a claude worker window');
    expect(h.workers.waiting(j('j-03'))).toBe('waiting for a claude worker slot (maxWorkers)');
    const t1 = await h.opened(0);
    expect(h.kicks).toEqual([t1]);
    // Still two claude workers: the third waits until one ends.
    h.workers.pump();
    await settle();
    expect(h.opening()).toEqual(['j-01', 'j-02', 'j-04']);
    h.store.seed({ type: 'job-state', jobId: 'j-01', state: 'done', reason: 'finished' });
    h.workers.pump();
    await settle();
    expect(h.opening()).toEqual(['j-01', 'j-02', 'j-04', 'j-03']);
  });

  it('counts a window being opened: pumps at the same time open no more (each awaits maxWorkers before it opens)', async () => {
    const h = await setup({ claude: 1 });
    h.store.seed(h.worker('j-01'), h.worker('j-02'));
    h.workers.pump();
    h.workers.pump();
    await settle();
    h.workers.pump();
    await h.workers.pumpNow();
    // Neither j-01 a second time (two windows for one item) nor j-02 beside it (two workers where one may run).
    expect(h.opening()).toEqual(['j-01']);
  });

  it('an item that ended while its window opened is not kicked', async () => {
    const h = await setup();
    h.store.seed(h.worker('j-01'));
    await h.workers.pumpNow();
    h.opens[0]!.done.resolve(false);
    await settle();
    expect(h.kicks).toEqual([]);
  });

  it("a window that cannot be opened fails its item with the error's code (E_TMUX_COMMAND when it has none)", async () => {
    const h = await setup({ claude: 5 });
    h.store.seed(h.worker('j-01'), h.worker('j-02'), h.worker('j-03', 'gone'));
    await h.workers.pumpNow();
    h.opens[0]!.done.reject(new JaggersError('E_COMMAND_NOT_FOUND', 'profile claude\'s command "claude" is not installed (not found on PATH)'));
    h.opens[1]!.done.reject(new Error('tmux new-window failed: no space for new pane'));
    await settle();
    expect(h.store.data.jobs['j-01']).toMatchObject({
      state: 'failed',
      code: 'E_COMMAND_NOT_FOUND',
      reason: 'could not open a worker window: profile claude\'s command "claude" is not installed (not found on PATH)',
    });
    expect(h.store.data.jobs['j-02']).toMatchObject({ state: 'failed', code: 'E_TMUX_COMMAND' });
    // A profile that no longer loads fails it before any window.
    expect(h.store.data.jobs['j-03']).toMatchObject({ state: 'failed', code: 'E_PROFILE_UNKNOWN' });
    expect(h.opening()).toEqual(['j-01', 'j-02']);
  });

  it('opens again a worker lost between its window and its record (starting, its pane gone); one with a pane is left', async () => {
    const h = await setup();
    h.store.seed(h.worker('j-01'), h.worker('j-02'));
    await h.workers.pumpNow();
    await h.opened(0);
    await h.opened(1);
    // A restart: j-01's pane is gone with its tmux server, j-02's is there.
    const t1 = h.store.data.jobs['j-01']!.terminalId!;
    h.panes.delete(t1);
    await h.workers.pumpNow();
    expect(h.opening()).toEqual(['j-01', 'j-02', 'j-01']);
    expect(h.opens[2]!.j.terminalId).toBe(t1);
  });
});
