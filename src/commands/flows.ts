// `jaggers flow add|ls|show|run|enable|disable|rm`: scheduled flows, files in .jaggers/flows/. The
// files are the truth: the supervisor watches the folder, so a change here (or by hand) takes effect
// without a restart. `ls` and `show` read the files and the scheduler's state without a supervisor.
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { withApi } from '../api/connect.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { checkSchedule, checkTarget, flowFile, FLOW_NAME, listFlows, loadFlow, parseFlowFile, renderFlow, withEnabled, type FlowDef } from '../flows/flow.js';
import { listProfileNames } from '../profiles/load.js';
import { writeFileAtomic } from '../fs/durable.js';
import { readGivenFile } from '../fs/given-file.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { FlowView } from '../flows/scheduler.js';
import { listWorkflows } from '../workflows/load.js';
import { renderTable } from './render.js';

async function known(ctx: Context) {
  const project = await ctx.project().catch(() => null);
  return {
    agents: project?.agents.map((a) => a.name) ?? [],
    profiles: await listProfileNames(ctx.jaggersDir).catch(() => []),
    workflows: (await listWorkflows(ctx.jaggersDir)).filter((w) => !w.error).map((w) => w.name),
  };
}

export interface AddOptions {
  schedule: string;
  agent?: string;
  profile?: string;
  workflow?: string;
  agents?: string;
  prompt?: string;
  file?: string;
  timeout?: number;
  disabled?: boolean;
  force?: boolean;
}

export async function addFlow(ctx: Context, name: string, o: AddOptions): Promise<FlowDef> {
  if (!FLOW_NAME.test(name)) throw new JaggersError('E_USAGE', `flow add: the name ${JSON.stringify(name)} must be 1-64 lower-case letters, digits, - or _`);
  const targets = (['agent', 'profile', 'workflow'] as const).filter((k) => o[k] !== undefined);
  if (targets.length !== 1)
    throw new JaggersError(
      'E_USAGE',
      `flow add: give exactly one of --agent, --profile or --workflow${targets.length ? ` (got ${targets.map((t) => `--${t}`).join(' and ')})` : ''}`,
    );
  if ((o.prompt === undefined) === (o.file === undefined))
    throw new JaggersError('E_USAGE', 'flow add: give the prompt with --prompt TEXT or --file FILE (one of them)');
  const prompt = o.prompt ?? (await readGivenFile(ctx.cwd, o.file!, 'flow add --file'));
  const file = flowFile(ctx.jaggersDir, name);
  if (!o.force && (await stat(file).catch(() => null))) throw new JaggersError('E_USAGE', `flow add: ${file} exists; --force replaces it`);
  checkSchedule(o.schedule, undefined, `flow add --schedule`);
  const kind = targets[0]!;
  const text = renderFlow({
    name,
    schedule: o.schedule,
    target: { kind, name: o[kind]! },
    ...(o.agents ? { agents: o.agents.split(',').map((s) => s.trim()) } : {}),
    enabled: !o.disabled,
    ...(o.timeout ? { timeout: o.timeout } : {}),
    prompt,
  });
  const def = parseFlowFile(text, file);
  checkTarget(def, await known(ctx));
  await ensurePrivateFolder(path.dirname(file));
  await writeFileAtomic(file, text);
  return def;
}

/** The flows as the supervisor sees them when it runs; else from the files and the state file. */
export async function flows(ctx: Context): Promise<FlowView[]> {
  const { clientFor } = await import('../api/connect.js');
  const live = await clientFor(ctx)
    .call<FlowView[]>('GET', '/v1/flows')
    .catch(() => null);
  if (live) return live;
  const { readFlowState } = await import('../flows/scheduler.js');
  const state = await readFlowState(ctx.jaggersDir);
  const k = await known(ctx);
  return (await listFlows(ctx.jaggersDir)).map((f) => {
    let problem = f.error;
    if (f.def && !problem)
      try {
        checkTarget(f.def, k);
      } catch (e) {
        problem = (e as Error).message;
      }
    const st = state[f.name];
    return {
      name: f.name,
      file: path.relative(ctx.projectRoot, f.file),
      schedule: f.def?.schedule ?? null,
      target: f.def?.target ?? null,
      enabled: f.def?.enabled ?? false,
      next:
        problem || !f.def?.enabled
          ? null
          : (checkSchedule(f.def.schedule, f.def.timezone ?? undefined, f.file)
              .nextRun()
              ?.toISOString() ?? null),
      last: st?.last ? { ...st.last, state: null } : null,
      runs: st?.runs ?? 0,
      problem: problem ?? null,
    };
  });
}

export function renderFlows(list: FlowView[]): string {
  if (list.length === 0) return 'no flows (add one with `jaggers flow add`)\n';
  return renderTable(
    ['FLOW', 'SCHEDULE', 'RUNS AS', 'ENABLED', 'NEXT', 'LAST RUN'],
    list.map((f) => [
      f.name,
      f.schedule ?? '-',
      f.target ? `${f.target.kind} ${f.target.name}` : '-',
      f.problem ? 'INVALID' : f.enabled ? 'yes' : 'no',
      f.next ?? '-',
      f.problem ? f.problem.split('\n')[0]! : f.last ? `${f.last.id} ${f.last.state ?? ''} (${f.last.how}, ${f.runs} runs)`.replace('  ', ' ') : '-',
    ]),
  );
}

export async function showFlow(ctx: Context, name: string): Promise<{ view: FlowView | null; def: FlowDef }> {
  const def = await loadFlow(ctx.jaggersDir, name);
  const view = (await flows(ctx)).find((f) => f.name === name) ?? null;
  return { view, def };
}

export function renderFlow1(ctx: Context, r: { view: FlowView | null; def: FlowDef }): string {
  const d = r.def;
  const v = r.view;
  return [
    `flow ${d.name} (${path.relative(ctx.projectRoot, d.file)})${d.enabled ? '' : ' (disabled)'}`,
    `schedule: ${d.schedule}${d.timezone ? ` (${d.timezone})` : ''}${v?.next ? `; next run ${v.next}` : ''}`,
    `runs as: ${d.target.kind === 'workflow' ? `workflow ${d.target.name}${d.agents ? ` with ${d.agents.join(', ')}` : ''}` : `a job for ${d.target.kind} ${d.target.name}`}${d.timeout ? `, ${d.timeout} s at most` : ''}`,
    `last run: ${v?.last ? `${v.last.id} ${v.last.state ?? ''} (${v.last.how}, at ${v.last.tick}); ${v.runs} runs` : 'none'}`,
    ...(v?.problem ? [`problem: ${v.problem}`] : []),
    '',
    d.prompt,
    '',
  ].join('\n');
}

export async function runFlow(ctx: Context, name: string): Promise<FlowView> {
  return withApi(ctx, (api) => api.call<FlowView>('POST', `/v1/flows/${encodeURIComponent(name)}/run`));
}

export async function setEnabled(ctx: Context, name: string, enabled: boolean): Promise<{ file: string; changed: boolean }> {
  await loadFlow(ctx.jaggersDir, name);
  const file = flowFile(ctx.jaggersDir, name);
  const text = await readFile(file, 'utf8');
  const next = withEnabled(text, enabled, file);
  parseFlowFile(next, file);
  if (next !== text) await writeFileAtomic(file, next);
  return { file, changed: next !== text };
}

export async function removeFlow(ctx: Context, name: string): Promise<string> {
  const file = flowFile(ctx.jaggersDir, name);
  if (!(await stat(file).catch(() => null))) {
    const names = (await listFlows(ctx.jaggersDir)).map((f) => f.name);
    throw new JaggersError('E_FLOW_UNKNOWN', `flow rm: no flow ${JSON.stringify(name)} (${file}); flows: ${names.join(', ') || 'none'}`);
  }
  await rm(file);
  return file;
}
