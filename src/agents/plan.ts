import path from 'node:path';
import type { AgentSpec } from '../project/project-file.js';
import type { Profile } from '../profiles/schema.js';
import type { PaneInfo } from '../tmux/commands.js';
import { mcpLaunch, type McpLaunch } from '../mcp/register.js';
import { hookDir, hookLaunch, shareSettingsFiles, type HookLaunch } from './hooks-install.js';
import { foldersLaunch, type FoldersLaunch } from './shared-folders.js';

export interface TeamMember {
  spec: AgentSpec;
  profile: Profile;
}

/** What the registry knows of an agent's terminal in this team. */
export interface KnownTerminal {
  terminalId: string;
  agent: string;
  sessionId: string | null;
}

export interface Launch {
  command: string[];
  env: Record<string, string>;
  cwd: string;
  width: number;
  height: number;
  /** The conversation this launch pins, and how. */
  sessionId: string | null;
  pin: 'pre-generated' | 'resumed' | null;
  /** jaggers' MCP server for this agent (its arguments are in `command` already); files to write first. */
  mcp: McpLaunch | null;
  /** The CLI's native hooks (issue 27): their arguments and environment are in `command`/`env` already; files to write first. */
  hooks: HookLaunch | null;
  /** The terminal's hook folder (`.jaggers/hooks/<terminalId>/`): written, or removed when hooks are off. */
  hooksDir: string;
  /** jaggers' shared folders outside the agent's folder, readable for its CLI (arguments and environment in `command`/`env` already); made first. */
  folders: FoldersLaunch | null;
  /** Its CPU priority: `command` starts under `nice -n <nice>` when above 0, and its pane's session group gets it too (`sessionNice`). */
  nice: number;
}

export type WindowAction =
  | { kind: 'keep'; agent: string; terminalId: string; pane: PaneInfo }
  | { kind: 'create'; agent: string; profile: string; terminalId: string; newTerminal: boolean; launch: Launch; windowName: string }
  | { kind: 'respawn'; agent: string; profile: string; terminalId: string; pane: PaneInfo; launch: Launch };

export interface PlanInput {
  team: TeamMember[];
  panes: PaneInfo[];
  terminals: KnownTerminal[];
  projectRoot: string;
  session: string;
  socket: string;
  binDir: string;
  basePath: string;
  size: { width: number; height: number };
  task: string | null;
  newTerminalId: () => string;
  newSessionId: () => string;
  /** Why hooks are off for this launch (`JAGGERS_HOOKS=0`, jaggers.json); null or absent: on where the profile has them. */
  hooksOff?: string | null;
  /** jaggers.json's `nice`, for agents without their own (absent: DEFAULT_AGENT_NICE). */
  nice?: number;
  /** The `nice` program (an absolute path); null where none was found: agents then start at jaggers' own priority. */
  niceBin?: string | null;
  /**
   * The environment every pane inherits (the supervisor's: tmux gives each window the server's, as it
   * gave window 0), under the profile's and the agent's: where a hook kit finds HOME (absent: only the
   * profile's and the agent's, and a HOME they do not set is this process's).
   */
  baseEnv?: Readonly<Record<string, string | undefined>>;
}

export function fillTemplate(args: readonly string[], vars: Record<string, string>): string[] {
  return args.map((a) => a.replace(/\{(\w+)\}/g, (m, k: string) => vars[k] ?? m));
}

/** Compute what `up` must do: keep live windows, restart dead ones, create missing ones. */
export function planWindows(input: PlanInput): WindowAction[] {
  return input.team.map(({ spec, profile }) => {
    const pane = input.panes.find((p) => p.agent === spec.name && p.task === input.task);
    const known = input.terminals.find((t) => t.agent === spec.name);
    const terminalId = pane?.terminalId ?? known?.terminalId ?? input.newTerminalId();
    if (pane && !pane.dead) return { kind: 'keep', agent: spec.name, terminalId, pane };
    const launch = planLaunch(input, spec, profile, terminalId, known?.sessionId ?? null);
    if (pane) return { kind: 'respawn', agent: spec.name, profile: profile.name, terminalId, pane, launch };
    const windowName = input.task ? `${spec.name}+${input.task}` : spec.name;
    return { kind: 'create', agent: spec.name, profile: profile.name, terminalId, newTerminal: !known && !pane, launch, windowName };
  });
}

/** What starting an agent needs besides its spec and profile. */
export type LaunchInput = Pick<
  PlanInput,
  'projectRoot' | 'session' | 'socket' | 'binDir' | 'basePath' | 'size' | 'task' | 'newSessionId' | 'hooksOff' | 'baseEnv' | 'nice' | 'niceBin'
>;

/**
 * The command, environment and folder that start an agent: resuming `pinned` when the profile can, else
 * a new pinned session (`newSessionId`) where the CLI takes one, else the CLI's own start.
 */
export function planLaunch(input: LaunchInput, spec: AgentSpec, profile: Profile, terminalId: string, pinned: string | null): Launch {
  let sessionArgs: string[] = [];
  let sessionId: string | null = null;
  let pin: Launch['pin'] = null;
  if (pinned && profile.session.resumeArgs.length > 0) {
    sessionId = pinned;
    pin = 'resumed';
    sessionArgs = fillTemplate(profile.session.resumeArgs, { sessionId });
  } else if (profile.session.pin === 'pre-generated') {
    sessionId = input.newSessionId();
    pin = 'pre-generated';
    sessionArgs = fillTemplate(profile.session.startArgs, { sessionId });
  }
  const env: Record<string, string> = {
    ...profile.env,
    ...spec.env,
    // jaggers' own bin folder first (the demo agent, `jaggers` for agents), then the agent's PATH.
    PATH: `${input.binDir}${path.delimiter}${spec.env.PATH ?? profile.env.PATH ?? input.basePath}`,
    JAGGERS_TERMINAL_ID: terminalId,
    JAGGERS_AGENT: spec.name,
    JAGGERS_SESSION: input.session,
    JAGGERS_SOCKET: input.socket,
    JAGGERS_PROJECT: input.projectRoot,
  };
  if (input.task) env.JAGGERS_TASK_ID = input.task;
  const mcp =
    spec.mcp !== false
      ? mcpLaunch(profile, {
          projectRoot: input.projectRoot,
          session: input.session,
          socket: input.socket,
          binDir: input.binDir,
          terminalId,
          agent: spec.name,
          task: input.task,
        })
      : null;
  const size = profile.size ?? input.size;
  const cwd = path.resolve(input.projectRoot, spec.cwd ?? '.');
  const hooks = shareSettingsFiles(
    mcp,
    input.hooksOff || spec.hooks === false
      ? null
      : hookLaunch(profile, {
          projectRoot: input.projectRoot,
          binDir: input.binDir,
          terminalId,
          cwd,
          env: { ...input.baseEnv, ...env },
        }),
  );
  const folders = foldersLaunch(profile, { projectRoot: input.projectRoot, cwd, env: { ...input.baseEnv, ...env } });
  const nice = spec.nice ?? input.nice ?? DEFAULT_AGENT_NICE;
  const argv = [profile.command, ...profile.args, ...spec.args, ...(mcp?.args ?? []), ...(hooks?.args ?? []), ...(folders?.args ?? []), ...sessionArgs];
  return {
    command: nicedCommand(argv, nice, input.niceBin ?? null),
    // The folders' environment joins the agent's own value (opencode's OPENCODE_PERMISSION), so it comes last.
    env: { ...mcp?.env, ...hooks?.env, ...env, ...folders?.env },
    cwd,
    width: size.width,
    height: size.height,
    sessionId,
    pin,
    mcp,
    hooks,
    hooksDir: hookDir(input.projectRoot, terminalId),
    folders,
    nice,
  };
}

/**
 * Agents run below jaggers' own CPU priority by default: when they keep every core busy (builds, tests,
 * or many at once), the supervisor, tmux and the person's own programs still get the CPU when they need
 * it (at 100 busy agents on 2 cores, hook events were known 5-10x sooner: BENCHMARKS.md, "CPU priority").
 */
export const DEFAULT_AGENT_NICE = 5;

/** The argv under `nice` (which execs it: the pane's process stays the CLI's, same pid); unchanged at 0 or without a `nice`. */
export function nicedCommand(argv: string[], nice: number, niceBin: string | null): string[] {
  return nice > 0 && niceBin ? [niceBin, '-n', String(nice), ...argv] : argv;
}
