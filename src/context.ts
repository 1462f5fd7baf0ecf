import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
  /**
   * The project was named (--project, JAGGERS_PROJECT) or found at or above the folder the command ran
   * from; false: none was, and projectRoot is that folder (a command that needs a session says so).
   */
  inProject: boolean;
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

/**
 * A project's folder holds a jaggers.json, or a `.jaggers/` with something in it (`jaggers demo` and
 * `up --agents` make no jaggers.json). An empty `.jaggers/`, which read commands of older versions left
 * in any folder they ran in, does not count.
 */
export function isProjectDir(dir: string): boolean {
  if (existsSync(path.join(dir, PROJECT_FILE))) return true;
  try {
    return readdirSync(path.join(dir, '.jaggers')).length > 0;
  } catch {
    return false;
  }
}

/**
 * The nearest project folder at or above `cwd`, as git finds `.git`; none found: `cwd` itself, and
 * `found` false (a read command says there is no project there, and creates nothing).
 */
export function findProjectRoot(cwd: string): { root: string; found: boolean } {
  let dir = path.resolve(cwd);
  for (;;) {
    if (isProjectDir(dir)) return { root: dir, found: true };
    const up = path.dirname(dir);
    if (up === dir) return { root: path.resolve(cwd), found: false };
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
  const given = opts.project ?? env.JAGGERS_PROJECT;
  const found = given === undefined ? findProjectRoot(cwd) : null;
  const root = path.resolve(cwd, given ?? found!.root);
  const file = path.join(root, PROJECT_FILE);
  const text = readText(file);
  const socket = opts.socket ?? env.JAGGERS_SOCKET ?? socketNameFor(root);
  let loaded: Promise<ProjectFile | null> | undefined;
  return {
    projectRoot: root,
    inProject: found?.found ?? true,
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
