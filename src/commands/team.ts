import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { adHocAgents, type AgentSpec } from '../project/project-file.js';
import { loadProfile } from '../profiles/load.js';
import type { TeamMember } from '../agents/plan.js';
import { registryTeam } from './up-hint.js';

export const DEMO_TEAM: AgentSpec[] = [
  { name: 'planner', profile: 'demo', args: [], env: {} },
  { name: 'coder', profile: 'demo', args: [], env: {} },
  { name: 'reviewer', profile: 'demo', args: [], env: {} },
];

/**
 * The agents a command works on: `--agents`, else jaggers.json, else the team the registry knows from
 * an earlier `up` or `demo` (so `up` after `down` reopens it), else a clear error.
 */
export async function teamSpecs(ctx: Context, agentsOption: string | undefined): Promise<AgentSpec[]> {
  if (agentsOption) return adHocAgents(agentsOption);
  const project = await ctx.project();
  if (project) return project.agents;
  const known = await registryTeam(ctx);
  if (known.length) return known;
  throw new JaggersError(
    'E_PROJECT_MISSING',
    `no jaggers.json in ${ctx.projectRoot}: run \`jaggers init\` to write one, pass --agents claude,gemini, or try \`jaggers demo\``,
  );
}

/** Load every profile first, so a bad profile stops `up` before anything starts. */
export async function loadTeam(ctx: Context, specs: AgentSpec[]): Promise<TeamMember[]> {
  return Promise.all(specs.map(async (spec) => ({ spec, profile: (await loadProfile(spec.profile, ctx.jaggersDir)).profile })));
}
