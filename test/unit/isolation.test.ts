// The supervisor's side of worktrees (src/agents/isolation.ts) on a fake git layer: which worktree an
// agent or a job means, when one is in use, merge committing what its agent left (never during a turn),
// the commit at an item's end, and what gc may take.
import { describe, expect, it } from 'vitest';
import { agentWorktree, Isolation, worktreeOf } from '../../src/agents/isolation.js';
import type { Worktrees } from '../../src/agents/worktrees/worktrees.js';
import type { JournalEvent } from '../../src/sessions/events.js';
import type { JobRecord } from '../../src/sessions/registry.js';
import { applyEvents, emptyRegistry } from '../../src/sessions/schema.js';

const ROOT = '/p';
const WT = '/p/.jaggers/worktrees';
const ts = '2026-11-26T10:00:00.000Z';
const terminal = (terminalId: string, agent: string, cwd: string): JournalEvent => ({
  ts,
  type: 'terminal-created',
  terminalId,
  agent,
  profile: 'fake',
  cwd,
  task: null,
});
const job = (jobId: string, target: string, worktree: boolean): JournalEvent => ({
  ts,
  type: 'job-created',
  jobId,
  name: null,
  target,
  kind: 'worker',
  terminalId: null,
  from: null,
  fromAgent: null,
  prompt: `.jaggers/jobs/${jobId}.md`,
  bytes: 1,
  timeoutMs: null,
  keep: false,
  ...(worktree ? { worktree: { base: null } } : {}),
});

/** A git layer that records what it was asked; each worktree's cleanliness is set by the test. */
function fakeWorktrees(dirty: Set<string>) {
  const calls: string[] = [];
  const status = (name: string) => ({
    name,
    path: `${WT}/${name}`,
    branch: `jaggers/${name}`,
    head: 'h',
    base: 'b',
    baseBranch: 'main',
    present: true,
    dirty: { staged: 0, unstaged: dirty.has(name) ? 1 : 0, untracked: 0, conflicted: 0 },
    clean: !dirty.has(name),
    ahead: 1,
    mergedInto: 'main',
    merged: false,
  });
  const wt = {
    root: ROOT,
    dir: WT,
    create: async (name: string) => {
      calls.push(`create ${name}`);
      return {
        name,
        path: `${WT}/${name}`,
        branch: `jaggers/${name}`,
        base: 'b',
        baseBranch: 'main',
        createdAt: ts,
        created: true,
        repaired: null,
        copied: null,
        setup: null,
      };
    },
    list: async () => [],
    status: async (name: string) => status(name),
    diff: async (name: string) => ({
      name,
      base: 'b',
      head: 'h',
      files: [{ path: 'f', added: 2, removed: 1, binary: false }],
      commits: [],
      patch: null,
      uncommitted: false,
    }),
    commit: async (name: string, message: string) => {
      calls.push(`commit ${name}: ${message}`);
      dirty.delete(name);
      return { sha: 'c0ffee' };
    },
    merge: async (name: string) => {
      calls.push(`merge ${name}`);
      return { status: 'merged' as const, mode: 'merge' as const, into: 'main', from: 'b', to: 'm', commits: 1, moved: null };
    },
    remove: async (name: string) => {
      calls.push(`remove ${name}`);
      return { name, path: `${WT}/${name}`, removed: true, branchDeleted: true };
    },
    gcCandidates: async (inUse: Iterable<string>) => {
      const used = new Set(inUse);
      return ['a', 'gone', 'dirty-gone', 'j-000000000001', 'j-000000000002']
        .filter((n) => !used.has(n))
        .map((name) => ({
          name,
          path: `${WT}/${name}`,
          kind: 'worktree' as const,
          status: status(name),
          removable: !dirty.has(name),
          why: dirty.has(name) ? 'uncommitted' : null,
        }));
    },
  } satisfies Worktrees;
  return { wt, calls };
}

function setup(o: { live?: string[]; states?: Record<string, string>; dirty?: string[] } = {}) {
  const data = applyEvents(emptyRegistry(), [
    terminal('jg-a', 'a', `${WT}/a`),
    terminal('jg-s', 'shared', ROOT),
    job('j-000000000001', 'fake', true),
    job('j-000000000002', 'fake', true),
    { ts, type: 'job-state', jobId: 'j-000000000002', state: 'done', reason: 'r' },
    job('j-000000000003', 'fake', false),
  ]);
  const { wt, calls } = fakeWorktrees(new Set(o.dirty ?? []));
  const iso = new Isolation({
    projectRoot: ROOT,
    data: () => data,
    liveTerminals: () => o.live ?? [],
    stateOf: (id) => o.states?.[id],
    open: async () => wt,
  });
  return { iso, calls, data };
}

describe('isolation', () => {
  it('names: an agent worktree by its name (a task window: agent.task); a folder in .jaggers/worktrees by its first part', () => {
    expect(agentWorktree('coder', null)).toBe('coder');
    expect(agentWorktree('coder', 't-1')).toBe('coder.t-1');
    expect(worktreeOf(WT, `${WT}/coder/sub/dir`)).toBe('coder');
    expect(worktreeOf(WT, ROOT)).toBeNull();
    expect(worktreeOf(WT, '/elsewhere/.jaggers/worktrees/x')).toBeNull();
  });

  it('resolve: a job with its own worktree, an agent by its terminal, else the name as given; a job without one is refused', () => {
    const { iso } = setup();
    expect(iso.resolve('j-000000000001')).toEqual({ name: 'j-000000000001', agent: null, job: 'j-000000000001' });
    expect(iso.resolve('a')).toEqual({ name: 'a', agent: 'a', job: null });
    expect(iso.resolve('shared')).toEqual({ name: 'shared', agent: null, job: null });
    expect(() => iso.resolve('j-000000000003')).toThrow(/did not run in a worktree of its own/);
  });

  it('place: an isolated agent starts in its worktree (its own cwd inside it); others as they are', async () => {
    const { iso, calls } = setup();
    expect(await iso.place({ name: 'b', profile: 'fake', args: [], env: {}, isolation: 'worktree', cwd: 'pkg' }, null, null)).toMatchObject({
      cwd: '.jaggers/worktrees/b/pkg',
    });
    expect(await iso.place({ name: 'c', profile: 'fake', args: [], env: {}, isolation: 'worktree' }, null, 't-9')).toMatchObject({
      cwd: '.jaggers/worktrees/c.t-9',
    });
    const plain = { name: 'd', profile: 'fake', args: [], env: {} };
    expect(await iso.place(plain, null, null)).toBe(plain);
    expect(calls).toEqual(['create b', 'create c.t-9']);
  });

  it('merge commits what the agent left, but not while it is in a turn', async () => {
    const busy = setup({ live: ['jg-a'], states: { 'jg-a': 'busy' }, dirty: ['a'] });
    await expect(busy.iso.merge('a', {})).rejects.toMatchObject({ code: 'E_WORKTREE_BUSY', message: expect.stringMatching(/a is working in it now/) });
    expect(busy.calls).toEqual([]);
    const idle = setup({ live: ['jg-a'], states: { 'jg-a': 'idle' }, dirty: ['a'] });
    expect(await idle.iso.merge('a', {})).toMatchObject({ name: 'a', committed: 'c0ffee', status: 'merged' });
    expect(idle.calls).toEqual(["commit a: jaggers: a's uncommitted work, before a merge", 'merge a']);
  });

  it('discard is refused while a live pane or an unfinished job works in the worktree', async () => {
    const { iso, calls } = setup({ live: ['jg-a'] });
    await expect(iso.discard('a', true)).rejects.toMatchObject({ code: 'E_WORKTREE_BUSY' });
    await expect(iso.discard('j-000000000001', true)).rejects.toMatchObject({ code: 'E_WORKTREE_BUSY' });
    expect(await iso.discard('j-000000000002', false)).toMatchObject({ removed: true });
    expect(calls).toEqual(['remove j-000000000002']);
  });

  it("an item's end commits its changes in its agent's worktree; not in the shared checkout, not for a send", async () => {
    const { iso, calls, data } = setup({ dirty: ['a'] });
    const item = (terminalId: string, work: JobRecord['work']) => ({ ...data.jobs['j-000000000003']!, terminalId, agent: 'a', work, state: 'done' as const });
    expect(await iso.itemEnded(item('jg-s', 'handoff'))).toBeNull();
    expect(await iso.itemEnded(item('jg-a', 'send'))).toBeNull();
    expect(await iso.itemEnded(item('jg-a', 'handoff'))).toBe('c0ffee');
    expect(await iso.itemEnded(item('jg-a', 'handoff'))).toBeNull(); // clean now
    expect(calls).toEqual(['commit a: jaggers: handoff j-000000000003 (a, done)']);
  });

  it('gc takes worktrees no pane, unfinished job or isolated agent of jaggers.json uses, when removable (all of those with force)', async () => {
    const project = { agents: [{ name: 'a', profile: 'fake', args: [], env: {}, isolation: 'worktree' as const }] };
    const kept = setup({ dirty: ['dirty-gone'] });
    const r = await kept.iso.gc(false, project);
    expect(r.removed.map((x) => x.name)).toEqual(['gone', 'j-000000000002']);
    expect(r.kept.map((x) => x.name)).toEqual(['dirty-gone']);
    const forced = setup({ dirty: ['dirty-gone'] });
    expect((await forced.iso.gc(true, project)).removed.map((x) => x.name)).toEqual(['gone', 'dirty-gone', 'j-000000000002']);
  });
});
