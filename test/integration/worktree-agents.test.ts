// Agents in git worktrees of their own (issue 28), end to end on real git, real tmux and the fake agent:
// two isolated agents edit the same file at once, each change stays on its own branch (committed by
// jaggers at the end of each handoff), `diff` shows each, `merge` of the first succeeds and of the second
// reports the conflict and leaves the user's checkout exactly as it was; `discard` and `gc` keep work
// that is not merged; after `down` and `up` each agent resumes its pinned conversation in its worktree.
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPanes } from '../../src/tmux/commands.js';
import { readRegistry } from '../helpers/api.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import { initRigRepo } from '../helpers/git-repo.js';

describe('agents in git worktrees of their own', () => {
  let rig: Rig;
  let git: (args: string[], cwd?: string) => string;
  /** What a user would notice changing in their checkout. */
  const snapshot = async () => ({
    head: git(['rev-parse', 'HEAD']),
    status: git(['status', '--porcelain=v2', '-z', '--untracked-files=all']),
    index: (await readFile(path.join(rig.root, '.git', 'index'))).toString('base64'),
    main: git(['rev-parse', 'refs/heads/main']),
    file: await readFile(path.join(rig.root, 'shared.txt'), 'utf8'),
  });
  const wt = (name: string) => path.join(rig.root, '.jaggers', 'worktrees', name);

  beforeAll(async () => {
    rig = await Rig.create();
    git = await initRigRepo(rig);
    await writeFile(path.join(rig.root, 'shared.txt'), 'original\n');
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, {
      agents: [
        { name: 'a', profile: 'fake', isolation: 'worktree' },
        { name: 'b', profile: 'fake', isolation: 'worktree' },
      ],
    });
    git(['add', 'shared.txt', 'jaggers.json']);
    git(['commit', '-q', '-m', 'first']);
  }, 30_000);
  afterAll(async () => rig?.cleanup());

  it('up starts each isolated agent in .jaggers/worktrees/<agent> on jaggers/<agent>, the user checkout untouched', async () => {
    const before = await snapshot();
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    const panes = (await listPanes(await rig.control(), rig.session)).filter((p) => p.agent);
    expect(panes.map((p) => p.agent).sort()).toEqual(['a', 'b']);
    for (const p of panes) {
      expect(await readlink(`/proc/${p.panePid}/cwd`)).toBe(wt(p.agent!));
      expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], wt(p.agent!)).trim()).toBe(`jaggers/${p.agent}`);
    }
    const reg = readRegistry(rig.root);
    expect(Object.values(reg.terminals).map((t) => [t.agent, t.cwd])).toEqual(
      expect.arrayContaining([
        ['a', wt('a')],
        ['b', wt('b')],
      ]),
    );
    // .jaggers/ is excluded now (the profile in it no longer shows as untracked); nothing else changed.
    expect(before.status).toBe('? .jaggers/profiles/fake.json\0');
    expect(await snapshot()).toEqual({ ...before, status: '' });
  }, 60_000);

  it('two agents change the same file at once: each change stays in its own worktree, committed on its branch when its handoff ends', async () => {
    const [ra, rb] = await Promise.all([
      rig.run(['handoff', 'a', '-m', 'write: shared.txt "from a\\n"', '--timeout', '60']),
      rig.run(['handoff', 'b', '-m', 'write: shared.txt "from b\\n"', '--timeout', '60']),
    ]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(await readFile(path.join(wt('a'), 'shared.txt'), 'utf8')).toBe('from a\n');
    expect(await readFile(path.join(wt('b'), 'shared.txt'), 'utf8')).toBe('from b\n');
    expect(await readFile(path.join(rig.root, 'shared.txt'), 'utf8')).toBe('original\n');
    for (const agent of ['a', 'b']) {
      const d = await rig.run(['diff', agent, '--json', '--patch']);
      expect(d.code, d.stderr).toBe(0);
      const diff = JSON.parse(d.stdout) as { name: string; agent: string; commits: { subject: string }[]; files: { path: string }[]; patch: string };
      expect(diff).toMatchObject({ name: agent, agent });
      expect(diff.files.map((f) => f.path)).toEqual(['shared.txt']);
      expect(diff.commits).toHaveLength(1);
      expect(diff.commits[0]!.subject).toMatch(new RegExp(`^jaggers: handoff j-[0-9a-f]{12} \\(${agent}, done\\)$`));
      expect(diff.patch).toContain(`+from ${agent}`);
      expect(git(['status', '--porcelain'], wt(agent))).toBe('');
    }
    const list = await rig.run(['worktrees']);
    expect(list.stdout).toMatch(/^a\s+a\s+jaggers\/a\s+main@[0-9a-f]{9}\s+1\s+clean\s+no\s+yes$/m);
  }, 90_000);

  it("merge of the first succeeds (the user's clean checkout moves with it); of the second, the conflict changes nothing", async () => {
    const m = await rig.run(['merge', 'a']);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/^a: 1 commit merged into main \(merge\)/);
    expect(await readFile(path.join(rig.root, 'shared.txt'), 'utf8')).toBe('from a\n');
    const before = await snapshot();
    const c = await rig.run(['merge', 'b']);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toMatch(/conflict/i);
    expect(c.stderr).toContain('shared.txt');
    expect(await snapshot()).toEqual(before);
    const list = JSON.parse((await rig.run(['worktrees', '--json'])).stdout) as { name: string; status: { merged: boolean } }[];
    expect(list.map((w) => [w.name, w.status.merged])).toEqual([
      ['a', true],
      ['b', false],
    ]);
  }, 60_000);

  it('a job assigned --worktree runs its worker in a worktree of its own; its result names the branch, commits and diff stat; merge brings it in', async () => {
    const a = await rig.run(['assign', 'fake', '--worktree', '--json', '-m', 'write: notes/job.txt "from the job\\n"']);
    expect(a.code, a.stderr).toBe(0);
    const id = (JSON.parse(a.stdout) as { id: string }).id;
    const w = await rig.run(['wait', id, '--timeout', '60', '--json']);
    expect(w.code, w.stderr + w.stdout).toBe(0);
    const job = JSON.parse((await rig.run(['jobs', '--json'])).stdout).find((j: { id: string }) => j.id === id) as {
      state: string;
      worktree: { base: string | null; result: Record<string, unknown> };
    };
    expect(job.state).toBe('done');
    expect(job.worktree).toMatchObject({ base: null, result: { branch: `jaggers/${id}`, commits: 1, files: 1, added: 1, removed: 0 } });
    expect(await readFile(path.join(wt(id), 'notes', 'job.txt'), 'utf8')).toBe('from the job\n');
    const d = JSON.parse((await rig.run(['diff', id, '--json'])).stdout) as { job: string; files: { path: string }[] };
    expect(d).toMatchObject({ job: id, files: [{ path: 'notes/job.txt' }] });
    // Its worker's window closed with the job: the worktree is no longer in use, and merges.
    const m = await rig.run(['merge', id, '--squash']);
    expect(m.code, m.stderr).toBe(0);
    expect(await readFile(path.join(rig.root, 'notes', 'job.txt'), 'utf8')).toBe('from the job\n');
    // --worktree is for a new worker: an agent keeps its own folder.
    const refused = await rig.run(['assign', 'a', '--worktree', '-m', 'x']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/give it "isolation": "worktree" in jaggers.json/);
  }, 90_000);

  it("an isolated agent's window of a workflow task works in a worktree of its own, agent.task", async () => {
    const r = await rig.run(['run', 'handoff', '-m', 'write: task.txt "from the task\\n"', '--agents', 'a', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const task = (JSON.parse(r.stdout) as { id: string }).id;
    const t = Object.values(readRegistry(rig.root).terminals).find((x) => x.agent === 'a' && x.task === task)!;
    expect(t.cwd).toBe(wt(`a.${task}`));
    expect(await readFile(path.join(wt(`a.${task}`), 'task.txt'), 'utf8')).toBe('from the task\n');
    const d = JSON.parse((await rig.run(['diff', `a.${task}`, '--json'])).stdout) as { files: { path: string }[]; commits: unknown[] };
    expect(d.files.map((f) => f.path)).toEqual(['task.txt']);
    expect(d.commits).toHaveLength(1);
    expect((await rig.run(['discard', `a.${task}`, '--force'])).code).toBe(0);
  }, 90_000);

  it('run --worktree: every agent of the task works in one worktree of the task, each turn a commit on jaggers/<task>', async () => {
    const r = await rig.run(['run', 'handoff', '-m', 'write: run.txt "from the run\\n"', '--agents', 'b', '--worktree', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const task = (JSON.parse(r.stdout) as { id: string }).id;
    const t = Object.values(readRegistry(rig.root).terminals).find((x) => x.agent === 'b' && x.task === task)!;
    expect(t.cwd).toBe(wt(task));
    expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], wt(task)).trim()).toBe(`jaggers/${task}`);
    const d = JSON.parse((await rig.run(['diff', task, '--json'])).stdout) as { files: { path: string }[]; commits: unknown[] };
    expect(d.files.map((f) => f.path)).toEqual(['run.txt']);
    expect(d.commits).toHaveLength(1);
    // The task ended and its windows closed: its worktree is no longer in use.
    expect((await rig.run(['discard', task, '--force'])).code).toBe(0);
  }, 90_000);

  it('discard refuses while its agent runs, and then while its work is not merged; gc keeps the worktrees jaggers.json names', async () => {
    const busy = await rig.run(['discard', 'b']);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toMatch(/worktree b is in use by b/);
    const team = (x: { agent: string; task: string | null }) => (x.agent === 'a' || x.agent === 'b') && x.task === null;
    const pinned = Object.fromEntries(
      Object.values(readRegistry(rig.root).terminals)
        .filter(team)
        .map((t) => [t.agent, t.sessionId]),
    );
    expect((await rig.run(['down'])).code).toBe(0);
    const unmerged = await rig.run(['discard', 'b']);
    expect(unmerged.code).not.toBe(0);
    expect(unmerged.stderr).toMatch(/not merged|unmerged/i);
    const gc = await rig.run(['gc', '--json']);
    expect(gc.code, gc.stderr).toBe(0);
    // The job's worktree is merged and its job ended: gc takes it; the agents' stay (jaggers.json names them).
    expect(JSON.parse(gc.stdout)).toMatchObject({ removed: [{ removed: true }], kept: [] });
    // Up again: each agent resumes its pinned conversation in its worktree.
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    const reg = readRegistry(rig.root);
    for (const t of Object.values(reg.terminals).filter(team)) {
      expect(t.sessionId).toBe(pinned[t.agent]);
      expect(t.cwd).toBe(wt(t.agent));
    }
    for (const p of (await listPanes(await rig.control(), rig.session)).filter((x) => x.agent))
      expect(await readlink(`/proc/${p.panePid}/cwd`)).toBe(wt(p.agent!));
    expect((await rig.run(['down'])).code).toBe(0);
    const forced = await rig.run(['discard', 'b', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(git(['branch', '--list', 'jaggers/b'])).toBe('');
  }, 90_000);
});

describe("a fresh worktree's setup", () => {
  let rig: Rig;
  let git: (args: string[], cwd?: string) => string;
  beforeAll(async () => {
    rig = await Rig.create();
    git = await initRigRepo(rig);
    await writeFile(path.join(rig.root, '.gitignore'), '.env\n');
    await writeFile(path.join(rig.root, '.env'), 'SECRET=1\n');
    git(['add', '.gitignore']);
    git(['commit', '-q', '-m', 'first']);
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
  }, 30_000);
  afterAll(async () => rig?.cleanup());

  it('ignored files on the copy list are copied and the setup command runs once, before the agent starts; a failing setup leaves nothing half made', async () => {
    await writeProject(rig.root, {
      worktree: { copy: ['.env'], setup: 'cat .env > setup-ran.txt && echo "setup said hello"', branchPrefix: 'agents/' },
      agents: [{ name: 'a', profile: 'fake', isolation: 'worktree' }],
    });
    const up = await rig.run(['up']);
    expect(up.code, up.stderr).toBe(0);
    const a = path.join(rig.root, '.jaggers', 'worktrees', 'a');
    expect(await readFile(path.join(a, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(await readFile(path.join(a, 'setup-ran.txt'), 'utf8')).toBe('SECRET=1\n');
    // jaggers.json's branch prefix names the branch.
    expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], a).trim()).toBe('agents/a');
    expect(JSON.parse((await rig.run(['worktrees', '--json'])).stdout)).toMatchObject([{ name: 'a', branch: 'agents/a' }]);
    // Its output is in the supervisor's log.
    const logs = path.join(rig.root, '.jaggers', 'logs');
    const texts = await Promise.all((await readdir(logs)).filter((f) => f.endsWith('.log')).map((f) => readFile(path.join(logs, f), 'utf8').catch(() => '')));
    expect(texts.join('')).toContain('setup said hello');

    await writeProject(rig.root, {
      worktree: { setup: 'echo "no network here"; exit 3' },
      agents: [
        { name: 'a', profile: 'fake', isolation: 'worktree' },
        { name: 'b', profile: 'fake', isolation: 'worktree' },
      ],
    });
    const failed = await rig.run(['up']);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/agent b: its worktree b: .*exit(ed)? (code )?3/i);
    expect(failed.stderr).toContain('no network here');
    expect(git(['branch', '--list', 'jaggers/b'])).toBe('');
    expect(git(['worktree', 'list', '--porcelain']).includes('/worktrees/b')).toBe(false);
  }, 90_000);
});
