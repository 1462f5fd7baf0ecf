// `run`, `tasks`, `show`, `resume`, `cancel <task>`: workflow tasks. `run` opens the task's agents
// (`up --task`), hands the workflow to the supervisor, and follows it turn by turn; `--detach` returns
// at once and the supervisor sees it through, across its own restarts.
import path from 'node:path';
import { withApi } from '../api/connect.js';
import type { StreamEvent, TaskView } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { inertLine, type Terminal } from '../output.js';
import { liveOrStored } from '../api/live-or-stored.js';
import { newTaskId, own } from '../ids.js';
import { FINAL_STATES, isFinalState } from '../states.js';
import { renderTable } from './render.js';
import type { UpResult } from './up.js';
import { tokensText } from '../usage/tokens.js';

export interface RunOptions {
  /** What the task is about, as text (`-m`). */
  message?: string;
  /** The same, from a file (`-f`). */
  file?: string;
  /** The older name of `message` (`run --task TEXT`), kept hidden: `--task` names a task id everywhere else. */
  task?: string;
  agents?: string;
  detach?: boolean;
  dryRun?: boolean;
  json?: boolean;
  /** The task id (default a new one). */
  id?: string;
  /** Its agents in one git worktree of its own (`jaggers/<task id>`), from `base`. */
  worktree?: boolean;
  base?: string;
  /** The task's budget (`--budget-tokens`, `--budget-usd`). */
  budgetTokens?: number;
  budgetUsd?: number;
  /** Ctrl-C: stop following; the task goes on in the supervisor. */
  signal?: AbortSignal;
}

export const TASK_FINAL = new Set<string>(FINAL_STATES);

export interface DryRun {
  workflow: string;
  roles: Record<string, string>;
  prompts: { seq: number; step: string; agent: string; prompt: string }[];
}

/** The task's text: `-m TEXT`, `-f FILE`, or the older `--task TEXT` (with a warning on stderr). */
async function taskText(ctx: Context, io: Terminal, o: RunOptions): Promise<string> {
  if (o.task === undefined) {
    const { payloadOf } = await import('./handoff.js');
    return payloadOf(ctx, o, 'run', true);
  }
  if (o.message !== undefined || o.file !== undefined) throw new JaggersError('E_USAGE', 'run: give the task once, with --message TEXT or --file PATH');
  io.writeErr('jaggers: warning: `run --task TEXT` is now `run -m TEXT` (`--task` names a task id in up, handoff and sessions)\n');
  if (o.task.trim() === '') throw new JaggersError('E_USAGE', 'run: --task is empty');
  return o.task;
}

export async function run(ctx: Context, io: Terminal, name: string, o: RunOptions): Promise<TaskView | DryRun> {
  const text = await taskText(ctx, io, o);
  // Loaded here, not with the module: `tasks` and `show` (the fast path) need none of it.
  const [{ bindRoles, dryRunPrompts, loadWorkflow }, { registryTeam }, { readStored }, { listProfileNames }, { renderUp, up, upFailed }] = await Promise.all([
    import('../workflows/load.js'),
    import('../agents/team.js'),
    import('../api/stored.js'),
    import('../profiles/load.js'),
    import('./up.js'),
  ]);
  const { def, source } = await loadWorkflow(ctx.jaggersDir, name);
  // The team's names, to bind the workflow's roles: jaggers.json's, else the team an earlier `up` made.
  const project = await ctx.project();
  const specs = project?.agents ?? registryTeam(readStored(ctx), ctx.projectRoot);
  const given = o.agents?.split(',').map((a) => a.trim());
  const roles = bindRoles(
    def,
    given,
    specs.map((s) => s.name),
    await listProfileNames(ctx.jaggersDir).catch(() => []),
  );
  const id = o.id ?? newTaskId();
  if (o.dryRun) return { workflow: def.name, roles, prompts: await dryRunPrompts(def, roles, text, id) };
  // The task's agents, in windows of their own with their own pinned conversations (`up --task`).
  const names = [...new Set(Object.values(roles))];
  if (o.base && !o.worktree) throw new JaggersError('E_USAGE', "run: --base is the base of the task's worktree: add --worktree");
  const opened = await up(ctx, { names, task: id, ...(o.worktree ? { worktree: true } : {}), ...(o.base ? { base: o.base } : {}) });
  if (upFailed(opened)) throw new JaggersError('E_COMMAND_NOT_FOUND', `run: not every agent of task ${id} started:\n${renderUp(opened)}`);
  const body = {
    id,
    workflow: def.name,
    source: source === 'built-in' ? source : path.relative(ctx.projectRoot, source),
    definition: def,
    text,
    roles,
    detached: o.detach ?? false,
    ...(o.worktree ? { worktree: true } : {}),
    ...(o.base ? { base: o.base } : {}),
    ...(o.budgetTokens !== undefined || o.budgetUsd !== undefined
      ? { budget: { ...(o.budgetTokens !== undefined ? { tokens: o.budgetTokens } : {}), ...(o.budgetUsd !== undefined ? { usd: o.budgetUsd } : {}) } }
      : {}),
    // Run detached by an agent in its pane: the final answer comes to that agent's inbox.
    ...(o.detach && ctx.env.JAGGERS_TERMINAL_ID ? { fromTerminal: ctx.env.JAGGERS_TERMINAL_ID } : {}),
  };
  const v = await withApi(ctx, (api) => api.call<TaskView>('POST', '/v1/tasks', body));
  if (o.detach) return v;
  if (!o.json)
    io.writeErr(
      `task ${id}: ${def.name} with ${Object.entries(roles)
        .map(([r, a]) => `${r}=${a}`)
        .join(', ')}\n`,
    );
  return follow(ctx, io, id, o.json ?? false, o.signal);
}

/** Follow a task to its end: its turns on stderr; a supervisor that went away is started again and the task resumed. */
export async function follow(ctx: Context, io: Terminal, id: string, quiet: boolean, signal?: AbortSignal): Promise<TaskView> {
  const shown = quiet ? null : new TaskProgress(io, id);
  const stop = new AbortController();
  const interrupted = () => stop.abort();
  signal?.addEventListener('abort', interrupted, { once: true });
  // Where it stands now (the stream starts after it).
  const first = await withApi(ctx, (api) => api.call<TaskView>('GET', `/v1/tasks/${encodeURIComponent(id)}`), { readOnly: true }).catch(() => null);
  if (first) shown?.event({ id: 0, type: 'task', at: '', data: { ...first } });
  let last: number | undefined;
  const stream = (async () => {
    while (!stop.signal.aborted) {
      await withApi(
        ctx,
        (api) =>
          api.events(
            '/v1/events?types=task,job',
            (e) => {
              last = e.id;
              shown?.event(e);
            },
            { signal: stop.signal, ...(last !== undefined ? { lastEventId: last } : {}) },
          ),
        { readOnly: true },
      ).catch(() => {});
    }
  })();
  try {
    for (;;) {
      const v = await withApi(ctx, async (api) => {
        const now = await api.call<TaskView>('GET', `/v1/tasks/${encodeURIComponent(id)}`, undefined, { signal: stop.signal });
        // A supervisor started again leaves a foreground task interrupted: this command goes on with it.
        if (!TASK_FINAL.has(now.status) && !now.live) await api.call<TaskView>('POST', `/v1/tasks/${encodeURIComponent(id)}/resume`);
        return api.call<TaskView>('GET', `/v1/tasks/${encodeURIComponent(id)}/wait?timeout=30`, undefined, { signal: stop.signal });
      }).catch((e: unknown) => {
        if (signal?.aborted) return null;
        if (e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN') return null;
        throw e;
      });
      if (signal?.aborted)
        throw new JaggersError(
          'E_INTERRUPTED',
          `task ${id} goes on in the supervisor; follow it with \`jaggers show ${id}\`, or here again with \`jaggers resume ${id}\``,
        );
      if (v && TASK_FINAL.has(v.status)) return v;
    }
  } finally {
    signal?.removeEventListener('abort', interrupted);
    shown?.stop();
    stop.abort();
    await stream;
  }
}

const FRAMES = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

/** Each turn as it happens: a spinner line on a terminal, plain lines when stderr is a file or a pipe. */
class TaskProgress {
  private line = 'starting';
  private frame = 0;
  private readonly t0 = Date.now();
  private turnStart = Date.now();
  private timer: NodeJS.Timeout | null = null;
  private lastText = '';
  /** The turns whose start was said (`turn 2`): a turn whose start event came before the stream did is said at its end. */
  private readonly started = new Set<string>();

  constructor(
    private readonly io: Terminal,
    private readonly id: string,
  ) {
    if (io.errIsTTY) {
      this.timer = setInterval(() => this.draw(), 100);
      this.timer.unref();
    }
  }

  private secs(from: number): string {
    return `${((Date.now() - from) / 1000).toFixed(1)} s`;
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.io.control('clear-line');
    this.io.writeErr(`${FRAMES[this.frame]} ${inertLine(this.line)} ${this.secs(this.turnStart)} (task ${this.secs(this.t0)})`);
  }

  private say(text: string): void {
    if (text === this.lastText) return;
    this.lastText = text;
    if (this.io.errIsTTY) this.io.control('clear-line');
    if (this.io.errIsTTY) this.io.writeErr(`${text}\n`);
    else this.io.writeErr(`${text} (${this.secs(this.t0)})\n`);
  }

  event(e: StreamEvent): void {
    const d = e.data as Record<string, unknown>;
    if (e.type === 'task' && d.id === this.id) {
      if (d.status === 'running' && d.seq !== undefined && !this.line.startsWith(`turn ${String(d.seq)}:`)) this.turnStart = Date.now();
      this.line = String(d.reason ?? d.status);
      const turn = /^(turn \d+):/.exec(this.line)?.[1];
      if (turn) this.started.add(turn);
      this.say(`${String(d.status)}: ${this.line}`);
    } else if (e.type === 'job' && typeof d.name === 'string' && d.name.startsWith(`${this.id} turn `)) {
      // The turn's job: its end, and what stops it on the way (the task's own events say the rest).
      const state = String(d.state);
      if (!isFinalState(state)) return;
      const name = d.name.slice(this.id.length + 1);
      const turn = /^(turn \d+):/.exec(name)?.[1];
      // Its start came before this command's stream did (a quick first turn): said now, before its end.
      if (turn && !this.started.has(turn)) {
        this.started.add(turn);
        this.say(`running: ${name} by ${String(d.agent ?? '')}`);
      }
      const how = state === 'done' ? `done in ${this.secs(this.turnStart)}` : `${state}: ${String(d.reason)}`;
      this.say(`  ${name} (${String(d.agent ?? '')}) ${how}${d.reply ? `, reply ${String(d.reply)}` : ''}`);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.io.errIsTTY) this.io.control('clear-line');
  }
}

export function renderRunEnd(v: TaskView): string {
  if (v.status === 'done') return `${v.final ?? '(no reply)'}\n`;
  return `task ${v.id} ${v.status}: ${v.reason ?? ''}\n`;
}

export function renderDryRun(d: DryRun): string {
  const head = `workflow ${d.workflow} with ${Object.entries(d.roles)
    .map(([r, a]) => `${r}=${a}`)
    .join(', ')}: the prompts of the first pass (loops may repeat steps)\n`;
  return head + d.prompts.map((p) => `\n--- turn ${p.seq}: ${p.step} -> ${p.agent}\n${p.prompt}\n`).join('');
}

export async function tasks(ctx: Context): Promise<TaskView[]> {
  return liveOrStored(
    ctx,
    () => withApi(ctx, (api) => api.call<TaskView[]>('GET', '/v1/tasks'), { readOnly: true }),
    async (d) => {
      const { isJobTask, taskView } = await import('../workflows/task-view.js');
      return Object.values(d.tasks)
        .filter((t) => !isJobTask(t))
        .map((t) => taskView(t, d, false, false));
    },
  );
}

export function renderTasks(list: TaskView[]): string {
  if (list.length === 0) return 'no tasks\n';
  return renderTable(
    ['TASK', 'WORKFLOW', 'STATUS', 'TURN', 'AGENTS', 'UPDATED', 'REASON'],
    list.map((t) => [
      t.id,
      t.workflow,
      t.status,
      t.seq ? String(t.seq) : '-',
      Object.keys(t.agents).join(',') || '-',
      (t.updated ?? t.created).replace('T', ' ').slice(0, 19),
      (t.reason ?? '').replace(/\s+/g, ' ').slice(0, 80),
    ]),
  );
}

export async function show(ctx: Context, id: string): Promise<TaskView> {
  return liveOrStored(
    ctx,
    () => withApi(ctx, (api) => api.call<TaskView>('GET', `/v1/tasks/${encodeURIComponent(id)}`), { readOnly: true }),
    async (d) => {
      const t = own(d.tasks, id);
      if (!t)
        throw new JaggersError(
          'E_NOT_FOUND',
          `no task ${JSON.stringify(id)} in this project${Object.keys(d.tasks).length ? ' (see `jaggers tasks`)' : ' (there is none yet)'}`,
        );
      const { taskView, withSessions } = await import('../workflows/task-view.js');
      return withSessions(taskView(t, d, false), d, ctx);
    },
  );
}

export function renderShow(t: TaskView): string {
  const lines = [`task ${t.id}: ${t.workflow}${t.source && t.source !== 'built-in' ? ` (${t.source})` : ''}, ${t.status}${t.reason ? `: ${t.reason}` : ''}`];
  if (t.text !== null) lines.push(`text: ${t.text.length > 300 ? `${t.text.slice(0, 300)}...` : t.text}`);
  if (Object.keys(t.roles).length)
    lines.push(
      `roles: ${Object.entries(t.roles)
        .map(([r, a]) => `${r}=${a}`)
        .join(', ')}${t.detached ? ' (detached)' : ''}`,
    );
  if (t.attach) lines.push(`waiting for you: ${t.attach}`);
  if (t.final) lines.push(`final: ${t.final}`);
  if (t.usage) lines.push(`tokens: ${tokensText(t.usage)}; the cost: jaggers usage --by task`);
  if (t.outcome) lines.push(`outcome: ${t.outcome}`);
  const agents = Object.entries(t.agents);
  if (agents.length) {
    lines.push(
      '',
      renderTable(
        ['AGENT', 'TERMINAL', 'SESSION', 'TURNS'],
        agents.map(([n, a]) => [n, a.terminalId, a.sessionId ?? '-', String(a.turns)]),
      ).trimEnd(),
    );
  }
  if (t.turns.length) {
    lines.push(
      '',
      renderTable(
        ['TURN', 'STEP', 'AGENT', 'STATE', 'TIME', 'JOB', 'SESSION', 'PROMPT', 'REPLY'],
        t.turns.map((x) => [
          String(x.seq),
          x.round > 1 ? `${x.step} (round ${x.round})` : x.step,
          x.agent,
          x.attempts > 1 ? `${x.state} (try ${x.attempts})` : x.state,
          x.ms !== null ? `${(x.ms / 1000).toFixed(1)} s` : '-',
          x.job ?? '-',
          x.sessionId ?? '-',
          x.prompt ?? '-',
          x.reply ?? '-',
        ]),
      ).trimEnd(),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Reopen a task's agents in their pinned conversations; a workflow task then goes on from its last finished turn. */
export async function resumeTask(
  ctx: Context,
  io: Terminal,
  id: string,
  o: { detach?: boolean; json?: boolean },
): Promise<{ opened: UpResult; task: TaskView | null }> {
  const { renderUp, up, upFailed } = await import('./up.js');
  const opened = await up(ctx, { task: id, resume: true });
  if (upFailed(opened)) return { opened, task: null };
  const v = await withApi(ctx, (api) => api.call<TaskView>('GET', `/v1/tasks/${encodeURIComponent(id)}`)).catch(() => null);
  // A task of `up --task` or a handoff: its agents are open again, and that is all.
  if (!v || v.source === null) return { opened, task: null };
  if (!o.json) io.writeErr(renderUp(opened));
  const resumed = await withApi(ctx, (api) => api.call<TaskView>('POST', `/v1/tasks/${encodeURIComponent(id)}/resume`));
  if (o.detach || resumed.status === 'done') return { opened, task: resumed };
  return { opened, task: await follow(ctx, io, id, o.json ?? false) };
}

export async function cancelTask(ctx: Context, id: string): Promise<TaskView> {
  return withApi(ctx, (api) => api.call<TaskView>('POST', `/v1/tasks/${encodeURIComponent(id)}/cancel`));
}
