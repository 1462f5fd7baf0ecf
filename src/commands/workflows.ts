// `workflows` and `workflow show`: the built-in and project workflows, read from files (no supervisor).
import path from 'node:path';
import type { Context } from '../context.js';
import type { WorkflowDef } from '../workflows/schema.js';
import { listWorkflows, loadWorkflow, workflowYaml, type LoadedWorkflow, type WorkflowListing } from '../workflows/load.js';
import { renderTable } from './render.js';

export async function workflows(ctx: Context): Promise<WorkflowListing[]> {
  return listWorkflows(ctx.jaggersDir);
}

const where = (ctx: Context, source: string) => (source === 'built-in' ? source : path.relative(ctx.projectRoot, source));

export function renderWorkflows(ctx: Context, list: WorkflowListing[]): string {
  const rows = list.map((w) => [
    w.name,
    w.roles.join(',') || '-',
    w.error ? '-' : String(w.steps),
    `${where(ctx, w.source)}${w.overrides ? ' (overrides the built-in)' : ''}`,
    w.error ? `INVALID: ${w.error.split('\n')[0]!.replace(/^.*?: /, '')}` : w.description,
  ]);
  return renderTable(['WORKFLOW', 'ROLES', 'STEPS', 'SOURCE', 'DESCRIPTION'], rows);
}

export async function showWorkflow(ctx: Context, name: string): Promise<LoadedWorkflow> {
  return loadWorkflow(ctx.jaggersDir, name);
}

export function renderWorkflow(ctx: Context, w: LoadedWorkflow): string {
  const d: WorkflowDef = w.def;
  const lines = [
    `workflow ${d.name} (${where(ctx, w.source)}): ${d.description}`,
    `roles: ${d.agents.join(', ')}; a turn may take ${d.timeout} s unless its step says`,
  ];
  d.steps.forEach((s, i) => {
    const more = [
      s.reads.length ? `reads ${s.reads.join(', ')}` : '',
      s.mode === 'headless' ? 'headless' : '',
      s.timeout ? `timeout ${s.timeout} s` : '',
      s.until
        ? `until ${s.until.contains !== undefined ? `contains ${JSON.stringify(s.until.contains)}` : `matches /${s.until.matches}/`}${s.until.of ? ` in ${s.until.of.join(' and ')}` : ''}`
        : '',
      s.loop ? `then back to ${s.loop.back} (at most ${s.loop.max} times; then ${s.loop.onLimit === 'fail' ? 'fail' : 'go on'})` : '',
    ].filter(Boolean);
    lines.push('', `${i + 1}. ${s.id} -> ${s.agent}${more.length ? ` (${more.join('; ')})` : ''}`, ...s.prompt.split('\n').map((l) => `   | ${l}`));
  });
  return `${lines.join('\n')}\n`;
}

export function renderWorkflowYaml(w: LoadedWorkflow): string {
  return workflowYaml(w.def);
}
