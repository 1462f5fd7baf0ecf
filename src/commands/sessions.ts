import { execa } from 'execa';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { loadProfile } from '../profiles/load.js';
import type { AgentSpec } from '../project/project-file.js';
import { rewriteResumeArgs } from '../clis/exec-rewrite.js';
import { pinnedSession, Registry } from '../sessions/registry.js';
import { renderTable } from './render.js';
import { up, type UpResult } from './up.js';

export interface PinRow {
  task: string | null;
  agent: string;
  terminalId: string;
  profile: string;
  sessionId: string | null;
  previous: string[];
  window: string | null;
}

export async function sessions(ctx: Context, task?: string): Promise<PinRow[]> {
  const data = await new Registry(ctx.jaggersDir, { onWarning: ctx.warn }).read();
  return Object.values(data.terminals)
    .filter((t) => task === undefined || t.task === task)
    .sort((a, b) => (a.task ?? '').localeCompare(b.task ?? '') || a.agent.localeCompare(b.agent))
    .map((t) => ({
      task: t.task,
      agent: t.agent,
      terminalId: t.terminalId,
      profile: t.profile,
      sessionId: t.sessionId,
      previous: t.sessionHistory,
      window: t.window,
    }));
}

export function renderPins(rows: PinRow[]): string {
  if (rows.length === 0) return 'no terminals yet: jaggers up pins a session for each agent\n';
  return renderTable(
    ['TASK', 'AGENT', 'TERMINAL', 'PROFILE', 'SESSION', 'FORKS'],
    rows.map((r) => [r.task ?? '-', r.agent, r.terminalId, r.profile, r.sessionId ?? '(not pinned yet)', String(r.previous.length)]),
  );
}

/** Reopen a task's agents, each in its own pinned conversation, with the same terminal ids. */
export async function resume(ctx: Context, task: string): Promise<UpResult> {
  const data = await new Registry(ctx.jaggersDir, { onWarning: ctx.warn }).read();
  const record = data.tasks[task];
  const terminals = Object.values(data.terminals).filter((t) => t.task === task);
  if (!record && terminals.length === 0) {
    const known = Object.keys(data.tasks).join(', ') || 'none';
    throw new JaggersError('E_USAGE', `resume: no task ${JSON.stringify(task)} in ${ctx.jaggersDir}/sessions.json: tasks are ${known}`);
  }
  const agents = new Map<string, string>();
  for (const t of terminals) agents.set(t.agent, t.profile);
  const fromProject = new Map(((await ctx.project())?.agents ?? []).map((a) => [a.name, a]));
  const specs: AgentSpec[] = [...agents].map(([name, profile]) => ({ args: [], env: {}, ...fromProject.get(name), name, profile }));
  const team = await Promise.all(specs.map(async (spec) => ({ spec, profile: (await loadProfile(spec.profile, ctx.jaggersDir)).profile })));
  return up(ctx, team, { task });
}

/**
 * `jaggers exec <cli> <args...>`: run a CLI with `-r latest`, `--resume latest` or `-c` rewritten into
 * the session pinned for $JAGGERS_TASK_ID and the agent, so scripts keep their commands and lose the bleed.
 */
export async function execPinned(ctx: Context, cli: string, args: string[], o: { agent?: string; task?: string }): Promise<number> {
  const agent = o.agent ?? ctx.env.JAGGERS_AGENT ?? cli;
  const task = o.task ?? ctx.env.JAGGERS_TASK_ID ?? null;
  const data = await new Registry(ctx.jaggersDir, { onWarning: ctx.warn }).read();
  const rewrite = rewriteResumeArgs(cli, args, pinnedSession(data, { agent, task }), { agent, task });
  const r = await execa(cli, rewrite.args, { stdio: 'inherit', reject: false, env: ctx.env, extendEnv: false });
  if ((r as { code?: string }).code === 'ENOENT') throw new JaggersError('E_COMMAND_NOT_FOUND', `exec: ${cli} not found on PATH`);
  return r.exitCode ?? 1;
}
