// Merging a worktree's branch on real git: merge, squash and rebase; the base moved in the user's checkout
// (clean only) or by compare-and-swap; conflicts leave the base and the user's checkout byte-identical;
// a user config that signs, runs failing hooks and changes defaults does not get in the way.
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWorktrees, type MergeConflict, type Worktrees } from '../../src/agents/worktrees/worktrees.js';
import { isJaggersError } from '../../src/errors.js';
import { createGit, type Git } from '../../src/git/run.js';
import { makeRepo, type RepoOptions, type TestRepo } from '../helpers/git-repo.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jaggers-wtm-');

async function setup(o: RepoOptions & { git?: (repo: TestRepo) => Git } = {}): Promise<{ repo: TestRepo; wt: Worktrees }> {
  const repo = await makeRepo(await temp(), o);
  const wt = await openWorktrees(repo.root, { env: repo.env, ...(o.git ? { git: o.git(repo) } : {}) });
  return { repo, wt };
}

async function errorOf(p: Promise<unknown>): Promise<Error & { code: string }> {
  try {
    await p;
  } catch (e) {
    if (isJaggersError(e)) return e;
    throw e;
  }
  throw new Error('expected a JaggersError, but the call succeeded');
}

const sha = (repo: TestRepo, ref: string) => repo.git(['rev-parse', ref]).trim();
const parents = (repo: TestRepo, ref: string) => repo.git(['rev-list', '--parents', '-n', '1', ref]).trim().split(' ').slice(1);
const message = (repo: TestRepo, ref: string) => repo.git(['log', '-1', '--format=%B', ref]);
const tmpLeft = async (repo: TestRepo) => readdir(path.join(repo.root, '.jaggers/tmp')).catch(() => []);

describe('merging a worktree', () => {
  it('merge: a merge commit made aside, then main fast-forwarded in the clean user checkout', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'a.txt': 'from a\n' }, 'agent a: add a.txt', a.path);
    await repo.commit({ 'user.txt': 'user\n' }, 'user works on main meanwhile');
    const before = sha(repo, 'main');
    const stashBefore = repo.git(['stash', 'list']);
    const r = await wt.merge('a');
    expect(r).toMatchObject({ status: 'merged', mode: 'merge', into: 'main', from: before, commits: 1, moved: 'fast-forward' });
    expect(sha(repo, 'main')).toBe(r.to);
    expect(parents(repo, 'main')).toEqual([before, sha(repo, 'jaggers/a')]);
    expect(message(repo, 'main')).toContain('jaggers/a');
    expect(await readFile(path.join(repo.root, 'a.txt'), 'utf8')).toBe('from a\n');
    expect(repo.git(['status', '--porcelain=v2', '-z', '--untracked-files=all'])).toBe('');
    expect(repo.git(['stash', 'list'])).toBe(stashBefore);
    expect(await tmpLeft(repo)).toEqual([]);
    expect(await wt.status('a')).toMatchObject({ merged: true, clean: true });
    expect(await wt.merge('a')).toMatchObject({ status: 'up-to-date', moved: null });
    expect(await wt.remove('a')).toMatchObject({ removed: true });
  });

  it('squash: one new commit naming the branch and its commits; the branch counts as merged', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'a.txt': '1\n' }, 'step one', a.path);
    await repo.commit({ 'a.txt': '2\n' }, 'step two', a.path);
    const before = sha(repo, 'main');
    const r = await wt.merge('a', { mode: 'squash' });
    expect(r).toMatchObject({ status: 'merged', mode: 'squash', commits: 2, moved: 'fast-forward' });
    expect(parents(repo, 'main')).toEqual([before]);
    expect(message(repo, 'main')).toMatch(/jaggers\/a: 2 commit\(s\) squashed[\s\S]*\* step two\n\* step one/);
    expect(await readFile(path.join(repo.root, 'a.txt'), 'utf8')).toBe('2\n');
    expect(await wt.status('a')).toMatchObject({ merged: true, ahead: 2 });
    expect(await wt.remove('a')).toMatchObject({ removed: true });
    // Custom message, and a squash with nothing new is up to date.
    const b = await wt.create('b');
    await repo.commit({ 'a.txt': '2\n', 'b.txt': 'b\n' }, 'b', b.path);
    expect((await wt.merge('b', { mode: 'squash', message: 'Add b' })).status).toBe('merged');
    expect(message(repo, 'main')).toBe('Add b\n\n');
  });

  it('rebase: the branch rebased in its own worktree onto the moved base, then main fast-forwarded to it', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'a.txt': 'a\n' }, 'agent a', a.path);
    const moved = await repo.commit({ 'user.txt': 'u\n' }, 'user');
    const r = await wt.merge('a', { mode: 'rebase' });
    expect(r).toMatchObject({ status: 'merged', mode: 'rebase', from: moved, moved: 'fast-forward' });
    expect(sha(repo, 'main')).toBe(sha(repo, 'jaggers/a'));
    expect(parents(repo, 'main')).toEqual([moved]);
    expect(repo.git(['rev-list', '--merges', '--count', 'main']).trim()).toBe('0');
    expect(await wt.status('a')).toMatchObject({ base: moved, ahead: 1, merged: true, clean: true });
  });

  it('into a branch checked out nowhere: its ref moved by compare-and-swap, the user checkout untouched', async () => {
    const { repo, wt } = await setup();
    repo.git(['branch', 'dev']);
    const d = await wt.create('d', { base: 'dev' });
    await repo.commit({ 'd.txt': 'd\n' }, 'agent d', d.path);
    await writeFile(path.join(repo.root, 'README.md'), 'the user is editing\n');
    const snap = await repo.snapshot();
    const r = await wt.merge('d');
    expect(r).toMatchObject({ status: 'merged', into: 'dev', moved: 'update-ref' });
    expect(sha(repo, 'dev')).toBe(r.to);
    const after = await repo.snapshot();
    expect({ ...after, refs: '' }).toEqual({ ...snap, refs: '' });
    expect(after.refs.replace(/^refs\/heads\/dev .*$/m, '')).toBe(snap.refs.replace(/^refs\/heads\/dev .*$/m, ''));
  });

  it('refuses to move a base checked out with changes, or checked out in another checkout; nothing changes', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'a.txt': 'a\n' }, 'agent a', a.path);
    await writeFile(path.join(repo.root, 'README.md'), 'uncommitted\n');
    const snap = await repo.snapshot();
    const e = await errorOf(wt.merge('a'));
    expect(e.code).toBe('E_CHECKOUT_DIRTY');
    expect(e.message).toContain(repo.root);
    expect(await repo.snapshot()).toEqual(snap);

    repo.git(['branch', 'dev']);
    repo.git(['worktree', 'add', '-q', path.join(repo.root, '..', 'dev-checkout'), 'dev']);
    const e2 = await errorOf(wt.merge('a', { into: 'dev' }));
    expect(e2.code).toBe('E_BRANCH_CHECKED_OUT');
    expect(e2.message).toContain('dev-checkout');
    expect((await errorOf(wt.merge('a', { into: 'nope' }))).code).toBe('E_BASE_MISSING');
    expect((await errorOf(wt.merge('a', { into: 'a..b' }))).code).toBe('E_BAD_NAME');
  });

  it('an untracked file in the user checkout that the merge would overwrite: refused by git, nothing changed', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'new.txt': 'agent\n' }, 'agent adds new.txt', a.path);
    await writeFile(path.join(repo.root, 'new.txt'), 'user scratch\n');
    const snap = await repo.snapshot();
    const e = await errorOf(wt.merge('a'));
    expect(e.code).toBe('E_CHECKOUT_DIRTY');
    expect(await repo.snapshot()).toEqual(snap);
    expect(await readFile(path.join(repo.root, 'new.txt'), 'utf8')).toBe('user scratch\n');
  });

  it('a base that moves while the merge is made is not overwritten (E_BASE_MOVED)', async () => {
    let other = '';
    const { repo, wt } = await setup({
      git: (repo) => {
        const real = createGit({ env: repo.env });
        return {
          run: async (cwd, args, o) => {
            // Just before jaggers moves dev, someone else moves it.
            if (args[0] === 'update-ref' && args.includes('refs/heads/dev') && !args.includes('-d')) repo.git(['update-ref', 'refs/heads/dev', other]);
            return real.run(cwd, args, o);
          },
        };
      },
    });
    repo.git(['branch', 'dev']);
    other = await repo.commit({ 'o.txt': 'o\n' }, 'someone else');
    const d = await wt.create('d', { base: 'dev' });
    await repo.commit({ 'd.txt': 'd\n' }, 'agent d', d.path);
    const e = await errorOf(wt.merge('d'));
    expect(e.code).toBe('E_BASE_MOVED');
    expect(sha(repo, 'dev')).toBe(other);
  });

  it('refuses a worktree with uncommitted changes unless asked; commit() commits them', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await repo.commit({ 'a.txt': 'a\n' }, 'agent a', a.path);
    await writeFile(path.join(a.path, 'wip.txt'), 'wip\n');
    expect((await errorOf(wt.merge('a'))).code).toBe('E_WORKTREE_DIRTY');
    expect((await errorOf(wt.merge('a', { mode: 'rebase', allowDirty: true }))).code).toBe('E_WORKTREE_DIRTY');
    const c = await wt.commit('a', 'agent a: wip');
    expect(c.sha).toBe(sha(repo, 'jaggers/a'));
    expect(await wt.commit('a', 'again')).toEqual({ sha: null });
    expect((await wt.merge('a', { mode: 'squash' })).commits).toBe(2);
    expect(await readFile(path.join(repo.root, 'wip.txt'), 'utf8')).toBe('wip\n');
  });
});

describe('a conflicting merge changes nothing', () => {
  for (const mode of ['merge', 'squash', 'rebase'] as const) {
    it(`${mode}: E_MERGE_CONFLICT with the paths; main, the user checkout, its index and stash byte-identical`, async () => {
      const { repo, wt } = await setup();
      await repo.commit({ 'f.txt': 'base\n', 'g.txt': 'base\n' }, 'files');
      const a = await wt.create('a');
      await repo.commit({ 'f.txt': 'agent\n', 'g.txt': 'agent\n', 'ok.txt': 'fine\n' }, 'agent edits f and g', a.path);
      await repo.commit({ 'f.txt': 'user\n', 'g.txt': 'user\n' }, 'user edits f and g');
      // The user has work in progress too: a stash, an untracked file, a staged new file.
      await writeFile(path.join(repo.root, 'scratch.txt'), 'x\n');
      repo.git(['stash', 'push', '-q', '--include-untracked']);
      await writeFile(path.join(repo.root, 'untracked.txt'), 'u\n');
      await writeFile(path.join(repo.root, 'staged-new.txt'), 's\n');
      repo.git(['add', 'staged-new.txt']);
      const snap = await repo.snapshot();
      const agentSnap = await repo.snapshot(a.path);
      const agentEntries = repo.git(['ls-files', '--stage'], a.path);
      const e = await errorOf(wt.merge('a', { mode, into: 'main' }));
      // The staged file makes the user checkout dirty: refused before any merge is made. Commit it and try again.
      expect(e.code).toBe('E_CHECKOUT_DIRTY');
      repo.git(['reset', '-q', 'staged-new.txt']);
      const snap2 = await repo.snapshot();
      const c = (await errorOf(wt.merge('a', { mode }))) as MergeConflict;
      expect(c.code).toBe('E_MERGE_CONFLICT');
      expect(c.paths).toEqual(['f.txt', 'g.txt']);
      expect(c.message).toContain('f.txt, g.txt');
      expect(await repo.snapshot()).toEqual(snap2);
      expect(snap2.stash).toBe(snap.stash);
      // A rebase runs in the agent's worktree: its abort writes the index again (same entries, new file).
      const agentAfter = await repo.snapshot(a.path);
      expect({ ...agentAfter, indexSha: '' }).toEqual({ ...agentSnap, indexSha: '' });
      if (mode !== 'rebase') expect(agentAfter.indexSha).toBe(agentSnap.indexSha);
      expect(repo.git(['ls-files', '--stage'], a.path)).toBe(agentEntries);
      expect(await tmpLeft(repo)).toEqual([]);
    });
  }
});

describe('a user config that would make machine operations prompt, sign, run hooks or answer differently', () => {
  it('create, commit, status, diff, merge (all three), remove work, and no hook runs', async () => {
    const dir = await temp();
    const hooks = path.join(dir, 'hooks');
    const marker = path.join(dir, 'hook-ran');
    await mkdir(hooks);
    const names = [
      'pre-commit',
      'commit-msg',
      'prepare-commit-msg',
      'post-commit',
      'post-checkout',
      'pre-merge-commit',
      'post-merge',
      'pre-rebase',
      'post-rewrite',
      'reference-transaction',
      'pre-auto-gc',
    ];
    for (const h of names) {
      await writeFile(path.join(hooks, h), `#!/bin/sh\necho ${h} >> '${marker}'\nexit 1\n`);
      await chmod(path.join(hooks, h), 0o755);
    }
    const userConfig = [
      '[commit]\n\tgpgSign = true\n\tverbose = true',
      '[gpg]\n\tprogram = false',
      `[core]\n\thooksPath = ${hooks}\n\tpager = false`,
      '[merge]\n\tff = only\n\tautoStash = true\n\tlog = true\n\tverifySignatures = true',
      '[rebase]\n\tautoStash = true\n\tupdateRefs = true\n\tautoSquash = true',
      '[status]\n\tshowUntrackedFiles = no',
      '[diff]\n\tnoprefix = true\n\trenames = false\n\trelative = true',
      '[log]\n\tshowSignature = true',
      '[color]\n\tui = always',
      '[user]\n\tuseConfigOnly = true',
      '',
    ].join('\n');
    const { repo, wt } = await setup({ identity: false, userConfig });
    // The repository's own hooks folder fails too.
    for (const h of names) {
      await writeFile(path.join(repo.root, '.git/hooks', h), `#!/bin/sh\necho repo-${h} >> '${marker}'\nexit 1\n`);
      await chmod(path.join(repo.root, '.git/hooks', h), 0o755);
    }
    const a = await wt.create('a', { setup: 'true' });
    await writeFile(path.join(a.path, 'a.txt'), 'a\n');
    const c = await wt.commit('a', 'agent a');
    expect(c.sha).not.toBeNull();
    expect(repo.git(['log', '-1', '--format=%an <%ae>|%G?', 'jaggers/a']).trim()).toBe('jaggers <jaggers@localhost>|N');
    await writeFile(path.join(a.path, 'untracked.txt'), 'u\n');
    expect((await wt.status('a')).dirty.untracked).toBe(1);
    const d = await wt.diff('a', { patch: true });
    expect(d.files).toEqual([{ path: 'a.txt', added: 1, removed: 0, binary: false }]);
    expect(d.commits.map((x) => x.subject)).toEqual(['agent a']);
    expect(d.patch).toContain('+++ b/a.txt');
    await wt.commit('a', 'agent a: untracked');
    expect(await wt.merge('a', { mode: 'merge' })).toMatchObject({ status: 'merged', moved: 'fast-forward' });
    expect(parents(repo, 'main')).toHaveLength(2);

    const b = await wt.create('b');
    await writeFile(path.join(b.path, 'b.txt'), 'b\n');
    await wt.commit('b', 'agent b');
    expect(await wt.merge('b', { mode: 'squash' })).toMatchObject({ status: 'merged' });

    const r = await wt.create('r');
    await writeFile(path.join(r.path, 'r.txt'), 'r\n');
    await wt.commit('r', 'agent r');
    await repo.commit({ 'main.txt': 'm\n' }, 'main moves');
    expect(await wt.merge('r', { mode: 'rebase' })).toMatchObject({ status: 'merged' });
    expect(sha(repo, 'main')).toBe(sha(repo, 'jaggers/r'));

    for (const n of ['a', 'b', 'r']) expect(await wt.remove(n)).toMatchObject({ removed: true });
    expect(await readFile(marker, 'utf8').catch(() => ''), 'no hook may run').toBe('');
    expect(repo.git(['stash', 'list'])).toBe('');
  });
});
