// Which command brings a session back: `jaggers up` when it knows what to open, else how to begin.
import { readStored } from './stored.js';
import { registryTeam } from '../agents/team.js';
import type { Context } from '../context.js';
import type { AgentSpec } from '../project/project-file.js';

/** The default team's agents the registry knows (newest terminal per agent), for `up` without a jaggers.json. */
export async function knownTeam(ctx: Context): Promise<AgentSpec[]> {
  return registryTeam(readStored(ctx), ctx.projectRoot);
}

export async function hintForUp(ctx: Context): Promise<string> {
  if (await ctx.project().catch(() => null)) return 'run `jaggers up` to start it';
  const team = await knownTeam(ctx).catch(() => []);
  if (team.length) return `run \`jaggers up\` to reopen ${team.map((a) => a.name).join(', ')} in their pinned conversations`;
  return 'run `jaggers demo` to try it with the demo agents, or `jaggers init` and then `jaggers up`';
}
