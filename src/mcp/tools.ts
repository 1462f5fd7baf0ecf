// The tools `jaggers mcp` offers: each one is a request to the supervisor's API (or, for read_artifact
// and the texts of inbox messages, a read of a file under .jaggers/ through src/fs/confine.ts). The calling
// agent is the terminal in JAGGERS_TERMINAL_ID: its jobs' results and its messages' replies come back to it.
import path from 'node:path';
import { z } from 'zod';
import { JOB_ID, newJobId, newMessageId, TASK_ID, TASK_ID_RULE } from '../ids.js';
import { FINAL_STATES, isFinalState } from '../states.js';
import type { HandoffResult, HealthView, HostAgentsView, InboxView, JobResultView, JobView, TaskView, TerminalDetail, TerminalView } from '../api/types.js';
import { JaggersError } from '../errors.js';
import { hostOfAgent } from '../api/hosts.js';
import { describeHostDown, mergeAgents } from '../hosts/host-agents.js';
import { readConfined } from '../fs/confine.js';
import { USAGE_BY, type UsageView } from '../usage/report.js';

/** Who calls: the agent in a jaggers pane (from its environment), or nobody known (a person's own client). */
export interface Caller {
  terminalId: string | null;
  agent: string | null;
  task: string | null;
}

export interface ToolDeps {
  /** One API request; `retry` when sending it twice cannot do a thing twice (reads, client-chosen ids). */
  call<T>(method: string, path: string, body: unknown, o: { retry: boolean; signal?: AbortSignal }): Promise<T>;
  caller: Caller;
  projectRoot: string;
  jaggersDir: string;
}

export interface Tool {
  name: string;
  description: string;
  input: z.ZodObject;
  run(deps: ToolDeps, args: never, signal?: AbortSignal): Promise<unknown>;
}

const agent = z.string().min(1).max(128).describe('an agent name from list_agents (or its terminal id)');
const taskId = z
  .string()
  .regex(TASK_ID, `must be ${TASK_ID_RULE}`)
  .describe("a task id (default: your own task, JAGGERS_TASK_ID, when you run in one; else the default team's agents)");
const text = (what: string) =>
  z
    .string()
    .refine((s) => s.trim() !== '', 'must not be empty')
    .describe(what);
const seconds = (what: string, dflt: number, max: number) => z.number().positive().max(max).default(dflt).describe(`${what} (seconds, default ${dflt})`);
const jobId = z.string().regex(JOB_ID, 'must look like j-0123456789ab').describe('a job id, as assign returned it');

const FINAL_JOB = new Set<string>(FINAL_STATES);
const q = encodeURIComponent;
const taskQuery = (task: string | null | undefined) => (task ? `?task=${q(task)}` : '');

/** What an agent needs of a terminal: less than the API's view (no screen lines unless it asks for one agent). */
function brief(t: TerminalView, caller: Caller) {
  return {
    agent: t.agent,
    terminalId: t.terminalId,
    task: t.task,
    profile: t.profile,
    state: t.state,
    since: t.since,
    ...(t.waitingFor ? { waitingFor: t.waitingFor } : {}),
    ...(t.question ? { question: t.question } : {}),
    ...(t.problem ? { problem: t.problem } : {}),
    ...(caller.terminalId && t.terminalId === caller.terminalId ? { you: true } : {}),
  };
}

/**
 * The hosts' agents as the local supervisor has them (each from its host's supervisor, through the
 * forwarded socket: docs/hosts.md); its not answering is said in the answer, never hiding the local agents.
 */
async function hostsOf(deps: ToolDeps): Promise<HostAgentsView[] | { error: string }> {
  try {
    return await deps.call<HostAgentsView[]>('GET', '/v1/hosts/terminals', undefined, { retry: true });
  } catch (e) {
    return { error: `the hosts' agents could not be asked: ${(e as Error).message}` };
  }
}

/** `agents` (the local ones, then the hosts', each with `host`) and, when there are hosts, `hosts`: each one's connection and whether its agents are shown. */
function withHosts(deps: ToolDeps, local: TerminalView[], hosts: HostAgentsView[] | { error: string } | null) {
  const list = Array.isArray(hosts) ? hosts : [];
  const agents = mergeAgents(
    local.map((t) => brief(t, deps.caller)),
    list.map((h) => ({ host: h.host, agents: h.agents?.map((t) => brief(t, deps.caller)) ?? null })),
  );
  if (hosts && !Array.isArray(hosts)) return { agents, hostsError: hosts.error };
  if (!list.length) return { agents };
  return {
    agents,
    hosts: list.map((h) => ({
      host: h.host,
      state: h.state,
      detail: h.detail,
      agents: h.names,
      shown: h.agents !== null,
      ...(h.problem ? { problem: describeHostDown(h) } : {}),
    })),
  };
}

function def<S extends z.ZodObject>(
  name: string,
  description: string,
  input: S,
  run: (deps: ToolDeps, args: z.output<S>, signal?: AbortSignal) => Promise<unknown>,
): Tool {
  return { name, description, input, run: run as Tool['run'] };
}

/** The largest text read_artifact returns at once; `offset` reads on. */
export const ARTIFACT_CHUNK = 256 * 1024;
const MESSAGE_TEXT_MAX = 16 * 1024;

/** Up to `limit` bytes of a file jaggers wrote for agents (src/fs/confine.ts says which), cut back to whole UTF-8 characters. */
export async function readChunk(
  deps: Pick<ToolDeps, 'projectRoot' | 'jaggersDir'>,
  given: string,
  offset: number,
  limit: number,
  what = 'read_artifact',
): Promise<{ path: string; text: string; bytes: number; size: number; next: number | null }> {
  const { path: file, data: buf, size } = await readConfined(deps, given, { what, offset, limit });
  let end = buf.length;
  // Do not end inside a character: step back over continuation bytes to the start of the last one.
  if (offset + end < size) {
    let i = end;
    while (i > 0 && (buf[i - 1]! & 0xc0) === 0x80) i--;
    const lead = buf[i - 1];
    if (lead !== undefined && lead >= 0xc0) {
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
      if (end - (i - 1) < need) end = i - 1;
    }
  }
  return { path: file, text: buf.subarray(0, end).toString('utf8'), bytes: end, size, next: offset + end < size ? offset + end : null };
}

/** A message's text, without its front matter. */
async function messageText(deps: ToolDeps, file: string): Promise<string | null> {
  try {
    const { text } = await readChunk(deps, file, 0, MESSAGE_TEXT_MAX, `read_inbox: message ${file}`);
    const m = /^---\n[\s\S]*?\n---\n/.exec(text);
    return m ? text.slice(m[0].length) : text;
  } catch {
    return null;
  }
}

function me(deps: ToolDeps, op: string): string {
  if (deps.caller.terminalId) return deps.caller.terminalId;
  throw new JaggersError('E_USAGE', `${op}: no JAGGERS_TERMINAL_ID in this MCP server's environment, so it does not know whose inbox to read: name an agent`);
}

/** Paths as the other tools give them: relative to the project. */
const rel = (deps: ToolDeps, p: string) => (path.isAbsolute(p) ? path.relative(deps.projectRoot, p) : p);

const from = (c: Caller) => ({ ...(c.terminalId ? { fromTerminal: c.terminalId } : {}) });

export const TOOLS: Tool[] = [
  def(
    'list_agents',
    "List the agents of this jaggers session: name, state (idle, busy, waiting_input, limited, done, error, exited), task, and which one is you. An agent on another host has `host`; `hosts` says each host's connection, and names the agents of a host that cannot be reached.",
    z.strictObject({ task: taskId.optional() }),
    async (deps, a) => {
      const [list, hosts] = await Promise.all([
        deps.call<TerminalView[]>('GET', `/v1/terminals${taskQuery(a.task)}`, undefined, { retry: true }),
        // A task's agents are this machine's (a task on a host is refused for now).
        a.task ? null : hostsOf(deps),
      ]);
      return withHosts(deps, list, hosts);
    },
  ),
  def(
    'status',
    "One agent's state with the last lines on its screen; without `agent`, the whole session: agents, jobs under way and running workflow tasks.",
    z.strictObject({ agent: agent.optional(), task: taskId.optional() }),
    async (deps, a) => {
      const task = a.task ?? deps.caller.task;
      if (a.agent) {
        // An agent on a host (the records `up` left in .jaggers/hosts/): its host's supervisor, through the local one.
        const on = hostOfAgent(deps, a.agent);
        const where = on ? `/v1/hosts/${q(on.host)}/terminals/${q(a.agent)}` : `/v1/terminals/${q(a.agent)}${taskQuery(task)}`;
        const t = await deps.call<TerminalDetail>('GET', where, undefined, { retry: true });
        return { ...brief(t, deps.caller), ...(on ? { host: on.host } : {}), turns: t.turns, sessionId: t.sessionId, screen: t.now.screenLines.slice(-20) };
      }
      const [health, terms, jobs, tasks, hosts] = await Promise.all([
        deps.call<HealthView>('GET', '/v1/health', undefined, { retry: true }),
        deps.call<TerminalView[]>('GET', '/v1/terminals', undefined, { retry: true }),
        deps.call<JobView[]>('GET', '/v1/jobs', undefined, { retry: true }),
        deps.call<TaskView[]>('GET', '/v1/tasks', undefined, { retry: true }),
        hostsOf(deps),
      ]);
      return {
        session: health.session,
        project: health.project,
        you: deps.caller,
        ...withHosts(deps, terms, hosts),
        jobs: jobs
          .filter((j) => !FINAL_JOB.has(j.state))
          .map((j) => ({ id: j.id, name: j.name, agent: j.agent ?? j.target, state: j.state, reason: j.reason })),
        tasks: tasks.filter((t) => !isFinalState(t.status)).map((t) => ({ id: t.id, workflow: t.workflow, status: t.status, step: t.step, agent: t.agent })),
      };
    },
  ),
  def(
    'handoff',
    "Hand a turn to another agent and wait for its reply (blocking). jaggers writes your message to a handover file, types a pointer into that agent's pinned conversation and returns its reply. For long work, use assign instead.",
    z.strictObject({
      agent,
      message: text('what the agent should do; the full text goes in the handover file'),
      timeout: seconds('how long to wait for the reply', 600, 86_400),
      task: taskId.optional(),
    }),
    async (deps, a, signal) => {
      const task = a.task ?? deps.caller.task ?? undefined;
      // Not to yourself. An agent this supervisor has no terminal of (one on another host, or none) is the
      // handoff's own to judge.
      if (deps.caller.terminalId) {
        const self = await deps
          .call<TerminalView>('GET', `/v1/terminals/${q(a.agent)}${taskQuery(task)}`, undefined, { retry: true, signal })
          .catch((e: unknown) => (e instanceof JaggersError && e.code === 'E_AGENT_UNKNOWN' ? null : Promise.reject(e)));
        if (self?.terminalId === deps.caller.terminalId)
          throw new JaggersError('E_USAGE', `handoff: ${JSON.stringify(a.agent)} is you; hand off to another agent (list_agents)`);
      }
      const r = await deps.call<HandoffResult>(
        'POST',
        '/v1/handoffs',
        {
          agent: a.agent,
          message: a.message,
          timeout: a.timeout,
          ...(task ? { task } : {}),
          ...(deps.caller.terminalId ? { from: deps.caller.terminalId } : {}),
        },
        { retry: false, signal },
      );
      return {
        agent: r.agent,
        task: r.task,
        turn: r.turn,
        reply: r.reply?.text ?? null,
        replyFile: r.reply ? rel(deps, r.reply.artifact) : null,
        handoverFile: rel(deps, r.artifact),
        seconds: Math.round(r.timings.totalMs / 100) / 10,
      };
    },
  ),
  def(
    'assign',
    'Start a background job for an agent and return its job id at once. The agent gets the work when it is free; the result comes back to your inbox as a message (and through wait_job / job_result). The agent may also be a profile name (a worker is started for it).',
    z.strictObject({
      agent,
      message: text('the work to do'),
      name: z.string().min(1).max(200).optional().describe('a short name for the job'),
      timeout: z
        .number()
        .positive()
        .max(7 * 86_400)
        .optional()
        .describe('seconds the job may take once started'),
      worktree: z
        .boolean()
        .optional()
        .describe('for a profile: the new worker works in a git worktree of its own (branch jaggers/<job id>); see worktree_diff and merge_worktree'),
      base: z.string().min(1).max(256).optional().describe("with worktree: the branch or commit it starts from (default: the checkout's current branch)"),
    }),
    async (deps, a, signal) => {
      const j = await deps.call<JobView>(
        'POST',
        '/v1/jobs',
        {
          id: newJobId(),
          target: a.agent,
          text: a.message,
          ...from(deps.caller),
          ...(deps.caller.task ? { task: deps.caller.task } : {}),
          ...(a.name ? { name: a.name } : {}),
          ...(a.timeout ? { timeout: a.timeout } : {}),
          ...(a.worktree ? { worktree: true } : {}),
          ...(a.base ? { base: a.base } : {}),
        },
        { retry: true, signal },
      );
      return {
        job: j.id,
        state: j.state,
        agent: j.agent ?? j.target,
        resultGoesTo: deps.caller.agent ?? (deps.caller.terminalId ? deps.caller.terminalId : 'nobody (no JAGGERS_TERMINAL_ID): use wait_job / job_result'),
      };
    },
  ),
  def(
    'wait_job',
    'Wait until a job ends (or the timeout runs out) and return its state, with the reply when it is done.',
    z.strictObject({ job: jobId, timeout: seconds('how long to wait', 300, 86_400) }),
    async (deps, a, signal) => {
      const j = await deps.call<JobView>('GET', `/v1/jobs/${q(a.job)}/wait?timeout=${a.timeout}`, undefined, { retry: true, signal });
      if (!FINAL_JOB.has(j.state)) return { job: j.id, state: j.state, reason: j.reason, timedOut: true };
      const r = await deps.call<JobResultView>('GET', `/v1/jobs/${q(a.job)}/result`, undefined, { retry: true, signal });
      return { job: j.id, state: j.state, reason: j.reason, agent: j.agent ?? j.target, reply: r.reply, replyFile: r.artifact, timedOut: false };
    },
  ),
  def('job_result', "A job's state now, and its reply once it is done (does not wait).", z.strictObject({ job: jobId }), async (deps, a, signal) => {
    const r = await deps.call<JobResultView>('GET', `/v1/jobs/${q(a.job)}/result`, undefined, { retry: true, signal });
    return {
      job: r.job.id,
      name: r.job.name,
      state: r.job.state,
      reason: r.job.reason,
      agent: r.job.agent ?? r.job.target,
      reply: r.reply,
      replyFile: r.artifact,
    };
  }),
  def(
    'send_message',
    "Send a message to another agent's inbox. It is stored at once and typed into that agent's conversation when it is free, exactly once; its answer comes back to your inbox.",
    z.strictObject({ to: agent, text: text('the message') }),
    async (deps, a, signal) => {
      const m = await deps.call<{ id: string; state: string; toAgent: string; file: string }>(
        'POST',
        '/v1/messages',
        { id: newMessageId(), to: a.to, text: a.text, ...from(deps.caller), ...(deps.caller.task ? { task: deps.caller.task } : {}) },
        { retry: true, signal },
      );
      return { message: m.id, to: m.toAgent, state: m.state, file: m.file };
    },
  ),
  def(
    'read_inbox',
    'The messages sent to you (or to `agent`), newest last, with their texts: job results and messages from other agents. `pending` ones are not yet typed into the conversation.',
    z.strictObject({
      agent: agent.optional(),
      limit: z.number().int().min(1).max(200).default(20).describe('how many of the newest messages (default 20)'),
    }),
    async (deps, a, signal) => {
      const who = a.agent ?? me(deps, 'read_inbox');
      const task = a.agent ? deps.caller.task : null;
      const box = await deps.call<InboxView>('GET', `/v1/terminals/${q(who)}/inbox${taskQuery(task)}`, undefined, { retry: true, signal });
      const newest = [...box.messages].sort((x, y) => x.created.localeCompare(y.created)).slice(-a.limit);
      return {
        agent: box.agent,
        pending: box.pending,
        ...(box.waiting ? { waiting: box.waiting } : {}),
        total: box.messages.length,
        messages: await Promise.all(
          newest.map(async (m) => ({
            id: m.id,
            from: m.fromAgent,
            state: m.state,
            job: m.job,
            created: m.created,
            file: m.file,
            text: await messageText(deps, m.file),
          })),
        ),
      };
    },
  ),
  def(
    'run_workflow',
    'Start a workflow task (collaborative, adversarial, troubleshoot, handshake, handoff, or a project one) and return its task id; `wait` to block until it ends. Its final answer comes back to your inbox.',
    z.strictObject({
      workflow: z.string().min(1).max(64).describe('a workflow name (jaggers workflows)'),
      task: text('what the task is about'),
      agents: z.array(agent).min(1).max(8).optional().describe("agents for the workflow's roles, in order (default: the team's first agents)"),
      wait: z.boolean().default(false).describe('wait for the task to end'),
      timeout: seconds('how long to wait when `wait`', 1800, 86_400),
      worktree: z.boolean().optional().describe("its agents work in one git worktree of the task's own (branch jaggers/<task id>)"),
      base: z.string().min(1).max(256).optional().describe("with worktree: the branch or commit it starts from (default: the checkout's current branch)"),
    }),
    async (deps, a, signal) => {
      const t = await deps.call<TaskView>(
        'POST',
        '/v1/tasks',
        {
          workflow: a.workflow,
          text: a.task,
          ...(a.agents ? { agents: a.agents } : {}),
          detached: true,
          ...from(deps.caller),
          ...(a.worktree ? { worktree: true } : {}),
          ...(a.base ? { base: a.base } : {}),
        },
        { retry: false, signal },
      );
      const v = a.wait ? await deps.call<TaskView>('GET', `/v1/tasks/${q(t.id)}/wait?timeout=${a.timeout}`, undefined, { retry: true, signal }) : t;
      return taskBrief(v);
    },
  ),
  def(
    'task_status',
    "A workflow task's status, its turns (agent, step, state, files) and, when done, its final answer's file.",
    z.strictObject({ task: taskId }),
    async (deps, a, signal) => taskBrief(await deps.call<TaskView>('GET', `/v1/tasks/${q(a.task)}`, undefined, { retry: true, signal })),
  ),
  def(
    'list_worktrees',
    "The agents' and jobs' git worktrees: who works in each, its branch and base, commits since the base, uncommitted changes, whether it is merged.",
    z.strictObject({}),
    async (deps, _a, signal) => deps.call('GET', '/v1/worktrees', undefined, { retry: true, signal }),
  ),
  def(
    'worktree_diff',
    'What an agent (or a job run with worktree) changed in its git worktree against its base: commits, files with lines added and removed, and the patch on request.',
    z.strictObject({
      of: z.string().min(1).max(128).describe('an agent name, or a job id'),
      patch: z.boolean().default(false).describe('include the patch text'),
      uncommitted: z.boolean().default(false).describe('compare the files as they are now, uncommitted changes included'),
    }),
    async (deps, a, signal) =>
      deps.call('GET', `/v1/worktrees/${q(a.of)}/diff?patch=${a.patch ? 1 : 0}&uncommitted=${a.uncommitted ? 1 : 0}`, undefined, { retry: true, signal }),
  ),
  def(
    'merge_worktree',
    "Bring an agent's (or a job's) branch into its base branch: a merge commit, or squash, or rebase. A conflict changes nothing and names the files (E_MERGE_CONFLICT).",
    z.strictObject({
      of: z.string().min(1).max(128).describe('an agent name, or a job id'),
      mode: z.enum(['merge', 'squash', 'rebase']).default('merge'),
      message: z.string().min(1).max(65_536).optional().describe('the commit message'),
    }),
    async (deps, a, signal) =>
      deps.call('POST', `/v1/worktrees/${q(a.of)}/merge`, { mode: a.mode, ...(a.message ? { message: a.message } : {}) }, { retry: false, signal }),
  ),
  def(
    'discard_worktree',
    "Remove an agent's or a job's worktree and its branch; refused while it holds uncommitted or unmerged work unless force, and while an agent or job works in it.",
    z.strictObject({ of: z.string().min(1).max(128).describe('an agent name, or a job id'), force: z.boolean().default(false) }),
    async (deps, a, signal) => deps.call('POST', `/v1/worktrees/${q(a.of)}/discard`, { force: a.force }, { retry: false, signal }),
  ),
  def(
    'gc_worktrees',
    'Remove the worktrees whose agent and job are gone, when clean and merged (force: those with uncommitted or unmerged work too); the others are listed with why they stay.',
    z.strictObject({ force: z.boolean().default(false) }),
    async (deps, a, signal) => deps.call('POST', '/v1/worktrees/gc', { force: a.force }, { retry: false, signal }),
  ),
  def(
    'usage',
    "Tokens (input, output, cache read, cache write) and cost that the agents spent, summed by agent, job, task, session, day or model, from each CLI's own records; a model without a price is named in `unpriced`.",
    z.strictObject({ by: z.enum(USAGE_BY).default('agent').describe('how to group the turns') }),
    async (deps, a) => deps.call<UsageView>('GET', `/v1/usage?by=${a.by}`, undefined, { retry: true }),
  ),
  def(
    'budgets',
    "The budgets (the session's, each agent's, task's and job's) with what each spent; a reached one holds its next item as over_budget until it is raised.",
    z.strictObject({}),
    async (deps) => deps.call('GET', '/v1/budgets', undefined, { retry: true }),
  ),
  def(
    'raise_budget',
    'Raise a budget by tokens and/or usd (a person should agree first): the item it held goes on at once.',
    z.strictObject({
      scope: z.enum(['session', 'agent', 'task', 'job']).describe('which kind of budget'),
      name: z.string().min(1).max(200).optional().describe("the agent's name, or the task's or job's id (none for the session)"),
      tokens: z.number().int().positive().optional().describe('this many more tokens'),
      usd: z.number().positive().optional().describe('this many more US dollars'),
    }),
    async (deps, a, signal) => deps.call('POST', '/v1/budgets/raise', { ...a, by: 'mcp' }, { retry: false, signal }),
  ),
  def(
    'read_artifact',
    `Read a file jaggers wrote in .jaggers/handover/, inbox/ or jobs/ (a handover file, a reply, a message, a task's final answer, a job's prompt), by the path another tool gave. Returns up to ${ARTIFACT_CHUNK / 1024} KB; \`offset\` reads on.`,
    z.strictObject({
      path: z.string().min(1).max(4096).describe('relative to the project (as the other tools give it), or absolute'),
      offset: z.number().int().min(0).default(0).describe('byte offset to read from (the `next` of a previous read)'),
    }),
    async (deps, a) => {
      const r = await readChunk(deps, a.path, a.offset, ARTIFACT_CHUNK);
      return { path: path.relative(deps.projectRoot, r.path), size: r.size, offset: a.offset, next: r.next, text: r.text };
    },
  ),
];

function taskBrief(t: TaskView) {
  return {
    task: t.id,
    workflow: t.workflow,
    status: t.status,
    reason: t.reason,
    step: t.step,
    agent: t.agent,
    final: t.final,
    outcome: t.outcome,
    roles: t.roles,
    turns: t.turns.map((u) => ({ seq: u.seq, step: u.step, agent: u.agent, state: u.state, prompt: u.prompt, reply: u.reply, ms: u.ms })),
    ...(t.attach ? { attach: t.attach } : {}),
  };
}

/** Parse a tool's arguments: a problem names the tool, the field and the value given. */
export function parseArgs(tool: Tool, args: unknown): unknown {
  const r = tool.input.safeParse(args ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.join('.') || '(arguments)';
  let value: unknown = args;
  for (const k of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[k as PropertyKey];
  const shown = value === undefined ? 'nothing' : JSON.stringify(value)?.slice(0, 120);
  const what = issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : `${field}: ${issue.message} (got ${shown})`;
  throw new JaggersError('E_USAGE', `${tool.name}: ${what}`);
}
