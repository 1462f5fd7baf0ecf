// Readers of git's machine formats (pure: text in, data out). Each format is NUL-separated (`-z`), so
// any byte but NUL may be in a path or a subject.

/** One entry of `git worktree list --porcelain -z`. */
export interface WorktreeEntry {
  path: string;
  /** The checked-out commit; null for a bare repository's entry. */
  head: string | null;
  /** `refs/heads/...`, or null when detached (or bare). */
  branch: string | null;
  bare: boolean;
  /** The lock's reason ('' for a lock without one), or null when not locked. */
  locked: string | null;
  /** Why git would prune it ('' without a reason), or null. */
  prunable: string | null;
}

/** `worktree <path>\0HEAD <sha>\0branch <ref>\0[detached\0][locked [reason]\0][prunable [reason]\0]\0`, per worktree. */
export function parseWorktreeList(out: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let cur: WorktreeEntry | null = null;
  for (const field of out.split('\0')) {
    if (field === '') {
      if (cur) entries.push(cur);
      cur = null;
      continue;
    }
    const sp = field.indexOf(' ');
    const key = sp < 0 ? field : field.slice(0, sp);
    const value = sp < 0 ? '' : field.slice(sp + 1);
    if (key === 'worktree') {
      if (cur) entries.push(cur);
      cur = { path: value, head: null, branch: null, bare: false, locked: null, prunable: null };
      continue;
    }
    if (!cur) continue;
    if (key === 'HEAD') cur.head = value;
    else if (key === 'branch') cur.branch = value;
    else if (key === 'bare') cur.bare = true;
    else if (key === 'locked') cur.locked = value;
    else if (key === 'prunable') cur.prunable = value;
  }
  if (cur) entries.push(cur);
  return entries;
}

export interface StatusCounts {
  /** Paths with changes in the index (added, modified, deleted, renamed against HEAD). */
  staged: number;
  /** Tracked paths whose file differs from the index. */
  unstaged: number;
  untracked: number;
  /** Unmerged paths (a merge or rebase stopped on them). */
  conflicted: number;
}

/**
 * `git status --porcelain=v2 -z`: `1 XY ... path`, `2 XY ... path\0origPath`, `u XY ... path`, `? path`,
 * `! path`, and `# ...` headers. X is the index's side, Y the work tree's; `.` means unchanged.
 */
export function parseStatusV2(out: string): StatusCounts {
  const counts: StatusCounts = { staged: 0, unstaged: 0, untracked: 0, conflicted: 0 };
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] ?? '';
    switch (f[0]) {
      case '1':
      case '2': {
        const xy = f.slice(2, 4);
        if (xy[0] !== '.') counts.staged++;
        if (xy[1] !== '.') counts.unstaged++;
        if (f[0] === '2') i++; // the original path of a rename or copy is the next field
        break;
      }
      case 'u':
        counts.conflicted++;
        break;
      case '?':
        counts.untracked++;
        break;
      default:
        break;
    }
  }
  return counts;
}

/** One file of `git diff --numstat -z`. */
export interface FileStat {
  path: string;
  /** Where a renamed or copied file came from. */
  oldPath?: string;
  /** Lines added and removed; null for a binary file. */
  added: number | null;
  removed: number | null;
  binary: boolean;
}

/** `added\tremoved\tpath\0`, or for a rename `added\tremoved\t\0old\0new\0`; binary files count `-`. */
export function parseNumstat(out: string): FileStat[] {
  const files: FileStat[] = [];
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] ?? '';
    if (f === '') continue;
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(f);
    if (!m) continue;
    const binary = m[1] === '-' && m[2] === '-';
    const stat = { added: binary ? null : Number(m[1]), removed: binary ? null : Number(m[2]), binary };
    if (m[3] !== '') files.push({ path: m[3] ?? '', ...stat });
    else {
      const oldPath = fields[++i] ?? '';
      const newPath = fields[++i] ?? '';
      files.push({ path: newPath, oldPath, ...stat });
    }
  }
  return files;
}

export interface CommitInfo {
  sha: string;
  subject: string;
  author: string;
  /** Author date, ISO 8601 with the author's offset. */
  date: string;
}

/** The `--format` that parseLog reads, used with `-z` (records end in NUL; fields are NUL-separated too). */
export const LOG_FORMAT = '--format=%H%x00%aI%x00%an%x00%s';

/** `git log -z --format=%H%x00%aI%x00%an%x00%s`: four NUL-separated fields per commit, commits NUL-separated. */
export function parseLog(out: string): CommitInfo[] {
  const fields = out.split('\0');
  const commits: CommitInfo[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    // git puts a newline between the records of some formats; a sha never has one.
    const sha = (fields[i] ?? '').trim();
    if (!/^[0-9a-f]{40,64}$/.test(sha)) break;
    commits.push({ sha, date: fields[i + 1] ?? '', author: fields[i + 2] ?? '', subject: fields[i + 3] ?? '' });
  }
  return commits;
}

/** NUL-separated names (`diff --name-only -z`, `for-each-ref --format=...%00`), without the empty end. */
export function splitZ(out: string): string[] {
  return out.split('\0').filter((s) => s !== '');
}
