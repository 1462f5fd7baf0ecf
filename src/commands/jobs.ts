// `assign`, `jobs`, `wait`, `result`, `cancel`: background jobs through the supervisor. `assign` returns
// once the job is recorded; the supervisor sees it through and sends the result home.
import { FINAL_STATES } from '../states.js';
import { withApi } from '../api/connect.js';
import type { JobResultView, JobView } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { givenAgent, newJobId } from '../ids.js';
import { payloadOf } from './handoff.js';
import { renderTable } from './render.js';
import { tokenTotal } from '../usage/tokens.js';

export interface AssignOptions {
  message?: string;
  file?: string;
  name?: string;
  timeoutS?: number;
  from?: string;
  keep?: boolean;
  worktree?: boolean;
  base?: string;
  /** The job's own budget (`--budget-tokens`, `--budget-usd`). */
  budgetTokens?: number;
  budgetUsd?: number;
}

const FINAL = new Set<string>(FINAL_STATES);

/** The caller, when it is an agent in a pane: its result comes back to its inbox. */
export function caller(ctx: Context): { fromTerminal?: string; task?: string } {
  return {
    ...(ctx.env.JAGGERS_TERMINAL_ID ? { fromTerminal: ctx.env.JAGGERS_TERMINAL_ID } : {}),
    ...(ctx.env.JAGGERS_TASK_ID ? { task: ctx.env.JAGGERS_TASK_ID } : {}),
  };
}

export async function assign(ctx: Context, target: string, o: AssignOptions): Promise<JobView> {
  givenAgent('assign', 'agent or profile', target);
  const text = await payloadOf(ctx, o, 'assign');
  const body = {
    // Chosen here: sent again after a dropped connection, the job is still recorded once.
    id: newJobId(),
    target,
    text,
    ...caller(ctx),
    ...(o.from ? { from: o.from } : {}),
    ...(o.name ? { name: o.name } : {}),
    ...(o.timeoutS ? { timeout: o.timeoutS } : {}),
    ...(o.keep ? { keep: true } : {}),
    ...(o.worktree ? { worktree: true } : {}),
    ...(o.base ? { base: o.base } : {}),
    ...(o.budgetTokens !== undefined || o.budgetUsd !== undefined
      ? { budget: { ...(o.budgetTokens !== undefined ? { tokens: o.budgetTokens } : {}), ...(o.budgetUsd !== undefined ? { usd: o.budgetUsd } : {}) } }
      : {}),
  };
  return withApi(ctx, (api) => api.call<JobView>('POST', '/v1/jobs', body), { readOnly: true });
}

export async function jobs(ctx: Context): Promise<JobView[]> {
  return withApi(ctx, (api) => api.call<JobView[]>('GET', '/v1/jobs'), { readOnly: true });
}

const age = (iso: string, now: number) => {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
};

export function renderJobs(list: JobView[], now = Date.now()): string {
  if (list.length === 0) return 'no jobs\n';
  return renderTable(
    ['JOB', 'STATE', 'AGENT', 'NAME', 'SINCE', 'TOKENS', 'REASON'],
    list.map((j) => [
      j.id,
      j.overBudget ? 'over_budget' : j.state,
      j.host ? `${j.agent ?? j.target}@${j.host}` : (j.agent ?? `(${j.target} worker)`),
      j.name ?? '-',
      age(j.updated, now),
      j.usage ? (tokenTotal(j.usage)?.total ?? 0).toLocaleString('en-US') : '-',
      (j.waiting ?? j.reason).replace(/\s+/g, ' ').slice(0, 100),
    ]),
  );
}

export interface WaitResult {
  jobs: JobView[];
  timedOut: boolean;
}

/** Wait until every job ended or `timeoutS` ran out; follows a restarted supervisor. */
export async function waitJobs(ctx: Context, ids: string[], timeoutS: number | undefined): Promise<WaitResult> {
  const deadline = timeoutS === undefined ? Infinity : Date.now() + timeoutS * 1000;
  const out: JobView[] = [];
  for (const id of ids) {
    for (;;) {
      const left = Math.min(60, (deadline - Date.now()) / 1000);
      const path = `/v1/jobs/${encodeURIComponent(id)}/wait?timeout=${Math.max(0.05, left).toFixed(2)}`;
      const j = await withApi(ctx, (api) => api.call<JobView>('GET', path), { readOnly: true }).catch((e: unknown) => {
        // The supervisor went away while we waited: the next request starts it again.
        if (e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN') return null;
        throw e;
      });
      if (j && (FINAL.has(j.state) || Date.now() >= deadline)) {
        out.push(j);
        break;
      }
    }
    if (!FINAL.has(out.at(-1)!.state)) {
      for (const rest of ids.slice(out.length)) out.push(await withApi(ctx, (api) => api.call<JobView>('GET', `/v1/jobs/${encodeURIComponent(rest)}`)));
      return { jobs: out, timedOut: true };
    }
  }
  return { jobs: out, timedOut: false };
}

/** 0: all done; 1: one failed or was cancelled; 3: the timeout ran out first. */
export function waitExitCode(r: WaitResult): number {
  if (r.timedOut) return 3;
  return r.jobs.every((j) => j.state === 'done') ? 0 : 1;
}

export function renderWait(r: WaitResult): string {
  const lines = r.jobs.map((j) => `${j.id} ${j.state}${j.state === 'done' ? (j.reply ? `: ${j.reply}` : '') : `: ${j.reason}`}`);
  if (r.timedOut) lines.push('timed out before every job ended');
  return `${lines.join('\n')}\n`;
}

export async function result(ctx: Context, id: string): Promise<JobResultView> {
  return withApi(ctx, (api) => api.call<JobResultView>('GET', `/v1/jobs/${encodeURIComponent(id)}/result`), { readOnly: true });
}

export function renderResult(r: JobResultView): string {
  if (r.reply !== null) return `${r.reply}\n`;
  return `${r.job.id} is ${r.job.state}: ${r.job.reason}\n`;
}

export async function cancel(ctx: Context, id: string): Promise<JobView> {
  return withApi(ctx, (api) => api.call<JobView>('POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`));
}
