import { describe, expect, it } from 'vitest';
import { parseLog, parseNumstat, parseStatusV2, parseWorktreeList } from '../../src/git/formats.js';
import { branchNameProblem, refFormatProblem } from '../../src/git/ref-format.js';
import { worktreeNameProblem } from '../../src/agents/worktrees/layout.js';
import { copyPathProblem } from '../../src/agents/worktrees/prepare.js';

const sha1 = 'a'.repeat(40);
const sha2 = 'b'.repeat(40);

describe("git's machine formats", () => {
  it('worktree list --porcelain -z: branch, detached, bare, locked and prunable, paths with newlines', () => {
    const out =
      `worktree /r\0HEAD ${sha1}\0branch refs/heads/main\0\0` +
      `worktree /r/.jaggers/worktrees/a\0HEAD ${sha2}\0branch refs/heads/jaggers/a\0locked jaggers: creating\0\0` +
      `worktree /odd\npath\0HEAD ${sha2}\0detached\0prunable gitdir file points to non-existent location\0\0` +
      `worktree /bare\0bare\0locked\0\0`;
    expect(parseWorktreeList(out)).toEqual([
      { path: '/r', head: sha1, branch: 'refs/heads/main', bare: false, locked: null, prunable: null },
      { path: '/r/.jaggers/worktrees/a', head: sha2, branch: 'refs/heads/jaggers/a', bare: false, locked: 'jaggers: creating', prunable: null },
      { path: '/odd\npath', head: sha2, branch: null, bare: false, locked: null, prunable: 'gitdir file points to non-existent location' },
      { path: '/bare', head: null, branch: null, bare: true, locked: '', prunable: null },
    ]);
    expect(parseWorktreeList('')).toEqual([]);
  });

  it('status --porcelain=v2 -z: staged and unstaged sides, renames with their second path, conflicts, untracked', () => {
    const out = [
      '# branch.oid ' + sha1,
      `1 M. N... 100644 100644 100644 ${sha1} ${sha1} staged.txt`,
      `1 .M N... 100644 100644 100644 ${sha1} ${sha1} unstaged.txt`,
      `1 MM N... 100644 100644 100644 ${sha1} ${sha1} both.txt`,
      `2 R. N... 100644 100644 100644 ${sha1} ${sha1} R100 new name.txt`,
      // The rename's original path, its own field: a file name that happens to look like an entry.
      '1 .M N... 100644 100644 100644 x x old.txt',
      `u UU N... 100644 100644 100644 100644 ${sha1} ${sha1} ${sha1} conflict.txt`,
      '? new\nline.txt',
      '! ignored.txt',
      '',
    ].join('\0');
    expect(parseStatusV2(out)).toEqual({ staged: 3, unstaged: 2, untracked: 1, conflicted: 1 });
    expect(parseStatusV2('')).toEqual({ staged: 0, unstaged: 0, untracked: 0, conflicted: 0 });
  });

  it('diff --numstat -z: counts, binary files, renames as two paths, tabs in names', () => {
    const out = '3\t1\ta.txt\0-\t-\tbin.dat\0' + '2\t0\t\0old\tname\0new name\0' + '0\t4\tgone.txt\0';
    expect(parseNumstat(out)).toEqual([
      { path: 'a.txt', added: 3, removed: 1, binary: false },
      { path: 'bin.dat', added: null, removed: null, binary: true },
      { path: 'new name', oldPath: 'old\tname', added: 2, removed: 0, binary: false },
      { path: 'gone.txt', added: 0, removed: 4, binary: false },
    ]);
  });

  it('log -z with NUL-separated fields: subjects with any character but NUL', () => {
    const out = `${sha1}\x002026-11-26T10:00:00+01:00\0Ann\0fix: a "tab"\there\0\n${sha2}\x002026-11-25T10:00:00+00:00\0Bob\0first`;
    expect(parseLog(out)).toEqual([
      { sha: sha1, date: '2026-11-26T10:00:00+01:00', author: 'Ann', subject: 'fix: a "tab"\there' },
      { sha: sha2, date: '2026-11-25T10:00:00+00:00', author: 'Bob', subject: 'first' },
    ]);
    expect(parseLog('')).toEqual([]);
  });
});

describe('names and paths', () => {
  it("git's ref rules", () => {
    expect(refFormatProblem('refs/heads/jaggers/a')).toBeNull();
    expect(refFormatProblem('refs/heads/a..b')).toMatch(/'\.\.'/);
    expect(refFormatProblem('refs/heads/a.lock')).toMatch(/\.lock/);
    expect(refFormatProblem('refs/heads/a\u0001')).toMatch(/control/);
    expect(branchNameProblem('-x')).toMatch(/'-'/);
    expect(branchNameProblem('HEAD')).toMatch(/HEAD/);
  });

  it('worktree names: the name rule and git together', () => {
    expect(worktreeNameProblem('coder-1.2_x')).toBeNull();
    for (const bad of ['__proto__', 'hasOwnProperty', '../x', 'a/b', 'a..b', 'x.lock', 'x.', '.x', '-x', '', 'a b', 'a\tb'])
      expect([bad, worktreeNameProblem(bad)]).not.toEqual([bad, null]);
    expect(worktreeNameProblem(undefined)).toMatch(/string/);
  });

  it('copy list paths stay inside the repository and out of .git and .jaggers', () => {
    expect(copyPathProblem('.env')).toBeNull();
    expect(copyPathProblem('config/local.json')).toBeNull();
    expect(copyPathProblem('./a/../b')).toBeNull();
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', '~/x', '.git/config', '.git', '.jaggers/token', '.', '', 'a\nb', 42])
      expect([bad, copyPathProblem(bad)]).not.toEqual([bad, null]);
  });
});
