import path from 'node:path';
import type { Context } from '../context.js';
import type { AgentSpec } from '../project/project-file.js';
import { Registry } from '../sessions/registry.js';

/** The default team's agents the registry knows (newest terminal per agent), for `up` without a jaggers.json. */
export async function registryTeam(ctx: Context): Promise<AgentSpec[]> {
  const data = await new Registry(ctx.jaggersDir, { onWarning: ctx.warn }).read();
  const byAgent = new Map<string, { profile: string; cwd: string; created: string }>();
  for (const t of Object.values(data.terminals)) {
    if (t.task !== null) continue;
    const old = byAgent.get(t.agent);
    if (!old || t.created >= old.created) byAgent.set(t.agent, { profile: t.profile, cwd: t.cwd, created: t.created });
  }
  return [...byAgent].map(([name, t]) => {
    const cwd = t.cwd && path.resolve(t.cwd) !== ctx.projectRoot ? path.relative(ctx.projectRoot, t.cwd) : undefined;
    return { name, profile: t.profile, args: [], env: {}, ...(cwd ? { cwd } : {}) };
  });
}

/** Which command brings a session back: `jaggers up` when it knows what to open, else how to begin. */
export async function hintForUp(ctx: Context): Promise<string> {
  if (await ctx.project().catch(() => null)) return 'run `jaggers up` to start it';
  const team = await registryTeam(ctx).catch(() => []);
  if (team.length) return `run \`jaggers up\` to reopen ${team.map((a) => a.name).join(', ')} in their pinned conversations`;
  return 'run `jaggers demo` to try it with the demo agents, or `jaggers init` and then `jaggers up`';
}
