// One small family of errors with stable codes; cli.ts prints them without a stack trace.
export type ErrorCode =
  | 'E_TMUX_NOT_FOUND'
  | 'E_TMUX_TOO_OLD'
  | 'E_TMUX_COMMAND'
  | 'E_TMUX_EXITED'
  | 'E_TMUX_TIMEOUT'
  | 'E_PROJECT_INVALID'
  | 'E_PROJECT_MISSING'
  | 'E_PROFILE_INVALID'
  | 'E_PROFILE_UNKNOWN'
  | 'E_AGENT_UNKNOWN'
  | 'E_SESSION_MISSING'
  | 'E_PANE_GONE'
  | 'E_TIMEOUT'
  | 'E_USAGE'
  | 'E_REGISTRY'
  | 'E_NOT_PINNED'
  | 'E_FILE';

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
    shown = String(v);
  }
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return `${shown} (${type})`;
}
