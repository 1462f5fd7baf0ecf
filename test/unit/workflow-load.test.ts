// Workflow files: built-ins, a project's YAML (replacing a built-in of the same name), errors that name
// the file, line, column and field, role binding and the dry run's prompts.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_WORKFLOWS } from '../../machines/workflows/index.js';
import { bindRoles, dryRunPrompts, listWorkflows, loadWorkflow, parseWorkflowFile, workflowYaml } from '../../src/workflows/load.js';
import { TEMPLATE_VARIABLES, workflowSchema } from '../../src/workflows/schema.js';

let dir: string;
const wfDir = () => path.join(dir, 'workflows');
const put = async (name: string, text: string) => {
  await mkdir(wfDir(), { recursive: true });
  const f = path.join(wfDir(), name);
  await writeFile(f, text);
  return f;
};
const errorOf = async (p: Promise<unknown>) =>
  (await p.then(
    () => null,
    (e: Error & { code?: string }) => e,
  ))!;

const REVIEW = `description: build, then check until it holds
agents: [builder, checker]
timeout: 120
steps:
  - id: build
    agent: builder
    prompt: |
      {{task}}
  - id: check
    agent: checker
    reads: [build, fix]
    prompt: |
      Check this:
      {{reads}}
      Say OK on a line of its own when it holds.
    until: { matches: '^OK$' }
  - id: fix
    agent: builder
    reads: [check]
    prompt: "Fix what {{agent.checker}} found in {{reply.check}} (round {{round}} of {{max_rounds}})."
    loop: { back: check, max: 2 }
`;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-wf-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('workflow files', () => {
  it('every built-in validates and comes back the same through YAML', () => {
    for (const [name, b] of Object.entries(BUILTIN_WORKFLOWS)) {
      const def = workflowSchema.parse(b.definition);
      expect(def.name).toBe(name);
      expect(parseWorkflowFile(workflowYaml(def), `/x/${name}.yaml`)).toEqual(def);
    }
  });

  it('a project file loads (its name from the file), and one named like a built-in replaces it', async () => {
    const file = await put('review.yaml', REVIEW);
    const r = await loadWorkflow(dir, 'review');
    expect(r.source).toBe(file);
    expect(r.def.name).toBe('review');
    expect(r.def.steps.map((s) => s.id)).toEqual(['build', 'check', 'fix']);
    expect((await loadWorkflow(dir, 'collaborative')).source).toBe('built-in');
    await put('collaborative.yml', REVIEW.replace('description:', 'name: collaborative\ndescription:'));
    expect((await loadWorkflow(dir, 'collaborative')).def.agents).toEqual(['builder', 'checker']);
    const list = await listWorkflows(dir);
    expect(list.find((w) => w.name === 'collaborative')).toMatchObject({ overrides: true, roles: ['builder', 'checker'], error: null });
    expect(list.find((w) => w.name === 'review')).toMatchObject({ overrides: false, steps: 3 });
    expect(list.filter((w) => w.name === 'collaborative')).toHaveLength(1);
  });

  it('a YAML syntax error names the file, line and column', async () => {
    const file = await put('bad.yaml', 'agents: [a\nsteps:\n  - id: x\n');
    const e = await errorOf(loadWorkflow(dir, 'bad'));
    expect(e.code).toBe('E_WORKFLOW_INVALID');
    expect(e.message).toMatch(new RegExp(`^${file}: not valid YAML: line \\d+, column \\d+: `));
  });

  it('type errors name the file, line, column, field and value; unknown fields are named where they are', async () => {
    const file = await put(
      'review.yaml',
      REVIEW.replace('timeout: 120', 'timeout: soon\ncolour: blue').replace('    reads: [check]', '    reads: [check]\n    wait: 3'),
    );
    const e = await errorOf(loadWorkflow(dir, 'review'));
    expect(e.code).toBe('E_WORKFLOW_INVALID');
    const text = await readFile(file, 'utf8');
    const lineOf = (s: string) => text.split('\n').findIndex((l) => l.includes(s)) + 1;
    expect(e.message.split('\n').sort()).toEqual(
      [
        `${file}: line 3, column 10: field \`timeout\`: Invalid input: expected number, received string, got "soon" (string)`,
        `${file}: line 4, column 1: field \`colour\`: not a field of a workflow (fields: name, description, agents, timeout, steps)`,
        `${file}: line ${lineOf('wait: 3')}, column 5: field \`steps[2].wait\`: not a field of a workflow step (fields: id, agent, prompt, reads, timeout, mode, until, loop)`,
      ].sort(),
    );
  });

  it('errors across fields name the line and field too, every one of them', async () => {
    const file = await put(
      'review.yaml',
      REVIEW.replace('agent: checker', 'agent: critic').replace('back: check', 'back: nowhere').replace('{{reads}}', '{{readz}}'),
    );
    const e = await errorOf(loadWorkflow(dir, 'review'));
    const lines = e.message.split('\n');
    // A loop that names no step is no loop: the `until` inside it is out of place too.
    expect(lines, e.message).toHaveLength(4);
    expect(lines).toContain(
      `${file}: line 10, column 12: field \`steps[1].agent\`: "critic" is not one of the workflow's agents (builder, checker), got "critic" (string)`,
    );
    expect(lines).toContain(`${file}: line 21, column 19: field \`steps[2].loop.back\`: must name this step or an earlier one, got "nowhere" (string)`);
    expect(lines.find((l) => l.includes('steps[1].prompt'))).toMatch(
      /^\S+: line 12, column 13: field `steps\[1\]\.prompt`: unknown template variable \{\{readz\}\} \(known: \{\{task\}\}, .*\), got "Check this/,
    );
    expect(lines.find((l) => l.includes('steps[1].until'))).toMatch(/: line 16, column 12: field `steps\[1\]\.until`: only a step inside a loop/);
  });

  it('a name that is not the file name, a file that is not a mapping, and an unknown workflow', async () => {
    await put('one.yaml', REVIEW.replace('description:', 'name: two\ndescription:'));
    expect((await errorOf(loadWorkflow(dir, 'one'))).message).toMatch(/line 1, column 7: field `name`: must be the file's name "one", got "two"/);
    await put('list.yaml', '- a\n- b\n');
    expect((await errorOf(loadWorkflow(dir, 'list'))).message).toMatch(/list\.yaml: a workflow file must be a mapping/);
    const e = await errorOf(loadWorkflow(dir, 'nope'));
    expect(e.code).toBe('E_WORKFLOW_UNKNOWN');
    expect(e.message).toMatch(/no workflow "nope": workflows are adversarial, collaborative, handoff, handshake, list, one, troubleshoot/);
    // Invalid files are listed with their error, not thrown.
    const list = await listWorkflows(dir);
    expect(list.find((w) => w.name === 'list')!.error).toMatch(/must be a mapping/);
  });

  it('binds roles to --agents in order, else to the first agents of the team', async () => {
    const { def } = await loadWorkflow(dir, 'collaborative');
    expect(bindRoles(def, ['y', 'x'], ['x', 'y'])).toEqual({ a: 'y', b: 'x' });
    expect(bindRoles(def, undefined, ['x', 'y', 'z'])).toEqual({ a: 'x', b: 'y' });
    expect(bindRoles(def, ['claude', 'x'], ['x'], ['claude'])).toEqual({ a: 'claude', b: 'x' });
    expect(() => bindRoles(def, ['x'], ['x', 'y'])).toThrow(/collaborative has 2 roles \(a, b\): --agents must name 2 agents, got 1 \(x\)/);
    expect(() => bindRoles(def, ['x', 'nobody'], ['x', 'y'], ['claude'])).toThrow(/unknown agent "nobody": agents are x, y \(or a profile.*: claude\)/);
    expect(() => bindRoles(def, undefined, ['x'])).toThrow(/needs 2 agents \(a, b\) and the team has 1 \(x\): name them with --agents/);
  });

  it('the dry run gives the first pass: each step once, earlier replies as placeholders', async () => {
    const { def } = await loadWorkflow(dir, 'collaborative');
    const p = await dryRunPrompts(def, { a: 'alpha', b: 'beta' }, 'count words', 't-1');
    expect(p.map((x) => [x.seq, x.step, x.agent])).toEqual([
      [1, 'propose', 'alpha'],
      [2, 'critique', 'beta'],
      [3, 'synthesize', 'alpha'],
    ]);
    expect(p[0]!.prompt).toContain('count words');
    expect(p[1]!.prompt).toContain('- propose (by alpha): <reply of propose>');
    expect(p[2]!.prompt).toContain('<reply of critique>');
    await put('review.yaml', REVIEW);
    const r = await dryRunPrompts((await loadWorkflow(dir, 'review')).def, { builder: 'a', checker: 'b' }, 'x', 't-2');
    expect(r.map((x) => x.step)).toEqual(['build', 'check', 'fix']);
    expect(r[2]!.prompt).toBe('Fix what b found in <reply of check> (round 1 of 3).');
  });

  it("docs/workflows.md's example file is valid, and its dry run shows every step once, past the loop", async () => {
    const doc = await readFile(path.join(import.meta.dirname, '..', '..', 'docs', 'workflows.md'), 'utf8');
    const text = /```yaml\n(description: build it[\s\S]*?)```/.exec(doc)![1]!;
    const def = parseWorkflowFile(text, '/p/.jaggers/workflows/review.yaml');
    const p = await dryRunPrompts(def, { builder: 'a', checker: 'b' }, 'T', 't-1');
    expect(p.map((x) => x.step)).toEqual(['build', 'check', 'fix', 'summary']);
  });

  it('docs/workflows.md describes every template variable', async () => {
    const doc = await readFile(path.join(import.meta.dirname, '..', '..', 'docs', 'workflows.md'), 'utf8');
    for (const [name] of TEMPLATE_VARIABLES) expect(doc, name).toContain(`{{${name}}}`);
  });
});
