import { z } from 'zod';
import { JaggersError } from '../errors.js';
import { isName, NAME_RULE } from '../ids.js';
import { parseJsonText, validate } from '../validate.js';
import { branchNameProblem } from '../git/ref-format.js';
import { PricesSchema } from '../usage/prices.js';
import { BudgetSchema, CompactAtSchema } from '../usage/budget-schema.js';
import { ContextWindowsSchema } from '../usage/context.js';
import { HostsSchema } from '../hosts/schema.js';

/** An agent's nice value: 0 (as jaggers runs) to 19 (only what nothing else wants). */
const NiceSchema = z.number().int().min(0).max(19);

export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const AgentSchema = z.strictObject({
  name: z.string().regex(AGENT_NAME, 'must be 1-32 lower-case letters, digits, - or _').refine(isName, `must be ${NAME_RULE}`),
  profile: z.string().min(1).refine(isName, `must be a profile name: ${NAME_RULE}`),
  args: z.array(z.string()).default([]),
  cwd: z.string().optional(),
  env: z.record(z.string(), z.string()).default({}),
  /** Register jaggers' MCP server in this agent (when its profile says how); false: the agent uses the commands. */
  mcp: z.boolean().optional(),
  /** Install its CLI's native hooks (where its profile has them); false: read from the state file and screen only. */
  hooks: z.boolean().optional(),
  /** Its CPU priority, as `nice` takes it (0-19; default the project's, else 5): docs/agents.md, "CPU priority". */
  nice: NiceSchema.optional(),
  /** `worktree`: the agent works in a git worktree of its own (`.jaggers/worktrees/<name>`, branch `jaggers/<name>`). */
  isolation: z.enum(['shared', 'worktree']).optional(),
  /** The branch or commit its worktree starts from when it is made (default: the checkout's current branch). */
  base: z.string().min(1).max(256).optional(),
  /**
   * Another agent of the team, or a profile (an idle agent of it, else a new worker): while this one is
   * `limited`, its waiting jobs and handoffs move there (docs/limits.md).
   */
  fallback: z.string().min(1).refine(isName, `must be an agent's or a profile's name: ${NAME_RULE}`).optional(),
  /** The watchdog, for this agent: seconds busy with no output and no hook event before it counts as stuck. */
  stuckAfter: z.number().positive().max(86_400).optional(),
  /** What the watchdog does besides telling: `interrupt` presses the CLI's own interrupt keys once. */
  onStuck: z.enum(['notify', 'interrupt']).optional(),
  /** The agent's budget: its next item waits `over_budget` once its tokens or cost reach it (docs/usage.md). */
  budget: BudgetSchema.optional(),
  /** Context use (percent of its model's window) at which a `context` event goes out; default the project's, else 85. */
  compactAt: CompactAtSchema.optional(),
  /** true: past `compactAt`, the CLI's own compaction command runs as the agent's next item. */
  autoCompact: z.boolean().optional(),
  /** The host it runs on, a name of `hosts` (docs/hosts.md); none: this machine. */
  host: z.string().min(1).max(64).optional(),
});
export type AgentSpec = z.output<typeof AgentSchema>;

export const SIZE = /^(\d{2,4})x(\d{1,4})$/;

export const ProjectSchema = z
  .strictObject({
    session: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, - or _')
      .optional(),
    size: z.string().regex(SIZE, 'must look like 200x50').optional(),
    agents: z.array(AgentSchema).min(1, 'must name at least one agent'),
    /**
     * Run when an agent starts waiting for a person or a turn fails: a shell command line (run with
     * `sh -c`) or an argv; JAGGERS_NOTIFY_AGENT, _STATE, _REASON, _TERMINAL_ID and _TASK are in its environment.
     */
    notify: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
    /** How many worker windows `assign <profile>` may run at once: one number for every profile, or per profile. */
    maxWorkers: z.union([z.number().int().positive(), z.record(z.string(), z.number().int().positive())]).optional(),
    /** false: no agent of this project gets its CLI's native hooks installed (the state file and screen decide). */
    hooks: z.boolean().optional(),
    /** Every agent's CPU priority, as `nice` takes it (0-19, default 5; 0: as jaggers itself runs). */
    nice: NiceSchema.optional(),
    /** The watchdog (docs/limits.md): seconds busy with no output and no hook event before an agent counts as stuck (default 600). */
    stuckAfter: z.number().positive().max(86_400).optional(),
    /** What the watchdog does besides telling (default `notify`); `interrupt` presses the CLI's own interrupt keys once. */
    onStuck: z.enum(['notify', 'interrupt']).optional(),
    /** How a fresh worktree is set up: ignored files copied from the checkout, then a command run once in it. */
    worktree: z
      .strictObject({
        copy: z.array(z.string().min(1).max(4096)).max(200).default([]),
        /** A shell command (`sh -c`) run once in each new worktree before its agent starts (`npm ci`). */
        setup: z.string().min(1).max(4096).optional(),
        /** What each worktree's branch name starts with (default `jaggers/`): `<prefix><agent, job or task id>`. */
        branchPrefix: z
          .string()
          .min(1)
          .max(100)
          .refine((p) => branchNameProblem(`${p}x`) === null, 'must be a prefix git takes in a branch name, such as "agents/" or "jg-"')
          .optional(),
      })
      .optional(),
    /**
     * Prices per model, USD per million tokens (`{"claude-sonnet-4-5": {"input": 3, "output": 15, "cacheRead":
     * 0.3, "cacheWrite": 3.75}}`), over the table jaggers ships (docs/usage.md).
     */
    prices: PricesSchema.optional(),
    /** The whole session's budget (every agent's turns together); agents have their own in their entries. */
    budget: BudgetSchema.optional(),
    /** Context windows per model, in tokens, over the table jaggers ships (docs/usage.md, Context). */
    contextWindows: ContextWindowsSchema.optional(),
    /** Every agent's default `compactAt` and `autoCompact`. */
    compactAt: CompactAtSchema.optional(),
    autoCompact: z.boolean().optional(),
    /** Other machines agents run on, reached with `ssh` (`{"box": {"ssh": "user@host", "dir": "/srv/proj"}}`; docs/hosts.md). */
    hosts: HostsSchema.optional(),
    /**
     * In a host's project only, written by the supervisor that started it (docs/hosts.md): the team's agents
     * that are not on this host, whom its agents may message (their messages wait in the outbox, taken home).
     */
    home: z.strictObject({ agents: z.array(z.string().min(1).max(64)).max(1000) }).optional(),
  })
  .superRefine((p, ctx) => {
    const seen = new Set<string>();
    p.agents.forEach((a, i) => {
      if (seen.has(a.name)) ctx.addIssue({ code: 'custom', path: ['agents', i, 'name'], message: 'must be unique' });
      seen.add(a.name);
      if (a.host !== undefined && !(p.hosts && Object.hasOwn(p.hosts, a.host))) {
        const known = Object.keys(p.hosts ?? {});
        ctx.addIssue({
          code: 'custom',
          path: ['agents', i, 'host'],
          message: known.length ? `must be one of the hosts: ${known.join(', ')}` : 'must name a host of `hosts`, and there is none',
        });
      }
    });
    p.agents.forEach((a, i) => {
      if (a.fallback === undefined) return;
      // A name that is no agent of this file is taken as a profile's (checked when a limit moves work there).
      if (a.fallback === a.name) ctx.addIssue({ code: 'custom', path: ['agents', i, 'fallback'], message: 'must be another agent, or a profile' });
    });
  });
export type ProjectFile = z.output<typeof ProjectSchema>;

export const DEFAULT_MAX_WORKERS = 4;

export function maxWorkersOf(p: Pick<ProjectFile, 'maxWorkers'> | null | undefined, profile: string): number {
  const m = p?.maxWorkers;
  if (typeof m === 'number') return m;
  return m?.[profile] ?? DEFAULT_MAX_WORKERS;
}

/** Validate the text of a jaggers.json; errors name the file, the line and column or the field. */
export async function parseProjectFile(text: string, file: string): Promise<ProjectFile> {
  return validate(ProjectSchema, await parseJsonText(text, file, 'E_PROJECT_INVALID'), file, 'E_PROJECT_INVALID');
}

export function parseSize(s: string, source: string): { width: number; height: number } {
  const m = SIZE.exec(s);
  if (!m) throw new JaggersError('E_USAGE', `${source}: size must look like 200x50, got ${JSON.stringify(s)}`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** `--agents claude,gemini`: each name is both the agent and its profile; `flag` names the option in errors. */
export function adHocAgents(list: string, flag = '--agents'): AgentSpec[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new JaggersError('E_USAGE', `${flag}: no agent names in ${JSON.stringify(list)}`);
  const seen = new Set<string>();
  return names.map((name) => {
    if (!AGENT_NAME.test(name) || !isName(name)) {
      throw new JaggersError('E_USAGE', `${flag}: agent name ${JSON.stringify(name)} must be 1-32 lower-case letters, digits, - or _ (not constructor)`);
    }
    if (seen.has(name))
      throw new JaggersError(
        'E_USAGE',
        `${flag}: ${JSON.stringify(name)} is named twice in ${JSON.stringify(list)}; each agent needs a name of its own (two agents of one profile: give them two names in jaggers.json, each with \`"profile": "${name}"\`)`,
      );
    seen.add(name);
    return { name, profile: name, args: [], env: {} };
  });
}

export function defaultProjectFile(agents: string[]): ProjectFile {
  return { agents: agents.map((a) => ({ name: a, profile: a, args: [], env: {} })) };
}
