// The project a host's supervisor serves (issue 31; docs/hosts.md): its own folder under the host's
// `dir` (`<dir>/.jaggers/hosted/<session>/`, inside `.jaggers/`, so a checkout there is not touched),
// with a jaggers.json the local side writes from the agents jaggers.json puts on that host. Pure: data
// in, the file's text and the shell scripts that write it and start the supervisor out.
import path from 'node:path';
import { JaggersError } from '../errors.js';
import type { AgentSpec, ProjectFile } from '../project/project-file.js';
import { shellQuote } from './ssh.js';

/** `<dir>/.jaggers/hosted/<session>`: the remote project's root (`dir` as the host resolved it: absolute). */
export function remoteRoot(dir: string, session: string): string {
  return path.posix.join(dir, '.jaggers', 'hosted', session);
}

/** The agents jaggers.json puts on `host`. */
export function agentsOn(project: ProjectFile | null, host: string): AgentSpec[] {
  return (project?.agents ?? []).filter((a) => a.host === host);
}

/**
 * The remote project's jaggers.json: the host's agents (no `host`; each `cwd` made absolute from `dir`,
 * where the project's files are on that host), the session's name, and the settings that mean the same
 * there (size, hooks, the watchdog, workers, prices, context, how worktrees are set up), and `home`: the
 * team's other agents (by name), whom its agents may message through the outbox (docs/hosts.md). Not
 * carried: `notify` (a command of this machine), the session's `budget` (the whole team's, kept here),
 * `hosts`. An agent with `isolation: "worktree"` works in a worktree made there, of `dir`'s repository
 * (the remote project sits inside `dir`, so git finds it from there): `<root>/.jaggers/worktrees/<agent>`.
 */
export function remoteProjectFile(project: ProjectFile, host: string, session: string, dir: string): Record<string, unknown> {
  const mine = agentsOn(project, host);
  if (mine.length === 0) throw new JaggersError('E_USAGE', `host ${host}: jaggers.json puts no agent on it`);
  const names = new Set(mine.map((a) => a.name));
  const agents = mine.map((a) => {
    const { host: _host, cwd, fallback, ...rest } = a;
    return {
      ...rest,
      // An isolated agent's `cwd` is a folder inside its worktree (made there), so it stays relative.
      ...(a.isolation === 'worktree' ? (cwd !== undefined ? { cwd } : {}) : { cwd: path.posix.resolve(dir, cwd ?? '.') }),
      ...(fallback !== undefined && names.has(fallback) ? { fallback } : {}),
    };
  });
  const keep = ['size', 'hooks', 'stuckAfter', 'onStuck', 'maxWorkers', 'prices', 'contextWindows', 'compactAt', 'autoCompact', 'worktree'] as const;
  const out: Record<string, unknown> = { session };
  for (const k of keep) if (project[k] !== undefined) out[k] = project[k];
  out.agents = agents;
  // The rest of the team, whom the agents there may message: their messages wait there until taken home.
  const home = project.agents.filter((a) => a.host !== host).map((a) => a.name);
  if (home.length) out.home = { agents: home };
  return out;
}

/** A sh script writing `text` as `<root>/jaggers.json` (private folders, the file replaced at once). */
export function writeProjectScript(root: string, text: string): string {
  const file = path.posix.join(root, 'jaggers.json');
  return [
    'set -e',
    'umask 077',
    `mkdir -p ${shellQuote(root)}`,
    `printf '%s\\n' ${shellQuote(text)} > ${shellQuote(`${file}.tmp`)}`,
    `mv -f ${shellQuote(`${file}.tmp`)} ${shellQuote(file)}`,
  ].join('\n');
}

/**
 * `jaggers up` there, in the remote project: it makes the session (window 0 runs the supervisor,
 * which owns that host's tmux server) and opens the agents; `--json` gives its windows back.
 */
export function remoteUpArgv(root: string): string[] {
  return ['jaggers', '--project', root, 'up', '--no-wait', '--json'];
}

export function remoteDownArgv(root: string): string[] {
  return ['jaggers', '--project', root, 'down'];
}
