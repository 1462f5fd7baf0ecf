import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_FILE, readProjectFile, type ProjectFile } from './project/project-file.js';
import { socketNameFor, tmuxEnv, type TmuxServer } from './tmux/server.js';

export interface GlobalOptions {
  project?: string;
  socket?: string;
  session?: string;
}

/** Where a command works: the project folder, its `.jaggers/`, its tmux server and session. */
export interface Context {
  projectRoot: string;
  jaggersDir: string;
  projectFile: ProjectFile | null;
  server: TmuxServer;
  session: string;
  env: NodeJS.ProcessEnv;
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
  const base = path.basename(root).replace(/[^A-Za-z0-9_-]/g, '-').replace(/^-+|-+$/g, '');
  return base || 'jaggers';
}

export async function resolveContext(opts: GlobalOptions, env: NodeJS.ProcessEnv, cwd: string): Promise<Context> {
  const projectRoot = opts.project ?? env.JAGGERS_PROJECT ?? findProjectRoot(cwd);
  const root = path.resolve(cwd, projectRoot);
  const projectFile = await readProjectFile(root);
  const socket = opts.socket ?? env.JAGGERS_SOCKET ?? socketNameFor(root);
  return {
    projectRoot: root,
    jaggersDir: path.join(root, '.jaggers'),
    projectFile,
    server: {
      socket: socket.includes('/') ? { path: path.resolve(cwd, socket) } : { name: socket },
      configFile: env.JAGGERS_TMUX_CONF ?? null,
      bin: env.JAGGERS_TMUX ?? 'tmux',
      env: tmuxEnv(env),
    },
    session: opts.session ?? env.JAGGERS_SESSION_NAME ?? projectFile?.session ?? sessionNameFor(root),
    env,
  };
}
