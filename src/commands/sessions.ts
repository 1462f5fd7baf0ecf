import { withApi } from '../api/connect.js';
import { liveOrStored } from '../api/live-or-stored.js';
import type { PinRow } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { renderTable } from './render.js';

export type { PinRow };

/** The pinned conversations: from the supervisor, or from `.jaggers/` when no session runs. */
export async function sessions(ctx: Context, task?: string): Promise<PinRow[]> {
  return liveOrStored(
    ctx,
    () => withApi(ctx, (api) => api.call<PinRow[]>('GET', `/v1/sessions${task ? `?task=${encodeURIComponent(task)}` : ''}`), { readOnly: true }),
    async (data) => (await import('../api/pins.js')).pins(data, task),
  );
}

export function renderPins(rows: PinRow[]): string {
  if (rows.length === 0) return 'no terminals yet: jaggers up pins a session for each agent\n';
  return renderTable(
    ['TASK', 'AGENT', 'TERMINAL', 'PROFILE', 'SESSION', 'FORKS'],
    rows.map((r) => [r.task ?? '-', r.agent, r.terminalId, r.profile, r.sessionId ?? '(not pinned yet)', String(r.previous.length)]),
  );
}

/**
 * `jaggers exec <cli> <args...>`: run a CLI with `-r latest`, `--resume latest` or `-c` rewritten into
 * the session pinned for $JAGGERS_TASK_ID and the agent, so scripts keep their commands and lose the bleed.
 */
export async function execPinned(ctx: Context, cli: string, args: string[], o: { agent?: string; task?: string }): Promise<number> {
  const agent = o.agent ?? ctx.env.JAGGERS_AGENT ?? cli;
  const task = o.task ?? ctx.env.JAGGERS_TASK_ID ?? null;
  const rows = await sessions(ctx);
  const [{ rewriteResumeArgs }, { execa }] = await Promise.all([import('../clis/exec-rewrite.js'), import('execa')]);
  const rewrite = rewriteResumeArgs(cli, args, pinnedOf(rows, agent, task), { agent, task });
  const r = await execa(cli, rewrite.args, { stdio: 'inherit', reject: false, env: ctx.env, extendEnv: false });
  if ((r as { code?: string }).code === 'ENOENT') throw new JaggersError('E_COMMAND_NOT_FOUND', `exec: ${cli} not found on PATH`);
  return r.exitCode ?? 1;
}

/** The session pinned for the agent in the task: its newest terminal's. */
function pinnedOf(rows: PinRow[], agent: string, task: string | null): string | null {
  const mine = rows.filter((r) => r.agent === agent && r.task === task).sort((a, b) => a.created.localeCompare(b.created));
  return mine.at(-1)?.sessionId ?? null;
}
