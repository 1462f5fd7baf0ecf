// Request bodies and query strings of the local API, validated with zod (errors name the field and value).
import { BUDGET_SCOPES, BudgetSchema } from '../usage/budget-schema.js';
import { z } from 'zod';
import { isAgentRef, isName, JOB_ID, MESSAGE_ID, NAME_RULE, TASK_ID, TASK_ID_RULE } from '../ids.js';
import { USAGE_BY } from '../usage/by.js';
import { AGENT_STATES } from '../states.js';
import { JOB_STATES } from '../sessions/events.js';
import { NAME as WORKFLOW_NAME } from '../workflows/schema.js';

/**
 * Over this, a body that carries a text (a prompt, a message, a handoff) is refused with
 * E_PAYLOAD_TOO_LARGE (a handover file of any size goes by file, not by body).
 */
export const BODY_LIMIT = 32 * 1024 * 1024;
/** Every other route's body (an answer, `up`, `listen`, none at all) is small. */
export const SMALL_BODY_LIMIT = 64 * 1024;
/**
 * A JSON body's shape is checked before it is parsed and validated: at most this deep, with at most
 * this many keys and array items in all (a body of a million unknown keys is refused at once, instead
 * of being parsed, walked and listed key by key in its error).
 */
export const JSON_LIMITS = { depth: 32, members: 10_000 } as const;

const taskId = z.string().regex(TASK_ID, `must be ${TASK_ID_RULE}`);
/** A name or id by the one name rule (src/ids.ts). */
const name = z.string().refine(isName, `must be ${NAME_RULE}`);
const agentRef = z
  .string()
  .min(1, 'must name an agent')
  .max(200)
  .refine(isAgentRef, `must be an agent name, a terminal id or a task's window (agent+task): ${NAME_RULE}`);

/** The names and ids in a route's path. */
export const AgentParams = z.strictObject({ agent: agentRef });
export const IdParams = z.strictObject({ id: name });
export const NameParams = z.strictObject({ name });

export const TaskQuery = z.strictObject({ task: taskId.optional() });

export const ScreenQuery = z.strictObject({
  task: taskId.optional(),
  ansi: z.enum(['0', '1', 'true', 'false']).optional(),
  history: z.coerce.number().int().min(0).max(100_000).optional(),
});

export const STATES = AGENT_STATES;

export const WaitQuery = z.strictObject({
  task: taskId.optional(),
  state: z
    .string()
    .min(1)
    .transform((s) => s.split(','))
    .pipe(z.array(z.enum(STATES)).min(1)),
  timeout: z.coerce.number().positive().max(86_400).default(60),
});

export const InputBody = z.strictObject({
  /** Chosen by the client, so a request sent again after a dropped connection types the text once. */
  id: z.string().regex(JOB_ID, 'must look like j-0123456789ab').optional(),
  text: z.string().min(1, 'must not be empty'),
  task: taskId.optional(),
});

export const AnswerBody = z.strictObject({
  /** The choice's number on the menu, or its label (a unique, case-insensitive part of it). */
  choice: z.string().trim().min(1, 'must not be empty').max(200),
  /** The question and choices the caller saw: the answer is refused if the screen shows another. */
  // (`selected`, where the highlight was, and `layout` are taken and ignored: the highlight may move, the menu may not.)
  expect: z
    .strictObject({
      text: z.string().max(2000),
      choices: z.array(z.string().max(500)).max(50),
      selected: z.number().int().min(0).optional(),
      layout: z.literal('row').optional(),
    })
    .optional(),
  task: taskId.optional(),
});

export const HandoffBody = z.strictObject({
  /** Chosen by the client, so it can follow the handoff again by id (after Ctrl-C, or a dropped connection). */
  id: z.string().regex(JOB_ID, 'must look like j-0123456789ab').optional(),
  agent: agentRef,
  message: z.string().refine((s) => s.trim() !== '', 'must not be empty'),
  from: agentRef.optional(),
  /** The caller's JAGGERS_TERMINAL_ID (an agent handing off from its pane). */
  fromTerminal: agentRef.optional(),
  task: taskId.optional(),
  /** Seconds to wait for the agent to be ready and for its turn. */
  timeout: z.number().positive().max(86_400).optional(),
  wait: z.boolean().default(true),
  headless: z.boolean().default(false),
  /** The workflow whose turn it is (a name of workflows' rule: a project's may have `_`, src/workflows/schema.ts). */
  workflow: z.string().regex(WORKFLOW_NAME).refine(isName, `must be ${NAME_RULE}`).default('handoff'),
  /**
   * Files of the sender's project that the message names (a workflow's turn forwarded from another
   * host): written here beside the handover files, the message pointed at them (src/work/carry.ts).
   */
  files: z
    .array(z.strictObject({ path: z.string().min(1).max(1000), text: z.string() }))
    .max(64)
    .optional(),
});

export const EventsQuery = z.strictObject({
  agent: agentRef.optional(),
  types: z
    .string()
    .transform((s) => s.split(','))
    .optional(),
  since: z.coerce.number().int().nonnegative().optional(),
});

export const ListenBody = z.strictObject({ listen: z.string().min(1), allowRemote: z.boolean().optional() });
/** `POST /v1/web`: the dashboard's listener (default: the one it has, else 127.0.0.1 on a free port). */
export const WebBody = z.strictObject({ listen: z.string().min(1).optional(), allowRemote: z.boolean().optional() });

/** `POST /v1/terminals/:agent/keys`: bytes as typed into a terminal (`ls\r`, `\u001b[A`), sent to the pane as they are. */
export const KeysBody = z.strictObject({
  data: z
    .string()
    .min(1, 'must not be empty')
    .max(16 * 1024),
  task: taskId.optional(),
});

/** A workflow turn of a task: `/v1/tasks/:id/turns/:n/...`. */
export const TurnParams = z.strictObject({ id: name, n: z.coerce.number().int().min(1).max(1_000_000) });

const text = z.string().refine((s) => s.trim() !== '', 'must not be empty');

export const JobBody = z.strictObject({
  /** Chosen by the client, so a request sent again after a dropped connection records the job once. */
  id: z.string().regex(JOB_ID, 'must look like j-0123456789ab').optional(),
  target: agentRef,
  text,
  name: z.string().min(1).max(200).optional(),
  timeout: z
    .number()
    .positive()
    .max(7 * 86_400)
    .optional(),
  from: agentRef.optional(),
  fromTerminal: agentRef.optional(),
  keep: z.boolean().optional(),
  task: taskId.optional(),
  /** A new worker (a profile target) in a git worktree of its own, made from `base` (default: the current branch). */
  worktree: z.boolean().optional(),
  base: z.string().min(1).max(256).optional(),
  /** The job's own budget: `{"tokens": N, "usd": N}` (docs/usage.md, Budgets). */
  budget: BudgetSchema.optional(),
});

/** `POST /v1/outbox/:id/state` (a host's supervisor): how an item taken home stands there; at its end, its code and reply. */
export const OutboxStateBody = z.strictObject({
  state: z.enum(JOB_STATES),
  reason: z.string().max(4000),
  code: z
    .string()
    .regex(/^E_[A-Z_]+$/)
    .optional(),
  reply: z.string().nullable().optional(),
});

export const MessageBody = z.strictObject({
  id: z.string().regex(MESSAGE_ID, 'must look like m-0123abcd').optional(),
  to: agentRef,
  text,
  from: agentRef.optional(),
  fromTerminal: agentRef.optional(),
  task: taskId.optional(),
});

export const JobWaitQuery = z.strictObject({ timeout: z.coerce.number().positive().max(86_400).default(60) });

export const TaskBody = z.strictObject({
  /** Chosen by the client (default a new one); a resent request records the task once. */
  id: taskId.optional(),
  workflow: z.string().min(1).max(64).refine(isName, `must be a workflow name: ${NAME_RULE}`),
  text,
  /** The agents for the workflow's roles, in order (default: the first agents of the team). */
  agents: z.array(agentRef).min(1).max(8).optional(),
  /** Role -> agent, instead of `agents`. */
  roles: z.record(name, agentRef).optional(),
  detached: z.boolean().default(true),
  /** The caller's JAGGERS_TERMINAL_ID: the task's final answer goes to that agent's inbox. */
  fromTerminal: agentRef.optional(),
  /** `jaggers run` sends the definition it loaded (and where from); else the supervisor loads `workflow`. */
  definition: z.record(z.string(), z.unknown()).optional(),
  source: z.string().min(1).max(4096).optional(),
  /** Every agent of the task in one git worktree of its own (`.jaggers/worktrees/<task id>`), made from `base`. */
  worktree: z.boolean().optional(),
  base: z.string().min(1).max(256).optional(),
  /** The task's budget: `{"tokens": N, "usd": N}` (docs/usage.md, Budgets). */
  budget: BudgetSchema.optional(),
});

/** `POST /v1/budgets/raise`: how much more, for which budget. */
export const BudgetRaiseBody = z.strictObject({
  scope: z.enum(BUDGET_SCOPES),
  /** The agent's name, the task's or job's id; none for the session. */
  name: z.string().min(1).max(200).optional(),
  tokens: z.number().int().positive().max(1e15).optional(),
  usd: z.number().positive().finite().max(1e9).optional(),
  by: z.string().min(1).max(200).optional(),
});

export const FollowQuery = z.strictObject({ until: z.enum(['end', 'delivered']).default('end') });

export const UpBody = z.strictObject({
  /** An ad hoc team: comma-separated profile names (`--agents`). */
  agents: z.string().min(1).max(1000).optional(),
  /** Agent window size, `200x50` (`--size`). */
  size: z.string().max(20).optional(),
  /** Open the team for a task: its own windows and conversations. */
  task: taskId.optional(),
  /** With `task`: every agent of the task in one git worktree of its own (`run --worktree`), made from `base`. */
  worktree: z.boolean().optional(),
  base: z.string().min(1).max(256).optional(),
  /** The built-in demo team. */
  demo: z.boolean().optional(),
  /** Reopen a task's agents (`resume`): those its terminals name, each in its pinned conversation. */
  resume: z.boolean().optional(),
  /** Agents by name (`run`): each as jaggers.json or an earlier `up` knows it, else the profile of that name. */
  names: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'must be an agent name'))
    .min(1)
    .max(32)
    .optional(),
});

/** `GET /v1/worktrees/:name/diff`: the patch text too, and the files as they are now (uncommitted changes). */
export const DiffQuery = z.strictObject({
  patch: z.enum(['0', '1', 'true', 'false']).optional(),
  uncommitted: z.enum(['0', '1', 'true', 'false']).optional(),
});

export const MergeBody = z.strictObject({
  mode: z.enum(['merge', 'squash', 'rebase']).optional(),
  into: z.string().min(1).max(256).optional(),
  message: z.string().min(1).max(65_536).optional(),
});

export const ForceBody = z.strictObject({ force: z.boolean().optional() });

/** `GET /v1/usage?by=agent|job|task|session|day|model` (default agent). */
export const UsageQuery = z.strictObject({ by: z.enum(USAGE_BY).default('agent') });
