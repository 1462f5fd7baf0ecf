// jaggers' worktrees on real git in temp repositories: create (idempotent, repairs), every error code,
// list, status, diff, remove and its guards, gc candidates, copy list and setup command, concurrency.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { staleRefLock } from '../../src/agents/worktrees/create.js';
import { openWorktrees, type Worktrees } from '../../src/agents/worktrees/worktrees.js';
import { isJaggersError, type ErrorCode } from '../../src/errors.js';
import { makeRepo, type RepoOptions, type TestRepo } from '../helpers/git-repo.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jaggers-wt-');

async function setup(o: RepoOptions = {}): Promise<{ repo: TestRepo; wt: Worktrees }> {
  const repo = await makeRepo(await temp(), o);
  const wt = await openWorktrees(repo.root, { env: repo.env, lockWaitMs: 20_000 });
  return { repo, wt };
}

/** The JaggersError code `p` rejects with (fails the test when it resolves or throws something else). */
async function codeOf(p: Promise<unknown>): Promise<ErrorCode> {
  try {
    await p;
  } catch (e) {
    if (isJaggersError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a JaggersError, but the call succeeded');
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

const branches = (repo: TestRepo) => repo.git(['for-each-ref', '--format=%(refname:short)', 'refs/heads/']).split('\n').filter(Boolean);

describe('creating worktrees', () => {
  it('makes .jaggers/worktrees/<name> on jaggers/<name> from the current branch, once, and keeps every status clean', async () => {
    const { repo, wt } = await setup();
    const head = repo.git(['rev-parse', 'HEAD']).trim();
    const a = await wt.create('a');
    expect(a).toMatchObject({
      name: 'a',
      path: path.join(repo.root, '.jaggers/worktrees/a'),
      branch: 'jaggers/a',
      base: head,
      baseBranch: 'main',
      created: true,
      repaired: null,
    });
    expect(repo.git(['rev-parse', 'refs/heads/jaggers/a']).trim()).toBe(head);
    expect(await readFile(path.join(a.path, 'README.md'), 'utf8')).toBe('hello\n');
    const again = await wt.create('a');
    expect(again).toMatchObject({ path: a.path, created: false, base: head });
    // Asking again with the same base by branch still returns it, even after main moved on.
    await repo.commit({ 'x.txt': 'x\n' }, 'main moves');
    expect((await wt.create('a', { base: 'main' })).created).toBe(false);
    expect((await wt.create('a', { base: head })).created).toBe(false);
    const exclude = await readFile(path.join(repo.root, '.git/info/exclude'), 'utf8');
    expect(exclude.split('\n').filter((l) => l === '.jaggers/')).toHaveLength(1);
    expect(exclude.split('\n').filter((l) => l === '.qwen/')).toHaveLength(1);
    await mkdir(path.join(a.path, '.qwen'), { recursive: true });
    await writeFile(path.join(a.path, '.qwen/settings.json'), '{}');
    expect(repo.git(['status', '--porcelain=v2', '-z', '--untracked-files=all'])).toBe('');
    expect(repo.git(['status', '--porcelain=v2', '-z', '--untracked-files=all'], a.path)).toBe('');
    const listed = await wt.list();
    expect(listed).toEqual([
      { name: 'a', path: a.path, branch: 'jaggers/a', head, locked: null, prunable: null, base: head, baseBranch: 'main', createdAt: a.createdAt },
    ]);
  });

  it('starts from a given branch, tag or commit; a commit has no branch to merge into', async () => {
    const { repo, wt } = await setup();
    const first = repo.git(['rev-parse', 'HEAD']).trim();
    repo.git(['branch', 'dev']);
    repo.git(['tag', 'v1']);
    await repo.commit({ 'x.txt': 'x\n' }, 'second');
    expect(await wt.create('d', { base: 'dev' })).toMatchObject({ base: first, baseBranch: 'dev' });
    expect(await wt.create('t', { base: 'v1' })).toMatchObject({ base: first, baseBranch: null });
    expect(await wt.create('s', { base: first.slice(0, 10) })).toMatchObject({ base: first, baseBranch: null });
    expect(await wt.create('r', { base: 'refs/heads/dev' })).toMatchObject({ base: first, baseBranch: 'dev' });
  });

  it('says what is wrong: not a repository, no commit, detached HEAD, missing base, taken branch, different base', async () => {
    const plain = await temp();
    expect(await codeOf(openWorktrees(path.join(plain, 'nope')))).toBe('E_NOT_A_REPO');
    const notRepo = await openWorktrees(plain, { env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(plain) } });
    const e1 = await errorOf(notRepo.create('a'));
    expect(e1.code).toBe('E_NOT_A_REPO');
    expect(e1.message).toContain(plain);

    const empty = await makeRepo(await temp(), { empty: true });
    expect(await codeOf((await openWorktrees(empty.root, { env: empty.env })).create('a'))).toBe('E_NO_COMMIT');

    const { repo, wt } = await setup();
    const first = repo.git(['rev-parse', 'HEAD']).trim();
    repo.git(['checkout', '-q', '--detach']);
    const e2 = await errorOf(wt.create('a'));
    expect(e2.code).toBe('E_DETACHED_HEAD');
    expect(e2.message).toContain(repo.root);
    expect((await wt.create('a', { base: 'main' })).baseBranch).toBe('main');
    expect((await wt.create('h', { base: 'HEAD' })).base).toBe(first);
    repo.git(['checkout', '-q', 'main']);

    const e3 = await errorOf(wt.create('b', { base: 'no-such-branch' }));
    expect(e3.code).toBe('E_BASE_MISSING');
    expect(e3.message).toContain('"no-such-branch"');
    expect(await codeOf(wt.create('b', { base: '--output=/tmp/x' }))).toBe('E_BAD_NAME');

    // A branch of that name at another commit, without a worktree.
    const second = await repo.commit({ 'y.txt': 'y\n' }, 'second');
    repo.git(['branch', 'jaggers/c', first]);
    const e4 = await errorOf(wt.create('c'));
    expect(e4.code).toBe('E_BRANCH_EXISTS');
    expect(e4.message).toContain('jaggers/c');
    // The branch checked out in another worktree.
    repo.git(['worktree', 'add', '-q', path.join(repo.root, '..', 'elsewhere'), 'jaggers/c']);
    expect((await errorOf(wt.create('c'))).message).toContain('elsewhere');
    // The same name asked for with another base.
    expect((await errorOf(wt.create('a', { base: second }))).code).toBe('E_BRANCH_EXISTS');
  });

  it('refuses names git or jaggers would refuse, and makes nothing for them', async () => {
    const { repo, wt } = await setup();
    const bad = [
      '__proto__',
      'constructor',
      'toString',
      '../x',
      'a/b',
      'a..b',
      'x.lock',
      '.hidden',
      '-x',
      '',
      'a b',
      'a\nb',
      'a\u0001b',
      'a\x7fb',
      'a~1',
      'a^',
      'a:b',
      'a*',
      'a?',
      'a[b',
      'a\\b',
      'a@{1}',
      'x'.repeat(200),
    ];
    for (const name of bad) expect([name, await codeOf(wt.create(name))]).toEqual([name, 'E_BAD_NAME']);
    expect(await codeOf(wt.create(42 as unknown as string))).toBe('E_BAD_NAME');
    expect(branches(repo)).toEqual(['main']);
    expect(existsSync(path.join(repo.root, '.jaggers/worktrees'))).toBe(false);
    expect(await codeOf(wt.status('../x'))).toBe('E_BAD_NAME');
    expect(await codeOf(wt.remove('__proto__'))).toBe('E_BAD_NAME');
    expect(await codeOf(wt.status('nobody'))).toBe('E_WORKTREE_UNKNOWN');
  });

  it('two creates of different names at once both work; two of the same name give the same worktree', async () => {
    const { repo, wt } = await setup();
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    // A list and a status beside them: they read the admin folders the creates are filling.
    const [made] = await Promise.all([Promise.all(names.map((n) => wt.create(n))), wt.list(), wt.gcCandidates([])]);
    expect(made.map((m) => m.created)).toEqual(names.map(() => true));
    expect((await wt.list()).map((w) => w.name).sort()).toEqual(names);
    // Another process (another openWorktrees) creating the same name at the same moment.
    const other = await openWorktrees(repo.root, { env: repo.env });
    const [x, y] = await Promise.all([wt.create('same'), other.create('same')]);
    expect([x.created, y.created].sort()).toEqual([false, true]);
    expect(x.path).toBe(y.path);
    expect(x.base).toBe(y.base);
    expect(branches(repo).filter((b) => b.startsWith('jaggers/'))).toHaveLength(11);
  });
});

describe('half-made worktrees (a crash between the steps)', () => {
  it('a folder git does not know is reported, an empty one is taken', async () => {
    const { repo, wt } = await setup();
    const dir = path.join(repo.root, '.jaggers/worktrees/h');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'something'), 'x');
    const e = await errorOf(wt.create('h'));
    expect(e.code).toBe('E_WORKTREE_BROKEN');
    expect(e.message).toContain(dir);
    expect(branches(repo)).toEqual(['main']);
    await rm(path.join(dir, 'something'));
    expect((await wt.create('h')).created).toBe(true);
  });

  it('a registration whose folder is gone is checked out again, its commits kept', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    const sha = await repo.commit({ 'work.txt': 'agent work\n' }, 'agent work', a.path);
    await rm(a.path, { recursive: true, force: true });
    expect((await wt.list())[0]?.prunable).not.toBeNull();
    const again = await wt.create('a');
    expect(again.repaired).toMatch(/folder was missing/);
    expect(await readFile(path.join(a.path, 'work.txt'), 'utf8')).toBe('agent work\n');
    expect(repo.git(['rev-parse', 'refs/heads/jaggers/a']).trim()).toBe(sha);
    expect((await wt.status('a')).ahead).toBe(1);
  });

  it('a branch left at the base without a worktree is checked out', async () => {
    const { repo, wt } = await setup();
    repo.git(['branch', 'jaggers/k', 'main']);
    const k = await wt.create('k');
    expect(k.created).toBe(true);
    expect(k.repaired).toMatch(/branch was there/);
  });

  it('a worktree still marked as being created (by jaggers or by git) is undone and made again', async () => {
    const { repo, wt } = await setup();
    for (const [name, reason] of [
      ['m', 'jaggers: creating'],
      ['g', 'initializing'],
    ] as const) {
      const dir = path.join(repo.root, '.jaggers/worktrees', name);
      repo.git(['worktree', 'add', '-q', '--lock', '--reason', reason, '-b', `jaggers/${name}`, dir, 'main']);
      await writeFile(path.join(dir, 'half-copied.txt'), 'x');
      const made = await wt.create(name);
      expect(made.repaired).toMatch(/cut short/);
      expect(existsSync(path.join(dir, 'half-copied.txt'))).toBe(false);
      expect((await wt.list()).find((w) => w.name === name)?.locked).toBeNull();
    }
  });

  it("a lock a killed git left on the branch's ref is removed once it is older than git holds one; no other lock is", async () => {
    const { repo, wt } = await setup();
    // What a git killed inside `worktree add -b` leaves: the branch made, its ref's lock still there.
    repo.git(['branch', 'jaggers/p', 'main']);
    const lock = path.join(repo.root, '.git/refs/heads/jaggers/p.lock');
    await writeFile(lock, '');
    const old = new Date(Date.now() - 60_000);
    await utimes(lock, old, old);
    const p = await wt.create('p');
    expect(p.created).toBe(true);
    expect(p.repaired).toMatch(/lock left on jaggers\/p .* was removed/);
    expect(existsSync(lock)).toBe(false);
    expect(repo.git(['status', '--porcelain'], p.path)).toBe('');
    // Only the branch's own ref lock, in this repository's git folder, is one of ours.
    const common = path.join(repo.root, '.git');
    const said = (file: string) => `error: cannot lock ref 'HEAD': Unable to create '${file}': File exists.`;
    expect(staleRefLock(said(path.join(common, 'refs/heads/jaggers/p.lock')), common, 'refs/heads/jaggers/p')).toBe(lock);
    expect(staleRefLock(said(path.join(common, 'refs/heads/main.lock')), common, 'refs/heads/jaggers/p')).toBeNull();
    expect(staleRefLock(said(path.join(common, 'index.lock')), common, 'refs/heads/jaggers/p')).toBeNull();
    expect(staleRefLock(said('/elsewhere/.git/refs/heads/jaggers/p.lock'), common, 'refs/heads/jaggers/p')).toBeNull();
  });

  it('a worktree made without its record (a crash just after git worktree add) is adopted for its base', async () => {
    const { repo, wt } = await setup();
    const dir = path.join(repo.root, '.jaggers/worktrees/n');
    repo.git(['worktree', 'add', '-q', '-b', 'jaggers/n', dir, 'main']);
    const n = await wt.create('n', { base: 'main' });
    expect(n).toMatchObject({ created: false, baseBranch: 'main' });
    expect(n.repaired).toMatch(/record was missing/);
    expect((await wt.status('n')).baseBranch).toBe('main');
  });
});

describe('copy list and setup command', () => {
  it('copies listed ignored files from the user checkout and runs the setup once in the worktree', async () => {
    const { repo, wt } = await setup();
    await repo.commit({ '.gitignore': '.env\nconfig/local.json\nbuilt/\n' }, 'ignore');
    await writeFile(path.join(repo.root, '.env'), 'SECRET=1\n');
    await mkdir(path.join(repo.root, 'config'));
    await writeFile(path.join(repo.root, 'config/local.json'), '{"a":1}');
    const a = await wt.create('a', {
      copy: ['.env', 'config/local.json', 'not-there.txt', 'README.md'],
      setup: 'echo setting up; mkdir -p built && echo "$JAGGERS_WORKTREE_NAME" > built/name; echo to-stderr >&2',
    });
    expect(await readFile(path.join(a.path, '.env'), 'utf8')).toBe('SECRET=1\n');
    expect(await readFile(path.join(a.path, 'config/local.json'), 'utf8')).toBe('{"a":1}');
    expect(a.copied).toEqual({
      copied: ['.env', 'config/local.json'],
      skipped: [
        { path: 'not-there.txt', why: 'missing' },
        { path: 'README.md', why: 'exists' },
      ],
    });
    expect(a.setup).toMatchObject({ exitCode: 0 });
    expect(a.setup?.output).toContain('setting up');
    expect(a.setup?.output).toContain('to-stderr');
    expect(await readFile(path.join(a.path, 'built/name'), 'utf8')).toBe('a\n');
    expect((await wt.status('a')).clean).toBe(true);
    // A second create runs nothing again.
    expect((await wt.create('a', { setup: 'exit 1' })).created).toBe(false);
  });

  it('refuses a listed path outside the repository before making anything, and one that leads outside through a link', async () => {
    const { repo, wt } = await setup();
    for (const p of ['../x', '/etc/passwd', '.git/config', '.jaggers/token', 'a/../../x', '']) {
      const e = await errorOf(wt.create('a', { copy: [p] }));
      expect([p, e.code]).toEqual([p, 'E_BAD_PATH']);
    }
    expect(branches(repo)).toEqual(['main']);
    const outside = path.join(repo.root, '..', 'outside.txt');
    await writeFile(outside, 'secret');
    await symlink(outside, path.join(repo.root, 'leak'));
    const e = await errorOf(wt.create('a', { copy: ['leak'] }));
    expect(e.code).toBe('E_BAD_PATH');
    expect(e.message).toContain('"leak"');
    expect(branches(repo)).toEqual(['main']);
    expect(existsSync(path.join(repo.root, '.jaggers/worktrees/a'))).toBe(false);
  });

  it('a failing setup removes the worktree and its branch, and says the exit code and the end of the output', async () => {
    const { repo, wt } = await setup();
    const e = await errorOf(wt.create('a', { setup: 'for i in 1 2 3 4 5; do echo line $i; done; echo broken >&2; exit 3' }));
    expect(e.code).toBe('E_SETUP_FAILED');
    expect(e.message).toContain('exited 3');
    expect(e.message).toContain('line 5');
    expect(e.message).toContain('broken');
    expect(branches(repo)).toEqual(['main']);
    expect(existsSync(path.join(repo.root, '.jaggers/worktrees/a'))).toBe(false);
    expect(await wt.list()).toEqual([]);
    // Nothing left in the way of a second try.
    expect((await wt.create('a', { setup: 'true' })).created).toBe(true);
  });
});

describe('status, diff, remove, gc', () => {
  it('status counts uncommitted changes and commits; diff gives files, commits and the patch', async () => {
    const { repo, wt } = await setup();
    await repo.commit({ 'old.txt': 'one\ntwo\nthree\n' }, 'old file');
    const a = await wt.create('a');
    await repo.commit({ 'new.txt': 'a\nb\n', 'old.txt': 'one\nTWO\nthree\n', 'bin.dat': Buffer.from([0, 1, 2, 3, 0, 255]) }, 'agent: change things', a.path);
    repo.git(['mv', 'new.txt', 'renamed.txt'], a.path);
    repo.git(['commit', '-q', '-m', 'agent: rename'], a.path);
    await writeFile(path.join(a.path, 'README.md'), 'hello\nmore\n');
    await writeFile(path.join(a.path, 'untracked.txt'), 'u\n');
    await writeFile(path.join(a.path, 'staged.txt'), 's\n');
    repo.git(['add', 'staged.txt'], a.path);

    const st = await wt.status('a');
    expect(st).toMatchObject({
      present: true,
      clean: false,
      ahead: 2,
      merged: false,
      mergedInto: 'main',
      dirty: { staged: 1, unstaged: 1, untracked: 1, conflicted: 0 },
    });

    const d = await wt.diff('a');
    expect(d.commits.map((c) => c.subject)).toEqual(['agent: rename', 'agent: change things']);
    expect(d.commits[0]?.author).toBe('Test');
    const byPath = Object.fromEntries(d.files.map((f) => [f.path, f]));
    expect(byPath['old.txt']).toMatchObject({ added: 1, removed: 1, binary: false });
    expect(byPath['renamed.txt']).toMatchObject({ added: 2, removed: 0 });
    expect(byPath['bin.dat']).toMatchObject({ added: null, removed: null, binary: true });
    expect(d.patch).toBeNull();
    expect(Object.keys(byPath).sort()).toEqual(['bin.dat', 'old.txt', 'renamed.txt']);

    const agentIndex = path.join(repo.root, '.git/worktrees/a/index');
    const before = createHash('sha256')
      .update(await readFile(agentIndex))
      .digest('hex');
    const u = await wt.diff('a', { uncommitted: true, patch: true });
    expect(u.files.map((f) => f.path).sort()).toEqual(['README.md', 'bin.dat', 'old.txt', 'renamed.txt', 'staged.txt', 'untracked.txt']);
    expect(u.patch).toContain('+more');
    expect(u.patch).toContain('+u');
    expect(
      createHash('sha256')
        .update(await readFile(agentIndex))
        .digest('hex'),
    ).toBe(before);
    expect((await wt.diff('a', { patch: true })).patch).toContain('-two\n+TWO');
  });

  it('remove refuses uncommitted changes and unmerged commits unless forced, and is idempotent', async () => {
    const { repo, wt } = await setup();
    const a = await wt.create('a');
    await writeFile(path.join(a.path, 'wip.txt'), 'wip');
    const dirty = await errorOf(wt.remove('a'));
    expect(dirty.code).toBe('E_WORKTREE_DIRTY');
    expect(dirty.message).toContain('1 untracked');
    repo.git(['add', 'wip.txt'], a.path);
    repo.git(['commit', '-q', '-m', 'wip'], a.path);
    const unmerged = await errorOf(wt.remove('a'));
    expect(unmerged.code).toBe('E_WORKTREE_UNMERGED');
    expect(unmerged.message).toContain('1 commit(s) not merged into main');
    expect(existsSync(a.path)).toBe(true);
    expect(await wt.remove('a', { force: true })).toMatchObject({ removed: true, branchDeleted: true });
    expect(existsSync(a.path)).toBe(false);
    expect(branches(repo)).toEqual(['main']);
    expect(await wt.remove('a')).toMatchObject({ removed: false });
    // Clean and with nothing of its own: no force needed.
    await wt.create('b');
    expect(await wt.remove('b')).toMatchObject({ removed: true });
    // Merged by hand into main: no force needed either.
    const c = await wt.create('c');
    await repo.commit({ 'c.txt': 'c\n' }, 'c work', c.path);
    repo.git(['merge', '-q', '--ff-only', 'jaggers/c']);
    expect((await wt.status('c')).merged).toBe(true);
    expect(await wt.remove('c')).toMatchObject({ removed: true });
    // A registration whose folder is gone, and a branch alone.
    const d = await wt.create('d');
    await rm(d.path, { recursive: true, force: true });
    expect(await wt.remove('d')).toMatchObject({ removed: true });
    repo.git(['branch', 'jaggers/e', 'main']);
    expect(await wt.remove('e')).toMatchObject({ removed: true, branchDeleted: true });
    expect(branches(repo)).toEqual(['main']);
    expect(repo.git(['worktree', 'list', '--porcelain', '-z']).split('\0\0').filter(Boolean)).toHaveLength(1);
  });

  it('gc candidates: the names not in use, each with its status; only clean and merged ones are removable', async () => {
    const { repo, wt } = await setup();
    await wt.create('clean');
    const dirty = await wt.create('dirty');
    await writeFile(path.join(dirty.path, 'README.md'), 'changed\n');
    const work = await wt.create('work');
    await repo.commit({ 'w.txt': 'w\n' }, 'work', work.path);
    await wt.create('used');
    repo.git(['branch', 'jaggers/lone', 'main']);
    const c = await wt.gcCandidates(['used']);
    const by = Object.fromEntries(c.map((x) => [x.name, x]));
    expect(Object.keys(by).sort()).toEqual(['clean', 'dirty', 'lone', 'work']);
    expect(by.clean).toMatchObject({ kind: 'worktree', removable: true, why: null });
    expect(by.dirty).toMatchObject({ removable: false, why: 'uncommitted changes' });
    expect(by.dirty?.status?.dirty.unstaged).toBe(1);
    expect(by.work).toMatchObject({ removable: false });
    expect(by.work?.why).toContain('1 commit(s) not merged');
    expect(by.lone).toMatchObject({ kind: 'branch', removable: true });
    for (const x of c.filter((x) => x.removable)) await wt.remove(x.name);
    expect((await wt.list()).map((w) => w.name).sort()).toEqual(['dirty', 'used', 'work']);
    expect(await codeOf(wt.remove('dirty'))).toBe('E_WORKTREE_DIRTY');
  });
});

describe('git check-ref-format semantics', () => {
  it('agrees with git on names made of the characters git treats specially', async () => {
    const { refFormatProblem } = await import('../../src/git/ref-format.js');
    const fc = (await import('fast-check')).default;
    const dir = await temp();
    const chars = ['a', 'b', '.', '/', '-', '@', '{', '}', ' ', '~', '^', ':', '?', '*', '[', '\\', '\x01', '\x7f', 'l', 'o', 'c', 'k', 'é'];
    const samples = fc.sample(
      fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 10 }).map((cs) => cs.join('')),
      { numRuns: 300, seed: 28 },
    );
    samples.push('a.lock', 'a/.b', 'a/b.', '@', 'a@{b', 'a//b', 'a..b', '.a', 'lock.lock/x');
    for (const s of samples) {
      const ref = `refs/heads/${s}`;
      let gitSays: boolean;
      try {
        execFileSync('git', ['check-ref-format', ref], { cwd: dir, stdio: 'ignore' });
        gitSays = true;
      } catch {
        gitSays = false;
      }
      expect([s, refFormatProblem(ref) === null]).toEqual([s, gitSays]);
    }
  });
});
