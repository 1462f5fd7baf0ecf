// A workflow definition: the data a built-in (machines/workflows/) or a project's
// `.jaggers/workflows/<name>.yaml` holds. It is validated here and compiled into an XState machine by
// machines/workflow.machine.ts, the same shape for both.
import { z } from 'zod';
import { isName, own } from '../ids.js';

export const NAME = /^[a-z][a-z0-9_-]{0,39}$/;
/** Workflow, role and step names: lower-case, and within the one name rule (src/ids.ts: never `constructor`). */
const nameOf = (what: string) =>
  z
    .string()
    .regex(NAME, `${what} must be lowercase letters, digits, - or _, starting with a letter (at most 40)`)
    .refine(isName, `${what} must not be a name every object has (constructor...)`);

/** A test on the latest reply of one or more steps: all of them must pass. */
export const conditionSchema = z
  .object({
    /** The reply contains this text (case-insensitive). */
    contains: z.string().min(1).optional(),
    /** The reply matches this regular expression (multiline, case-insensitive). */
    matches: z.string().min(1).optional(),
    /** Whose latest replies are tested: default the step's own. */
    of: z.array(nameOf('a step id')).min(1).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if ((c.contains === undefined) === (c.matches === undefined))
      ctx.addIssue({ code: 'custom', message: 'give exactly one of `contains` or `matches`', input: c });
    if (c.matches !== undefined) {
      try {
        new RegExp(c.matches, 'im');
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['matches'], message: `not a valid regular expression: ${(e as Error).message}`, input: c.matches });
      }
    }
  });

export const stepSchema = z
  .object({
    id: nameOf('a step id'),
    /** One of the workflow's `agents` (a role, bound to a real agent when the workflow runs). */
    agent: nameOf('an agent role'),
    /** The work, a template: see TEMPLATE_VARIABLES. */
    prompt: z.string().min(1, 'the prompt is empty'),
    /** Earlier steps whose latest replies this step reads (listed for it by `{{reads}}`). */
    reads: z.array(nameOf('a step id')).default([]),
    /** Seconds the turn may take; default the workflow's `timeout`. */
    timeout: z.number().positive().max(86_400).optional(),
    /** `headless`: run this step with the profile's headless arguments, in the same pinned conversation. */
    mode: z.enum(['pane', 'headless']).default('pane'),
    /** Leave the loop this step is in (go on after it) once this holds after the step. */
    until: conditionSchema.optional(),
    /** After this step go back to `back`, at most `max` times; then go on (or fail with `onLimit: fail`). */
    loop: z
      .object({
        back: nameOf('a step id'),
        max: z.number().int().min(1).max(100),
        onLimit: z.enum(['done', 'fail']).default('done'),
      })
      .strict()
      .optional(),
  })
  .strict();

export const workflowSchema = z
  .object({
    name: nameOf('the workflow name'),
    description: z.string().default(''),
    /** The roles, in the order `--agents a,b` binds them to agents. */
    agents: z.array(nameOf('an agent role')).min(1).max(8),
    /** Seconds a turn may take unless its step says otherwise. */
    timeout: z.number().positive().max(86_400).default(600),
    steps: z.array(stepSchema).min(1).max(50),
  })
  .strict()
  .superRefine((w, ctx) => {
    const ids = new Map<string, number>();
    w.steps.forEach((s, i) => {
      if (ids.has(s.id)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'id'], message: `step id "${s.id}" is used twice`, input: s.id });
      ids.set(s.id, i);
    });
    const roles = new Set(w.agents);
    if (roles.size !== w.agents.length) ctx.addIssue({ code: 'custom', path: ['agents'], message: 'a role is listed twice', input: w.agents });
    const known = (id: string) => ids.has(id);
    w.steps.forEach((s, i) => {
      if (!roles.has(s.agent))
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'agent'],
          message: `"${s.agent}" is not one of the workflow's agents (${w.agents.join(', ')})`,
          input: s.agent,
        });
      s.reads.forEach((r, j) => {
        if (!known(r))
          ctx.addIssue({ code: 'custom', path: ['steps', i, 'reads', j], message: `no step "${r}" (steps: ${[...ids.keys()].join(', ')})`, input: r });
      });
      s.until?.of?.forEach((r, j) => {
        if (!known(r)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'until', 'of', j], message: `no step "${r}"`, input: r });
      });
      if (s.loop) {
        const back = ids.get(s.loop.back);
        if (back === undefined || back > i)
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'loop', 'back'],
            message: 'must name this step or an earlier one',
            input: s.loop.back,
          });
      }
      if (s.until && !loopAround(w.steps, i))
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'until'],
          message: 'only a step inside a loop (between a `loop.back` target and its step) can have `until`',
          input: s.until,
        });
      for (const v of templateVariables(s.prompt)) {
        const problem = checkVariable(v, { steps: ids, roles });
        if (problem) ctx.addIssue({ code: 'custom', path: ['steps', i, 'prompt'], message: problem, input: `{{${v}}}` });
      }
    });
  });

export type WorkflowDef = z.output<typeof workflowSchema>;
export type WorkflowInput = z.input<typeof workflowSchema>;
export type StepDef = z.output<typeof stepSchema>;
export type Condition = z.output<typeof conditionSchema>;

/** The loop a step is in: the innermost `[start, end]` with a step at `end` going back to `start`. */
export function loopAround(steps: readonly StepDef[], i: number): { start: number; end: number } | null {
  let best: { start: number; end: number } | null = null;
  steps.forEach((s, end) => {
    if (!s.loop) return;
    const start = steps.findIndex((x) => x.id === s.loop!.back);
    if (start < 0 || start > i || end < i) return;
    if (!best || end - start < best.end - best.start) best = { start, end };
  });
  return best;
}

export const TEMPLATE_VARIABLES = [
  ['task', 'the task text given to `jaggers run --task`'],
  ['task_id', 'the task id'],
  ['workflow', 'the workflow name'],
  ['agent', 'the agent this step goes to'],
  ['step', 'this step id'],
  ['round', 'the round of the loop this step is in (1 the first time)'],
  ['max_rounds', "the loop's limit"],
  ['reads', 'a list of the replies this step reads, one line each: the step, its agent and the file'],
  ['reply.<step>', 'the file of the latest reply of that step (relative to the project)'],
  ['agent.<role>', 'the agent bound to that role'],
] as const;

/** `{{ name }}` occurrences in a template, without braces and spaces. */
export function templateVariables(template: string): string[] {
  return [...template.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]!);
}

function checkVariable(v: string, o: { steps: Map<string, number>; roles: Set<string> }): string | null {
  if (['task', 'task_id', 'workflow', 'agent', 'step', 'round', 'max_rounds', 'reads'].includes(v)) return null;
  const [head, rest] = [v.slice(0, v.indexOf('.')), v.slice(v.indexOf('.') + 1)];
  if (v.includes('.') && head === 'reply') return o.steps.has(rest) ? null : `{{${v}}}: no step "${rest}" (steps: ${[...o.steps.keys()].join(', ')})`;
  if (v.includes('.') && head === 'agent') return o.roles.has(rest) ? null : `{{${v}}}: no agent role "${rest}" (roles: ${[...o.roles].join(', ')})`;
  return `unknown template variable {{${v}}} (known: ${TEMPLATE_VARIABLES.map(([n]) => `{{${n}}}`).join(', ')})`;
}

/** Values for one step's template. Missing replies read as `(none yet)`. */
export interface TemplateValues {
  task: string;
  taskId: string;
  workflow: string;
  agent: string;
  step: string;
  round: number;
  maxRounds: number | null;
  reads: string;
  replies: Record<string, string>;
  roles: Record<string, string>;
}

export function renderTemplate(template: string, v: TemplateValues): string {
  return template.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (whole, name: string) => {
    switch (name) {
      case 'task':
        return v.task;
      case 'task_id':
        return v.taskId;
      case 'workflow':
        return v.workflow;
      case 'agent':
        return v.agent;
      case 'step':
        return v.step;
      case 'round':
        return String(v.round);
      case 'max_rounds':
        return v.maxRounds === null ? '(no limit)' : String(v.maxRounds);
      case 'reads':
        return v.reads;
    }
    if (name.startsWith('reply.')) return own(v.replies, name.slice(6)) ?? '(none yet)';
    if (name.startsWith('agent.')) return own(v.roles, name.slice(6)) ?? whole;
    return whole;
  });
}

/** Whether a reply passes a condition's test. */
export function conditionHolds(c: Condition, reply: string): boolean {
  if (c.contains !== undefined) return reply.toLowerCase().includes(c.contains.toLowerCase());
  return new RegExp(c.matches!, 'im').test(reply);
}
