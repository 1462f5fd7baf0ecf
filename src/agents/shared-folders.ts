// The folders of .jaggers/ whose files jaggers hands an agent (handover files, messages, job prompts), made
// readable for a CLI whose working folder does not hold them: an agent in its git worktree
// (`.jaggers/worktrees/<agent>`, where the pointer is `../../handover/...`) or with a `cwd` of its own.
// Without this the CLIs' file tools refuse such a path (gemini: "Path not in workspace") or ask a person
// first (claude, qwen, opencode, copilot), and the turn waits; codex's sandbox reads anywhere. How each CLI
// is told is its profile's `sharedFolders` section.
import path from 'node:path';
import { FOLDER_ACCESS } from '../clis/kinds.js';
import { SHARED_FOLDERS } from '../fs/confine.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { Profile } from '../profiles/schema.js';

export interface FoldersLaunch {
  /** The shared folders outside the agent's folder: made (0700) before the CLI starts (copilot refuses a missing one). */
  dirs: string[];
  args: string[];
  env: Record<string, string>;
}

/** Whether `dir` is `cwd` or inside it. */
const within = (cwd: string, dir: string): boolean => {
  const rel = path.relative(cwd, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/**
 * What a launch in `cwd` gains so that its CLI reads the shared folders; null when they are all inside
 * `cwd` or the profile says nothing. `env` is the environment the CLI starts with otherwise.
 */
export function foldersLaunch(
  profile: Profile,
  o: { projectRoot: string; cwd: string; env: Readonly<Record<string, string | undefined>> },
): FoldersLaunch | null {
  const how = profile.sharedFolders;
  if (!how) return null;
  const cwd = path.resolve(o.cwd);
  const dirs = SHARED_FOLDERS.map((f) => path.join(path.resolve(o.projectRoot), '.jaggers', f)).filter((d) => !within(cwd, d));
  if (dirs.length === 0) return null;
  const own = how.via ? FOLDER_ACCESS[how.via](dirs, o.env) : { args: [], env: {} };
  return {
    dirs,
    args: [...dirs.flatMap((folder) => how.args.map((a) => a.replace(/\{folder\}/g, () => folder))), ...own.args],
    env: own.env,
  };
}

/** Make the folders a launch names, before its CLI starts. */
export async function makeSharedFolders(launch: FoldersLaunch | null): Promise<void> {
  for (const dir of launch?.dirs ?? []) await ensurePrivateFolder(dir);
}
