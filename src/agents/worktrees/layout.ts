// Where jaggers' worktrees live and what it keeps about each: the folder `.jaggers/worktrees/<name>`,
// the branch `jaggers/<name>`, and a small record (`jaggers.json`) in the worktree's own admin folder
// of git (`<common git dir>/worktrees/<id>/`), which git keeps and removes together with the worktree.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { JaggersError } from '../../errors.js';
import { branchNameProblem } from '../../git/ref-format.js';
import { isNotFound } from '../../fs/durable.js';
import { nameProblem } from '../../ids.js';

export const BRANCH_PREFIX = 'jaggers/';
/** A worktree's lock reason while jaggers makes it; one left behind marks a create a crash cut short. */
export const CREATING = 'jaggers: creating';
/** git's own lock reason while `git worktree add` runs (C locale). */
export const GIT_INITIALIZING = 'initializing';

export interface Layout {
  /** The jaggers project's folder (holds `.jaggers/`), every symbolic link resolved. */
  projectRoot: string;
  /** What each worktree's branch name starts with (`jaggers/`; jaggers.json `worktree.branchPrefix`). */
  branchPrefix: string;
  /** `<projectRoot>/.jaggers/worktrees`: one folder per worktree. */
  worktreesDir: string;
  /** `<projectRoot>/.jaggers/tmp`: the temporary worktrees of merges. */
  tmpDir: string;
}

export function layoutOf(projectRoot: string, branchPrefix = BRANCH_PREFIX): Layout {
  return { projectRoot, branchPrefix, worktreesDir: path.join(projectRoot, '.jaggers', 'worktrees'), tmpDir: path.join(projectRoot, '.jaggers', 'tmp') };
}

export const branchOf = (layout: Pick<Layout, 'branchPrefix'>, name: string): string => `${layout.branchPrefix}${name}`;
export const branchRef = (layout: Pick<Layout, 'branchPrefix'>, name: string): string => `refs/heads/${branchOf(layout, name)}`;
const DEFAULT = { branchPrefix: BRANCH_PREFIX };
export const pathOf = (layout: Layout, name: string): string => path.join(layout.worktreesDir, name);

/** Why `name` cannot name a worktree (the name rule of src/ids.ts, and git's rules for `jaggers/<name>`), or null. */
export function worktreeNameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return `worktree name must be a string, got ${typeof name}`;
  const rule = nameProblem('worktree', name);
  if (rule) return rule;
  const git = branchNameProblem(branchOf(DEFAULT, name));
  return git ? `${JSON.stringify(name)} is not a valid worktree name: git refuses the branch ${branchOf(DEFAULT, name)}: ${git}` : null;
}

export function assertWorktreeName(name: unknown): asserts name is string {
  const problem = worktreeNameProblem(name);
  if (problem) throw new JaggersError('E_BAD_NAME', problem);
}

const Sha = z.string().regex(/^[0-9a-f]{40,64}$/);
const RecordSchema = z.object({
  version: z.literal(1),
  name: z.string(),
  branch: z.string(),
  /** The commit the branch started from (moved to the new base by a rebase merge). */
  base: Sha,
  /** The local branch the base came from: where a merge goes by default. */
  baseBranch: z.string().nullable(),
  createdAt: z.string(),
  /** The last merge jaggers made of this branch: a squash merge leaves the branch unmerged in git's eyes. */
  merged: z
    .object({ into: z.string(), tip: Sha, commit: Sha, mode: z.enum(['merge', 'squash', 'rebase']), at: z.string() })
    .nullable()
    .optional(),
});
export type WorktreeRecord = z.infer<typeof RecordSchema>;

const RECORD_FILE = 'jaggers.json';

/** The record in a worktree's admin folder; null when there is none (or it is unreadable: then it is rewritten). */
export async function readRecord(adminDir: string): Promise<WorktreeRecord | null> {
  let text: string;
  try {
    text = await readFile(path.join(adminDir, RECORD_FILE), 'utf8');
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export async function writeRecord(adminDir: string, record: WorktreeRecord): Promise<void> {
  const file = path.join(adminDir, RECORD_FILE);
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, `${JSON.stringify(record, null, 2)}\n`);
  await rename(tmp, file);
}

/**
 * Each registered worktree's admin folder by the worktree's path, from `<common git dir>/worktrees/<id>/gitdir`
 * (gitrepository-layout: it holds `<worktree>/.git`). Read from the files because a worktree whose folder
 * is gone has no `.git` to ask.
 */
export async function adminDirs(commonDir: string): Promise<Map<string, string>> {
  const root = path.join(commonDir, 'worktrees');
  const out = new Map<string, string>();
  let ids: string[];
  try {
    ids = await readdir(root);
  } catch (e) {
    if (isNotFound(e)) return out;
    throw e;
  }
  await Promise.all(
    ids.map(async (id) => {
      try {
        const gitdir = (await readFile(path.join(root, id, 'gitdir'), 'utf8')).replace(/\n$/, '');
        out.set(path.dirname(gitdir), path.join(root, id));
      } catch {
        // not (or no longer) a worktree's admin folder
      }
    }),
  );
  return out;
}

/** Names every checkout of the repository ignores without a .gitignore: jaggers' own folder, and qwen's (docs/clis.md). */
export const EXCLUDED = ['.jaggers/', '.qwen/'];

/**
 * Add EXCLUDED to `<common git dir>/info/exclude` once, so that no checkout of the repository (the user's
 * or any worktree) shows them as untracked. Replaced whole through a temp file: two creates at once
 * write the same lines.
 */
export async function ensureExcluded(commonDir: string): Promise<void> {
  const file = path.join(commonDir, 'info', 'exclude');
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const have = new Set(text.split('\n').map((l) => l.trim()));
  const missing = EXCLUDED.filter((l) => !have.has(l) && !have.has(`/${l}`));
  if (missing.length === 0) return;
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const sep = text === '' || text.endsWith('\n') ? '' : '\n';
  try {
    await writeFile(tmp, `${text}${sep}# jaggers (agents' worktrees and CLI state)\n${missing.join('\n')}\n`);
    await rename(tmp, file);
  } finally {
    await rm(tmp, { force: true });
  }
}
