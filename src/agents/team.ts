// Which agents `up` opens: `--agents`, else jaggers.json, else the team the registry knows from an
// earlier `up` or `demo` (so `up` after `down` reopens it). Pure over the project file and the registry.
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { WORKER_AGENT } from '../ids.js';
import { adHocAgents, type AgentSpec, type ProjectFile } from '../project/project-file.js';
import type { RegistryData } from '../sessions/registry.js';

export const DEMO_TEAM: AgentSpec[] = [
  { name: 'planner', profile: 'demo', args: [], env: {} },
  { name: 'coder', profile: 'demo', args: [], env: {} },
  { name: 'reviewer', profile: 'demo', args: [], env: {} },
];

/** The default team's agents the registry knows (newest terminal per agent; worker windows are not agents). */
export function registryTeam(data: RegistryData, projectRoot: string): AgentSpec[] {
  const byAgent = new Map<string, { profile: string; cwd: string; created: string }>();
  for (const t of Object.values(data.terminals)) {
    if (t.task !== null || WORKER_AGENT.test(t.agent)) continue;
    const old = byAgent.get(t.agent);
    if (!old || t.created >= old.created) byAgent.set(t.agent, { profile: t.profile, cwd: t.cwd, created: t.created });
  }
  return [...byAgent].map(([name, t]) => {
    const cwd = t.cwd && path.resolve(t.cwd) !== projectRoot ? path.relative(projectRoot, t.cwd) : undefined;
    return { name, profile: t.profile, args: [], env: {}, ...(cwd ? { cwd } : {}) };
  });
}

export function teamSpecs(o: { agents?: string; demo?: boolean }, project: ProjectFile | null, data: RegistryData, projectRoot: string): AgentSpec[] {
  if (o.demo) return DEMO_TEAM;
  if (o.agents) return adHocAgents(o.agents);
  if (project) return project.agents;
  const known = registryTeam(data, projectRoot);
  if (known.length) return known;
  throw new JaggersError(
    'E_PROJECT_MISSING',
    `no jaggers.json in ${projectRoot}: run \`jaggers init\` to write one, pass --agents claude,gemini, or try \`jaggers demo\``,
  );
}

/** Agents by name: as jaggers.json has them, else as an earlier `up` made them, else the profile of that name. */
export function namedTeam(names: readonly string[], project: ProjectFile | null, data: RegistryData, projectRoot: string): AgentSpec[] {
  const known = new Map([...registryTeam(data, projectRoot), ...(project?.agents ?? [])].map((a) => [a.name, a]));
  return names.map((n) => known.get(n) ?? { name: n, profile: n, args: [], env: {} });
}

/**
 * Where agents on other hosts (docs/hosts.md) cannot be started (a task's or a resumed team, a caller
 * without hosts): refused, never run here instead. `how` says what was asked.
 */
export function assertLocalTeam(specs: readonly AgentSpec[], how = 'this way'): void {
  const remote = specs.filter((s) => s.host !== undefined);
  if (remote.length === 0) return;
  throw new JaggersError(
    'E_USAGE',
    `up: ${remote.map((s) => `${s.name} (host ${s.host})`).join(', ')}: agents on other hosts are not started ${how} yet; \`jaggers up\` starts jaggers.json's team there (docs/hosts.md)`,
  );
}
