// Scheduled flows: `.jaggers/flows/<name>.md`, YAML front matter (name, schedule as a cron expression,
// one of agent | profile | workflow, optional agents, enabled, timeout, timezone) and the prompt as the
// body. Parsed with `yaml`, checked with zod and croner; every problem names the file (and the line).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Cron } from 'croner';
import { isMap, parseDocument } from 'yaml';
import { z } from 'zod';
import { describeValue, JaggersError } from '../errors.js';
import { isName, NAME_RULE } from '../ids.js';

export const FLOW_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const FLOW_NAME_RULE = '1-64 lower-case letters, digits, - or _ (and not a name every object has, like constructor)';
const isFlowName = (s: string) => FLOW_NAME.test(s) && isName(s);
/** An agent, profile or workflow the flow runs: by the one name rule. */
const target = z.string().min(1).refine(isName, `must be ${NAME_RULE}`);

const frontSchema = z
  .strictObject({
    name: z.string().refine(isFlowName, `must be ${FLOW_NAME_RULE}`).optional(),
    schedule: z.string().min(1, 'must be a cron expression'),
    agent: target.optional(),
    profile: target.optional(),
    workflow: target.optional(),
    agents: z.array(target).min(1).optional(),
    enabled: z.boolean().default(true),
    timeout: z
      .number()
      .positive()
      .max(7 * 86_400)
      .optional(),
    timezone: z.string().min(1).optional(),
  })
  .superRefine((f, ctx) => {
    const targets = (['agent', 'profile', 'workflow'] as const).filter((k) => f[k] !== undefined);
    if (targets.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: targets.length ? [targets[1]!] : [],
        message: `must name exactly one of agent, profile or workflow${targets.length ? `, got ${targets.join(' and ')}` : ''}`,
      });
    if (f.agents && !f.workflow) ctx.addIssue({ code: 'custom', path: ['agents'], message: 'is for a workflow flow only' });
  });

export interface FlowDef {
  name: string;
  file: string;
  schedule: string;
  target: { kind: 'agent' | 'profile' | 'workflow'; name: string };
  agents: string[] | null;
  enabled: boolean;
  timeout: number | null;
  timezone: string | null;
  prompt: string;
}

export const flowsDir = (jaggersDir: string) => path.join(jaggersDir, 'flows');
export const flowFile = (jaggersDir: string, name: string) => path.join(flowsDir(jaggersDir), `${name}.md`);

const bad = (file: string, what: string) => new JaggersError('E_FLOW_INVALID', `${file}: ${what}`);

/** The front matter's text and where the body starts; a file without one is an error. */
export function splitFrontMatter(text: string, file: string): { yaml: string; body: string; yamlStart: number; yamlEnd: number } {
  const m = /^---[ \t]*\r?\n/.exec(text);
  if (!m) throw bad(file, 'must start with a front matter block: a line `---`, the fields (name, schedule, agent...), a line `---`, then the prompt');
  const close = /^---[ \t]*(\r?\n|$)/m;
  const rest = text.slice(m[0].length);
  const c = close.exec(rest);
  if (!c) throw bad(file, 'the front matter has no closing `---` line');
  return { yaml: rest.slice(0, c.index), body: rest.slice(c.index + c[0].length), yamlStart: m[0].length, yamlEnd: m[0].length + c.index };
}

/** A cron expression croner takes (5 fields, or 6 with seconds first); else an error naming it. */
export function checkSchedule(schedule: string, timezone: string | undefined, where: string): Cron {
  if (timezone !== undefined) {
    // croner takes any text here and fails only when it computes a tick (in the scheduler, at a run).
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
    } catch {
      throw bad(where, `field \`timezone\`: ${JSON.stringify(timezone)} is not a time zone (an IANA name, like Europe/Paris or UTC)`);
    }
  }
  try {
    return new Cron(schedule, { paused: true, ...(timezone ? { timezone } : {}) });
  } catch (e) {
    throw bad(where, `field \`schedule\`: ${JSON.stringify(schedule)} is not a cron expression croner takes (${(e as Error).message})`);
  }
}

export function parseFlowFile(text: string, file: string): FlowDef {
  const stem = path.basename(file, '.md');
  if (!isFlowName(stem)) throw bad(file, `the file name ${JSON.stringify(stem)} must be ${FLOW_NAME_RULE} (then .md)`);
  const { yaml, body } = splitFrontMatter(text, file);
  const lineOffset = text.slice(0, text.indexOf('\n') + 1).length ? 1 : 0;
  const doc = parseDocument(yaml, { prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const line = (e.linePos?.[0]?.line ?? 0) + lineOffset;
    throw bad(`${file}:${line}`, `the front matter is not valid YAML: ${e.message.split('\n')[0]}`);
  }
  if (!isMap(doc.contents)) throw bad(file, 'the front matter must be fields (`name: value` lines)');
  let data: unknown;
  try {
    data = doc.toJS();
  } catch (e) {
    // The yaml library refuses an alias bomb (a few lines that expand to millions of values) here.
    throw bad(file, `the front matter cannot be read: ${(e as Error).message}`);
  }
  const r = frontSchema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.join('.');
    const value = issue.path.reduce<unknown>(
      (v, k) => (v !== null && typeof v === 'object' && Object.hasOwn(v, k) ? (v as Record<PropertyKey, unknown>)[k] : undefined),
      data,
    );
    const node = field ? doc.getIn(issue.path, true) : null;
    const at = node && typeof node === 'object' && 'range' in node && Array.isArray(node.range) ? lineOf(yaml, node.range[0] as number) + lineOffset : null;
    throw bad(
      at ? `${file}:${at}` : file,
      `${field ? `field \`${field}\`: ` : ''}${issue.message}${value !== undefined && field ? `, got ${shown(value)}` : ''}`,
    );
  }
  const f = r.data;
  if (f.name !== undefined && f.name !== stem) throw bad(file, `field \`name\`: ${JSON.stringify(f.name)} must be the file's name, ${JSON.stringify(stem)}`);
  checkSchedule(f.schedule, f.timezone, file);
  const prompt = body.trim();
  if (!prompt) throw bad(file, 'the prompt (the text after the front matter) is empty');
  const kind = f.agent !== undefined ? 'agent' : f.profile !== undefined ? 'profile' : 'workflow';
  return {
    name: stem,
    file,
    schedule: f.schedule,
    target: { kind, name: (f.agent ?? f.profile ?? f.workflow)! },
    agents: f.agents ?? null,
    enabled: f.enabled,
    timeout: f.timeout ?? null,
    timezone: f.timezone ?? null,
    prompt,
  };
}

/** A value as JSON, shortened; one too deep for JSON as describeValue says it. */
function shown(v: unknown): string {
  let t: string;
  try {
    t = JSON.stringify(v) ?? String(v);
  } catch {
    return describeValue(v);
  }
  return t.length > 200 ? `${t.slice(0, 197)}...` : t;
}

const lineOf = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

export interface FlowListing {
  name: string;
  file: string;
  def: FlowDef | null;
  error: string | null;
}

/** Every `.md` file in `.jaggers/flows/`, parsed; a file that does not load is listed with its error. */
export async function listFlows(jaggersDir: string): Promise<FlowListing[]> {
  const dir = flowsDir(jaggersDir);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.md')).sort();
  return Promise.all(
    names.map(async (n) => {
      const file = path.join(dir, n);
      try {
        return { name: n.slice(0, -3), file, def: parseFlowFile(await readFile(file, 'utf8'), file), error: null };
      } catch (e) {
        return { name: n.slice(0, -3), file, def: null, error: (e as Error).message };
      }
    }),
  );
}

export async function loadFlow(jaggersDir: string, name: string): Promise<FlowDef> {
  const file = flowFile(jaggersDir, name);
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw new JaggersError('E_FILE', `${file}: ${e.message}`);
    return null;
  });
  if (text === null) {
    const known = (await listFlows(jaggersDir)).map((f) => f.name);
    throw new JaggersError('E_FLOW_UNKNOWN', `no flow ${JSON.stringify(name)} (${file}); flows: ${known.join(', ') || 'none'}`);
  }
  return parseFlowFile(text, file);
}

/** Check what a flow names exists: an agent of the team, a profile, a workflow. */
export function checkTarget(def: FlowDef, known: { agents: string[]; profiles: string[]; workflows: string[] }): void {
  const { kind, name } = def.target;
  const list = kind === 'agent' ? known.agents : kind === 'profile' ? known.profiles : known.workflows;
  if (!list.includes(name)) throw bad(def.file, `field \`${kind}\`: unknown ${kind} ${JSON.stringify(name)}; ${kind}s are ${list.join(', ') || 'none'}`);
  for (const a of def.agents ?? [])
    if (!known.agents.includes(a) && !known.profiles.includes(a))
      throw bad(def.file, `field \`agents\`: unknown agent ${JSON.stringify(a)}; agents are ${known.agents.join(', ') || 'none'}`);
}

/**
 * The run a restarted scheduler owes: when the first tick after the last run (or after the flow was first
 * seen) is already past, one run, however many ticks were missed; else null.
 */
export function missedTick(cron: Cron, last: Date, now: Date): Date | null {
  const next = cron.nextRun(last);
  return next && next.getTime() <= now.getTime() ? next : null;
}

/** The file with `enabled:` set, the rest of it byte for byte as it was. */
export function withEnabled(text: string, enabled: boolean, file: string): string {
  const { yaml, yamlStart, yamlEnd } = splitFrontMatter(text, file);
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const line = /^enabled[ \t]*:.*$/m;
  const next = line.test(yaml) ? yaml.replace(line, `enabled: ${enabled}`) : `${yaml}${yaml === '' || yaml.endsWith('\n') ? '' : nl}enabled: ${enabled}${nl}`;
  return text.slice(0, yamlStart) + next + text.slice(yamlEnd);
}

/** A new flow file's text. */
export function renderFlow(o: {
  name: string;
  schedule: string;
  target: FlowDef['target'];
  agents?: string[];
  enabled: boolean;
  timeout?: number;
  prompt: string;
}): string {
  const q = (v: string) => JSON.stringify(v);
  const lines = [
    '---',
    `name: ${o.name}`,
    `schedule: ${q(o.schedule)}`,
    `${o.target.kind}: ${q(o.target.name)}`,
    ...(o.agents ? [`agents: [${o.agents.map(q).join(', ')}]`] : []),
    `enabled: ${o.enabled}`,
    ...(o.timeout ? [`timeout: ${o.timeout}`] : []),
    '---',
  ];
  return `${lines.join('\n')}\n${o.prompt.trimEnd()}\n`;
}
