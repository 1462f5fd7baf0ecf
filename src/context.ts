import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProjectFile } from './project/project-file.js';
import { socketNameFor, tmuxEnv, type TmuxServer } from './tmux/server.js';

export const PROJECT_FILE = 'jaggers.json';

export interface GlobalOptions {
  project?: string;
  socket?: string;
  session?: string;
  verbose?: boolean;
}

/** Where a command works: the project folder, its `.jaggers/`, its tmux server and session. */
export interface Context {
  projectRoot: string;
  jaggersDir: string;
  server: TmuxServer;
  session: string;
  env: NodeJS.ProcessEnv;
  /** The folder the command was run from: relative paths the user gives are relative to it. */
  cwd: string;
  /** Say something the user should know that is not an error (a registry repaired after a crash), on stderr. */
  warn(message: string): void;
  /**
   * jaggers.json, validated; null when there is none. Read on first use only: commands that ask the
   * supervisor never load the validation code (the fast path of `status`, `ls`...).
   */
  project(): Promise<ProjectFile | null>;
}

/** The nearest folder at or above `cwd` with a jaggers.json, else `cwd` itself. */
export function findProjectRoot(cwd: string): string {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, PROJECT_FILE))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return path.resolve(cwd);
    dir = up;
  }
}

export function sessionNameFor(root: string): string {
  const base = path
    .basename(root)
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .replace(/^-+|-+$/g, '');
  return base || 'jaggers';
}

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The `session` field of a jaggers.json text, without validating the rest (an invalid file is reported where it is used). */
function sessionField(text: string | null): string | undefined {
  if (text === null) return undefined;
  try {
    const s = (JSON.parse(text) as { session?: unknown } | null)?.session;
    return typeof s === 'string' && /^[A-Za-z0-9_-]+$/.test(s) ? s : undefined;
  } catch {
    return undefined;
  }
}

export async function resolveContext(opts: GlobalOptions, env: NodeJS.ProcessEnv, cwd: string, warn: (message: string) => void = () => {}): Promise<Context> {
  const projectRoot = opts.project ?? env.JAGGERS_PROJECT ?? findProjectRoot(cwd);
  const root = path.resolve(cwd, projectRoot);
  const file = path.join(root, PROJECT_FILE);
  const text = readText(file);
  const socket = opts.socket ?? env.JAGGERS_SOCKET ?? socketNameFor(root);
  let loaded: Promise<ProjectFile | null> | undefined;
  return {
    projectRoot: root,
    jaggersDir: path.join(root, '.jaggers'),
    server: {
      socket: socket.includes('/') ? { path: path.resolve(cwd, socket) } : { name: socket },
      configFile: env.JAGGERS_TMUX_CONF ?? null,
      bin: env.JAGGERS_TMUX ?? 'tmux',
      env: tmuxEnv(env),
    },
    session: opts.session ?? env.JAGGERS_SESSION_NAME ?? sessionField(text) ?? sessionNameFor(root),
    env,
    cwd: path.resolve(cwd),
    warn,
    project: () =>
      (loaded ??= (async () => {
        if (text === null) return null;
        const { parseProjectFile } = await import('./project/project-file.js');
        return parseProjectFile(text, file);
      })()),
  };
}
