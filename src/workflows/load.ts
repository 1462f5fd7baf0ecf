// TEMPORARY: replaced by the helper's version on merge.
import { BUILTIN_WORKFLOWS } from '../../machines/workflows/index.js';
import { JaggersError } from '../errors.js';
import { workflowSchema, type WorkflowDef } from './schema.js';

export async function loadWorkflow(_jaggersDir: string, name: string): Promise<{ def: WorkflowDef; source: string }> {
  const b = (BUILTIN_WORKFLOWS as Record<string, { definition: unknown }>)[name];
  if (!b) throw new JaggersError('E_WORKFLOW_UNKNOWN', `no workflow ${name}`);
  return { def: workflowSchema.parse(b.definition), source: 'built-in' };
}
export function bindRoles(def: WorkflowDef, agents: string[] | undefined, team: string[]): Record<string, string> {
  const list = agents ?? team.slice(0, def.agents.length);
  return Object.fromEntries(def.agents.map((r, i) => [r, list[i]!]));
}
export function dryRunPrompts(
  _def: WorkflowDef,
  _roles: Record<string, string>,
  _task: string,
  _id: string,
): { seq: number; step: string; agent: string; prompt: string }[] {
  return [];
}
