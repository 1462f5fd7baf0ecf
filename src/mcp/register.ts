// How an agent jaggers starts is offered jaggers' MCP server: per process, from its profile's `mcp`
// section, never by editing the user's own settings. The server entry runs `jaggers mcp` for this
// project, session and tmux server, with the agent's terminal id in its environment (codex passes MCP
// servers only a few variables of its own, so the ids go in the entry, not only in the pane's env).
import path from 'node:path';
import { MCP_FORMATS } from '../clis/kinds.js';
import type { Profile } from '../profiles/schema.js';

export interface McpServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface McpIdentity {
  projectRoot: string;
  session: string;
  /** The tmux socket, `-L` name or `-S` path, as `--socket` takes it. */
  socket: string;
  binDir: string;
  terminalId: string;
  agent: string;
  task: string | null;
  /** The node that runs jaggers (default: this one). */
  node?: string;
}

/** What a launch gains: arguments after the CLI's own, environment, and files to write before it starts. */
export interface McpLaunch {
  args: string[];
  env: Record<string, string>;
  files: { path: string; content: string }[];
}

export function mcpServerEntry(id: McpIdentity): McpServerEntry {
  return {
    command: id.node ?? process.execPath,
    args: [path.join(id.binDir, 'jaggers.js'), '--project', id.projectRoot, '--socket', id.socket, '--session', id.session, 'mcp'],
    env: {
      JAGGERS_TERMINAL_ID: id.terminalId,
      JAGGERS_AGENT: id.agent,
      JAGGERS_PROJECT: id.projectRoot,
      JAGGERS_SOCKET: id.socket,
      JAGGERS_SESSION: id.session,
      ...(id.task ? { JAGGERS_TASK_ID: id.task } : {}),
      // Where the tmux server is, for starting the supervisor (codex passes its servers a few variables only).
      ...Object.fromEntries(PASS_ON.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : []))),
    },
  };
}

const PASS_ON = ['TMUX_TMPDIR', 'JAGGERS_TMUX', 'JAGGERS_TMUX_CONF'];

/** Where the config file of a terminal's server goes. */
export function mcpConfigPath(projectRoot: string, terminalId: string): string {
  return path.join(projectRoot, '.jaggers', 'mcp', `${terminalId}.json`);
}

const fill = (s: string, vars: Record<string, string>) => s.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m);

/** The registration of jaggers' MCP server for one agent's process; null when the profile has none. */
export function mcpLaunch(profile: Profile, id: McpIdentity): McpLaunch | null {
  const how = profile.mcp;
  if (!how) return null;
  const entry = { ...mcpServerEntry(id), ...how.server };
  const format = MCP_FORMATS[how.via];
  if ('args' in format) return { args: [...format.args(entry), ...how.args], env: { ...how.env }, files: [] };
  const file = mcpConfigPath(id.projectRoot, id.terminalId);
  const vars = { mcpConfig: file };
  const config = format.config(entry, how.server);
  return {
    args: how.args.map((a) => fill(a, vars)),
    env: Object.fromEntries(Object.entries(how.env).map(([k, v]) => [k, fill(v, vars)])),
    files: [{ path: file, content: `${JSON.stringify(config, null, 2)}\n` }],
  };
}

/** Write the files a launch needs (its MCP config) before the CLI starts; unchanged files are left alone. */
export async function writeLaunchFiles(launch: { mcp: McpLaunch | null }): Promise<void> {
  const { mkdir, readFile, rename, writeFile } = await import('node:fs/promises');
  for (const f of launch.mcp?.files ?? []) {
    if ((await readFile(f.path, 'utf8').catch(() => null)) === f.content) continue;
    await mkdir(path.dirname(f.path), { recursive: true, mode: 0o700 });
    const tmp = `${f.path}.${process.pid}.tmp`;
    await writeFile(tmp, f.content, { mode: 0o600 });
    await rename(tmp, f.path);
  }
}
