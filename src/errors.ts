// One small family of errors with stable codes; cli.ts prints them without a stack trace, and the
// API sends them as `{"error":{"code","message"}}` with the HTTP status below.
export const ERROR_STATUS = {
  E_TMUX_NOT_FOUND: 500,
  E_TMUX_TOO_OLD: 500,
  E_TMUX_COMMAND: 500,
  E_TMUX_EXITED: 503,
  E_TMUX_TIMEOUT: 504,
  E_PROJECT_INVALID: 400,
  E_PROJECT_MISSING: 400,
  E_PROFILE_INVALID: 400,
  E_PROFILE_UNKNOWN: 404,
  E_COMMAND_NOT_FOUND: 400,
  E_AGENT_UNKNOWN: 404,
  E_SESSION_MISSING: 409,
  E_SESSION_MISMATCH: 409,
  E_PANE_GONE: 410,
  E_AGENT_WAITING: 409,
  E_NOT_WAITING: 409,
  E_SCREEN_CHANGED: 409,
  E_TIMEOUT: 504,
  // A work item's turn ended without a reply (the CLI failed, its run left no status).
  E_TURN_FAILED: 502,
  E_CANCELLED: 409,
  // A work item whose turn a usage limit cut again and again (docs/limits.md): it stops waiting for resets.
  E_LIMITED: 429,
  // The command was interrupted (Ctrl-C); the work it asked for goes on.
  E_INTERRUPTED: 499,
  E_USAGE: 400,
  E_REGISTRY: 500,
  E_NOT_PINNED: 409,
  E_FILE: 400,
  // A write the disk refused (full, over quota, read-only, failing): new work waits until a write succeeds again.
  E_DISK_FULL: 507,
  // A private folder (.jaggers/, the socket's folder) that another user owns or may write into, or a symlink.
  E_UNSAFE_FOLDER: 500,
  // The TCP address could not be listened on (in use, not an address of this machine); the old listener stays.
  E_LISTEN: 409,
  E_NOT_FOUND: 404,
  // A file read for an agent or a client that is not one it may read (outside .jaggers/, private, not a regular file, too large).
  E_FILE_REFUSED: 403,
  E_WORKFLOW_INVALID: 400,
  E_WORKFLOW_UNKNOWN: 404,
  E_FLOW_INVALID: 400,
  E_FLOW_UNKNOWN: 404,
  E_FLOW_BUSY: 409,
  E_UNAUTHORIZED: 401,
  // The dashboard's listener refused how the request came: a Host header not its own (DNS rebinding).
  E_FORBIDDEN: 403,
  E_PAYLOAD_TOO_LARGE: 413,
  E_SUPERVISOR_DOWN: 503,
  // A stopping supervisor refused the request before doing any of it: safe to send again to the next one.
  E_SUPERVISOR_STOPPING: 503,
  E_SUPERVISOR_START: 503,
  E_API: 502,
  // Git worktrees (src/git/, src/agents/worktrees/; docs/worktrees.md).
  // The folder is not inside a git repository (or git refused it: not found, unsafe owner).
  E_NOT_A_REPO: 400,
  // The repository has no commit yet: there is nothing to make a worktree from.
  E_NO_COMMIT: 409,
  // No base was given and HEAD is detached: there is no branch to start from or merge into.
  E_DETACHED_HEAD: 409,
  // The base (a branch, a ref or a commit) does not exist.
  E_BASE_MISSING: 404,
  // The branch jaggers/<name> is taken by something other than this same worktree.
  E_BRANCH_EXISTS: 409,
  // A name git would refuse as a branch, or that breaks the name rule (src/ids.ts).
  E_BAD_NAME: 400,
  // A path of a copy list that is absolute, leaves the repository, or names .git or .jaggers.
  E_BAD_PATH: 400,
  // No worktree, and no branch, of that name.
  E_WORKTREE_UNKNOWN: 404,
  // A half-made worktree jaggers will not repair on its own (a folder git does not know, another branch in our folder).
  E_WORKTREE_BROKEN: 409,
  // Another create or remove of the same worktree is under way.
  E_WORKTREE_BUSY: 409,
  // The worktree has uncommitted changes (or untracked files).
  E_WORKTREE_DIRTY: 409,
  // The worktree's branch has commits not merged into its base branch.
  E_WORKTREE_UNMERGED: 409,
  // The setup command of a new worktree failed; nothing of the worktree is left.
  E_SETUP_FAILED: 422,
  // Merging the branch conflicts; the base branch and every checkout are as they were.
  E_MERGE_CONFLICT: 409,
  // The branch to merge into moved while the merge was made; nothing was moved.
  E_BASE_MOVED: 409,
  // The branch to merge into is checked out in the user's checkout with changes, or checked out elsewhere.
  E_CHECKOUT_DIRTY: 409,
  E_BRANCH_CHECKED_OUT: 409,
  // git itself failed where it should not have (the command and the end of its stderr are in the message).
  E_GIT: 500,
  // Hosts reached over SSH (src/hosts/; docs/hosts.md).
  // A host name jaggers.json's `hosts` does not have.
  E_HOST_UNKNOWN: 404,
  // ssh could not reach the host, log in, or run the command (the message names the host and says why).
  E_SSH: 502,
  // The host's key is not in known_hosts, or differs from the one there: never accepted unasked.
  E_SSH_HOST_KEY: 502,
  // A host `up` would start agents on lacks something `host check` lists (tmux, a CLI, jaggers of this version, the folder).
  E_HOST_NOT_READY: 409,
  E_INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(s: unknown): s is ErrorCode {
  return typeof s === 'string' && Object.hasOwn(ERROR_STATUS, s);
}

export class JaggersError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'JaggersError';
  }
}

export function isJaggersError(e: unknown): e is JaggersError {
  return e instanceof JaggersError;
}

export function unreachable(x: never): never {
  throw new Error(`unreachable: ${JSON.stringify(x)}`);
}

/** Describe a value for an error message: `42 (number)`, `"x" (string)`. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  let shown: string;
  try {
    shown = JSON.stringify(v) ?? String(v);
  } catch {
    // Too deep for JSON.stringify (and then for String too), or a cycle.
    try {
      shown = String(v);
    } catch {
      shown = `[${type}]`;
    }
  }
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return `${shown} (${type})`;
}
