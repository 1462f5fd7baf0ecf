// Workflow definitions: the built-ins (machines/workflows/) and a project's
// `.jaggers/workflows/<name>.yaml`, which replaces a built-in of the same name. Parsed with the yaml
// library and validated with zod; an error names the file, the line and column, and the field.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, LineCounter, parseDocument, stringify, type Document } from 'yaml';
import { createActor, fromPromise } from 'xstate';
import { workflowMachine, type TurnInput, type TurnOutput } from '../../machines/workflow.machine.js';
import { BUILTIN_WORKFLOWS } from '../../machines/workflows/index.js';
import { describeValue, JaggersError } from '../errors.js';
import { isName, own } from '../ids.js';
import { boundedLines, formatPath, PROBLEMS_SHOWN, valueAt } from '../validate.js';
import { NAME, stepSchema, workflowSchema, type WorkflowDef } from './schema.js';

export interface LoadedWorkflow {
  def: WorkflowDef;
  /** `built-in`, or the absolute path of the project's file. */
  source: 'built-in' | string;
}

export interface WorkflowListing {
  name: string;
  description: string;
  source: 'built-in' | string;
  roles: string[];
  steps: number;
  /** A project file that replaces a built-in of the same name. */
  overrides: boolean;
  /** A project file that does not load: why. */
  error: string | null;
}

const builtins: Readonly<Record<string, { definition: unknown }>> = BUILTIN_WORKFLOWS;

export function workflowsDir(jaggersDir: string): string {
  return path.join(jaggersDir, 'workflows');
}

/** The project's workflow files, by name (`.yaml` before `.yml`). */
async function projectFiles(jaggersDir: string): Promise<Map<string, string>> {
  const dir = workflowsDir(jaggersDir);
  const names = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [] as string[];
    throw new JaggersError('E_FILE', `${dir}: cannot list workflows: ${e.code ?? e.message}`);
  });
  const out = new Map<string, string>();
  for (const f of names.sort()) {
    const m = /^(.+)\.ya?ml$/.exec(f);
    if (m && !(out.has(m[1]!) && f.endsWith('.yml'))) out.set(m[1]!, path.join(dir, f));
  }
  return out;
}

/** Where a key of a mapping is written (an unknown field). */
function keyLine(doc: Document, lc: LineCounter, at: readonly PropertyKey[], key: string): string | null {
  const map = (at.length ? doc.getIn(at as unknown[], true) : doc.contents) as unknown;
  if (isMap(map)) {
    const pair = map.items.find((x) => (x.key as { value?: unknown } | null)?.value === key);
    const range = (pair?.key as { range?: [number, number, number] } | null)?.range;
    if (range) {
      const pos = lc.linePos(range[0]);
      return `line ${pos.line}, column ${pos.col}`;
    }
  }
  return lineOf(doc, lc, [...at, key]);
}

function lineOf(doc: Document, lc: LineCounter, p: readonly PropertyKey[]): string | null {
  // The deepest node of the path that exists (a missing field points at its parent).
  for (let n = p.length; n >= 0; n--) {
    const node = (n === 0 ? doc.contents : doc.getIn(p.slice(0, n) as unknown[], true)) as { range?: [number, number, number] } | null | undefined;
    if (node?.range) {
      const pos = lc.linePos(node.range[0]);
      return `line ${pos.line}, column ${pos.col}`;
    }
  }
  return null;
}

/** Parse and validate one workflow file; every problem, one per line, with its line and field. */
export function parseWorkflowFile(text: string, file: string): WorkflowDef {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    const lines = doc.errors.map((e) => {
      const at = e.linePos?.[0];
      return `${file}: not valid YAML: ${at ? `line ${at.line}, column ${at.col}: ` : ''}${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
    });
    throw new JaggersError('E_WORKFLOW_INVALID', boundedLines(lines).join('\n'));
  }
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (e) {
    // The yaml library refuses an alias bomb (a few lines that expand to millions of values) here.
    throw new JaggersError('E_WORKFLOW_INVALID', `${file}: not valid YAML: ${(e as Error).message}`);
  }
  if (!isMap(doc.contents) || data === null || typeof data !== 'object')
    throw new JaggersError('E_WORKFLOW_INVALID', `${file}: a workflow file must be a mapping (name, agents, steps), got ${describeValue(data)}`);
  const expected = path.basename(file).replace(/\.ya?ml$/, '');
  const obj = data as Record<string, unknown>;
  if (obj.name === undefined && NAME.test(expected)) obj.name = expected;
  const r = workflowSchema.safeParse(obj);
  const problems: string[] = [];
  if (!r.success) {
    for (const i of r.error.issues) {
      if (i.code === 'unrecognized_keys') {
        // Each unknown key at its own line, named as a field (those past the ones shown only counted: finding a key's line is a search).
        for (const k of i.keys) {
          const p = [...i.path, k];
          if (problems.length >= PROBLEMS_SHOWN) {
            problems.push('');
            continue;
          }
          problems.push(
            `${file}: ${keyLine(doc, lc, i.path, k) ?? ''}: field \`${formatPath(p)}\`: not a field of a workflow${i.path.length ? ' step' : ''} (fields: ${knownFields(i.path)})`,
          );
        }
        continue;
      }
      const where = lineOf(doc, lc, i.path);
      const got = `, got ${describeValue(valueAt(obj, i.path))}`;
      problems.push(`${file}: ${where ? `${where}: ` : ''}field \`${formatPath(i.path)}\`: ${i.message}${got}`);
    }
  } else if (r.data.name !== expected) {
    problems.push(`${file}: ${lineOf(doc, lc, ['name'])}: field \`name\`: must be the file's name "${expected}", got ${describeValue(r.data.name)}`);
  }
  if (problems.length || !r.success) throw new JaggersError('E_WORKFLOW_INVALID', boundedLines(problems).join('\n'));
  return r.data;
}

function knownFields(at: readonly PropertyKey[]): string {
  const shape =
    at.length === 0
      ? workflowSchema.shape
      : at.length === 2
        ? stepSchema.shape
        : at.at(-1) === 'loop'
          ? { back: 0, max: 0, onLimit: 0 }
          : { contains: 0, matches: 0, of: 0 };
  return Object.keys(shape).join(', ');
}

/** Every workflow: built-ins and the project's files (an invalid file is listed with its error). */
export async function listWorkflows(jaggersDir: string): Promise<WorkflowListing[]> {
  const files = await projectFiles(jaggersDir);
  const out: WorkflowListing[] = [];
  for (const [name, b] of Object.entries(builtins)) {
    if (files.has(name)) continue;
    const def = workflowSchema.parse(b.definition);
    out.push({ name, description: def.description, source: 'built-in', roles: def.agents, steps: def.steps.length, overrides: false, error: null });
  }
  for (const [name, file] of files) {
    const overrides = Object.hasOwn(builtins, name);
    try {
      const def = parseWorkflowFile(await readFile(file, 'utf8'), file);
      out.push({ name, description: def.description, source: file, roles: def.agents, steps: def.steps.length, overrides, error: null });
    } catch (e) {
      out.push({ name, description: '', source: file, roles: [], steps: 0, overrides, error: (e as Error).message });
    }
  }
  return out;
}

export async function loadWorkflow(jaggersDir: string, name: string): Promise<LoadedWorkflow> {
  const files = await projectFiles(jaggersDir);
  const file = isName(name) ? files.get(name) : undefined;
  if (file) {
    const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new JaggersError('E_FILE', `${file}: cannot read: ${e.code ?? e.message}`);
    });
    return { def: parseWorkflowFile(text, file), source: file };
  }
  const b = isName(name) ? own(builtins, name) : undefined;
  if (b) return { def: workflowSchema.parse(b.definition), source: 'built-in' };
  const known = [...new Set([...Object.keys(builtins), ...files.keys()])].sort();
  throw new JaggersError(
    'E_WORKFLOW_UNKNOWN',
    `no workflow ${JSON.stringify(name)}: workflows are ${known.join(', ')} (a project's own go in ${workflowsDir(jaggersDir)}/<name>.yaml)`,
  );
}

/**
 * The agents for the workflow's roles: `--agents a,b` in order, else the first agents of the team.
 * Unknown agents name the team's.
 */
export function bindRoles(def: WorkflowDef, agents: string[] | undefined, team: string[], profiles: string[] = []): Record<string, string> {
  const roles = def.agents;
  if (agents) {
    if (agents.length !== roles.length)
      throw new JaggersError(
        'E_USAGE',
        `workflow ${def.name} has ${roles.length} role${roles.length === 1 ? '' : 's'} (${roles.join(', ')}): --agents must name ${roles.length} agent${roles.length === 1 ? '' : 's'}, got ${agents.length} (${agents.join(', ')})`,
      );
    for (const a of agents)
      if (!team.includes(a) && !profiles.includes(a))
        throw new JaggersError(
          'E_AGENT_UNKNOWN',
          `unknown agent ${JSON.stringify(a)}: agents are ${team.join(', ') || 'none'}${profiles.length ? ` (or a profile, started as an agent of that name: ${profiles.join(', ')})` : ''}`,
        );
    return Object.fromEntries(roles.map((r, i) => [r, agents[i]!]));
  }
  if (team.length < roles.length)
    throw new JaggersError(
      'E_USAGE',
      `workflow ${def.name} needs ${roles.length} agents (${roles.join(', ')}) and the team has ${team.length} (${team.join(', ') || 'none'}): name them with --agents`,
    );
  return Object.fromEntries(roles.map((r, i) => [r, team[i]!]));
}

/** The prompts of the first pass (each step as it first runs, in order), with earlier replies as placeholders. */
export async function dryRunPrompts(
  def: WorkflowDef,
  roles: Record<string, string>,
  task: string,
  taskId: string,
): Promise<{ seq: number; step: string; agent: string; prompt: string }[]> {
  const out: { seq: number; step: string; agent: string; prompt: string }[] = [];
  const seen = new Set<string>();
  const stop = new AbortController();
  const machine = workflowMachine(def).provide({
    actors: {
      turn: fromPromise<TurnOutput, TurnInput>(async ({ input }) => {
        // Loops go round to their limits (no reply meets an exit condition); each step is shown once.
        if (input.seq > 2000) {
          stop.abort();
          return new Promise<TurnOutput>(() => {});
        }
        if (!seen.has(input.step)) out.push({ seq: out.length + 1, step: input.step, agent: input.agent, prompt: input.prompt });
        seen.add(input.step);
        return { prompt: `<prompt of ${input.step}>`, reply: `<reply of ${input.step}>`, text: '', job: null };
      }),
    },
  });
  const actor = createActor(machine, { input: { taskId, task, roles } });
  await new Promise<void>((resolve) => {
    stop.signal.addEventListener('abort', () => resolve(), { once: true });
    actor.subscribe((s) => {
      if (s.status !== 'active') resolve();
    });
    actor.start();
  });
  actor.stop();
  return out;
}

/** A definition as YAML: copy a built-in to `.jaggers/workflows/<name>.yaml` and edit it. */
export function workflowYaml(def: WorkflowDef): string {
  return stringify(def, { lineWidth: 0, blockQuote: 'literal' });
}
