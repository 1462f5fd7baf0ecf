// Workflow tasks (`jaggers run`): the supervisor runs one workflow machine per task and stores its
// persisted snapshot with the task after every transition. Each turn is a job in the task's own pinned
// window of that agent, named by the task and the turn's number, so a machine restored after a crash
// finds the job of the turn it was in (finished, or still running) instead of running the turn again.
import type { Budget } from '../usage/budget-schema.js';
import path from 'node:path';
import { worktreeFor } from '../agents/isolation.js';
import { createActor, fromPromise, type Actor } from 'xstate';
import {
  workflowMachine,
  workflowStatus,
  type TurnInput,
  type TurnOutput,
  type WorkflowContext,
  type WorkflowMachine,
} from '../../machines/workflow.machine.js';
import type { TaskView } from '../api/types.js';
import { TASK_FINAL, isJobTask, taskView, turnJobId, withSessions } from './task-view.js';
import { JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { findTerminal, isFinal, newTerminalId, type JobRecord, type RegistryData, type TaskRecord } from '../sessions/registry.js';
import { newTaskId, own, WORKER_AGENT } from '../ids.js';
import type { Log } from '../logger.js';
import type { ProjectFile } from '../project/project-file.js';
import type { TerminalEntry } from '../agents/table.js';
import { homeMessage } from '../work/files.js';
import type { Jobs } from '../work/jobs.js';
import { resolveSender } from '../work/parties.js';
import type { Agents, Dirs, Hub, Store } from '../work/ports.js';
import { bindRoles, loadWorkflow } from './load.js';
import { namedFiles } from '../work/carry.js';
import { workflowSchema, type WorkflowDef } from './schema.js';

export interface TasksPorts {
  store: Store;
  hub: Hub;
  log: Log;
  dirs: Dirs;
  agents: Pick<Agents, 'find' | 'list' | 'refresh' | 'status'>;
  jobs: Pick<Jobs, 'create' | 'result' | 'cancel'>;
  /** Start a dead pane again in its pinned conversation; open a task's window gone with its tmux server. */
  launcher: {
    restart(e: TerminalEntry): Promise<void>;
    openTaskWindow(terminalId: string, task: string): Promise<void>;
    /** Close the task's windows (it ended); `resume` opens them again. */
    closeTask(task: string): Promise<unknown>;
  };
  /** Resolves once the agent's state is one of `states` (rejects after `ms`). */
  waitFor(terminalId: string, states: readonly string[], ms: number): Promise<unknown>;
  /** Resolves when an event on the stream matches, `ms` ran out, or the supervisor stops. */
  untilEvent(match: (e: { type: string; data: Record<string, unknown> }) => boolean, ms: number): Promise<void>;
  project(): Promise<ProjectFile | null>;
  /** Throws E_PROFILE_UNKNOWN for a name that is no profile. */
  checkProfile(name: string): Promise<void>;
  profileNames(): Promise<string[]>;
  /**
   * The host a team agent runs on (jaggers.json's `host`, docs/hosts.md), or null: this machine. A role
   * on a host takes its turns there (forwarded, src/work/remote-work.ts), in that agent's window there.
   */
  hostOf?(agent: string): Promise<string | null>;
  stopping: AbortSignal;
}

export interface TaskRequest {
  id?: string;
  workflow: string;
  text: string;
  agents?: string[];
  roles?: Record<string, string>;
  detached: boolean;
  /** The definition the client loaded, and its source; else the supervisor loads `workflow` itself. */
  definition?: Record<string, unknown>;
  source?: string;
  /** The caller's terminal id: the final answer goes to its inbox. */
  fromTerminal?: string;
  /** Its agents in one git worktree of its own (`.jaggers/worktrees/<task id>`), from `base`. */
  worktree?: boolean;
  base?: string;
  /** The task's budget (docs/usage.md, Budgets): its next turn waits `over_budget` once it is reached. */
  budget?: Budget;
}

const finalTask = (status: string) => (TASK_FINAL as readonly string[]).includes(status);

interface Running {
  actor: Actor<WorkflowMachine>;
  /** Snapshot writes, in order. */
  chain: Promise<void>;
  lastSaved: string;
  lastStatus: string;
  /** A resumed failed turn is tried once more (a new job) instead of reporting the old failure. */
  retry: boolean;
}

export class Tasks {
  private readonly running = new Map<string, Running>();

  constructor(private readonly p: TasksPorts) {}

  private get root(): string {
    return this.p.dirs.projectRoot;
  }

  async get(id: string): Promise<TaskView> {
    const data = await Promise.resolve(this.p.store.data);
    const t = own(data.tasks, id);
    if (!t) {
      const known = Object.keys(data.tasks);
      throw new JaggersError(
        'E_NOT_FOUND',
        `no task ${JSON.stringify(id)} in this project${known.length ? ` (see \`jaggers tasks\`)` : ' (there is none yet)'}`,
      );
    }
    return this.view(t, data);
  }

  /** Every task but a job's own (`jobs` lists those). */
  async list(): Promise<TaskView[]> {
    const data = await Promise.resolve(this.p.store.data);
    return Object.values(data.tasks)
      .filter((t) => !isJobTask(t))
      .map((t) => this.view(t, data, false));
  }

  private view(t: TaskRecord, data: RegistryData, turns = true): TaskView {
    return taskView(t, data, this.running.has(t.id), turns);
  }

  /** The task once it ended, or as it is when `timeoutMs` ran out. */
  async wait(id: string, timeoutMs: number): Promise<TaskView> {
    const now = await this.get(id);
    if (finalTask(now.status)) return now;
    await this.p.untilEvent((e) => e.type === 'task' && e.data.id === id && finalTask(String(e.data.status)), timeoutMs);
    return this.show(id);
  }

  /** `show`: the view with each turn's session id read from its handover file. */
  async show(id: string): Promise<TaskView> {
    return withSessions(await this.get(id), await Promise.resolve(this.p.store.data), this.p.dirs);
  }

  /**
   * Record a workflow task and start it. Its agents get windows of their own for the task (those `up
   * --task` opened are used as they are). A resent request changes nothing.
   */
  async create(req: TaskRequest): Promise<TaskView> {
    const id = req.id ?? newTaskId();
    let definition = req.definition;
    let source = req.source ?? 'built-in';
    if (!definition) {
      const loaded = await loadWorkflow(this.p.dirs.jaggersDir, req.workflow);
      definition = loaded.def as unknown as Record<string, unknown>;
      source = loaded.source === 'built-in' ? 'built-in' : path.relative(this.root, loaded.source);
    }
    const def = parseDefinition(definition, req.workflow);
    const known = own((await Promise.resolve(this.p.store.data)).tasks, id);
    if (known?.definition) return this.get(id);
    const roles = req.roles ?? bindRoles(def, req.agents, await this.teamNames(), await this.p.profileNames().catch(() => []));
    for (const role of def.agents)
      if (!own(roles, role))
        throw new JaggersError('E_USAGE', `run: no agent for the role ${JSON.stringify(role)} of workflow ${def.name} (roles: ${def.agents.join(', ')})`);
    const from = req.fromTerminal
      ? resolveSender(this.p.agents, await Promise.resolve(this.p.store.data), { fromTerminal: req.fromTerminal }, null, 'run')!.terminalId
      : null;
    if (req.worktree)
      // Recorded before its windows open: each of them starts in the task's worktree.
      await this.p.store.update((d) => ({
        events: own(d.tasks, id) ? [] : [{ type: 'task-created', taskId: id, workflow: def.name, worktree: { base: req.base ?? null } }],
        result: null,
      }));
    for (const agent of new Set(Object.values(roles))) await this.taskAgent(id, agent);
    await this.p.store.update((d) => {
      if (own(d.tasks, id)?.definition) return { events: [], result: null };
      const events: NewJournalEvent[] = [];
      if (!own(d.tasks, id)) events.push({ type: 'task-created', taskId: id, workflow: def.name });
      if (req.budget && !Object.hasOwn(d.budgets.set, `task:${id}`)) events.push({ type: 'budget-set', key: `task:${id}`, ...req.budget });
      events.push({
        type: 'task-workflow',
        taskId: id,
        workflow: def.name,
        source,
        definition: definition!,
        text: req.text,
        roles,
        detached: req.detached,
        from,
      });
      return { events, result: null };
    });
    this.p.log.info({ task: id, workflow: def.name, roles, detached: req.detached }, 'workflow task recorded');
    await this.start(id, null, false);
    return this.get(id);
  }

  /** The team's agents, in order: jaggers.json's, else those the registry knows without a task. */
  private async teamNames(): Promise<string[]> {
    const project = await this.p.project().catch(() => null);
    if (project) return project.agents.map((a) => a.name);
    const data = await Promise.resolve(this.p.store.data);
    return [
      ...new Set(
        Object.values(data.terminals)
          .filter((t) => t.task === null && !WORKER_AGENT.test(t.agent))
          .map((t) => t.agent),
      ),
    ];
  }

  /** The agent's terminal of this task, with a live window: made and opened here when `up --task` did not. */
  private async taskAgent(task: string, agent: string): Promise<void> {
    // An agent on another host has no window here: its host's supervisor runs its turns.
    if (await this.hostOf(agent)) return;
    const data = await Promise.resolve(this.p.store.data);
    const a = own(own(data.tasks, task)?.agents, agent);
    if (a && this.p.agents.find(a.terminalId) && !this.p.agents.find(a.terminalId)!.pane.dead) return;
    let terminalId = a?.terminalId ?? findTerminal(data, { agent, task })?.terminalId ?? null;
    if (!terminalId) {
      const spec = (await this.p.project().catch(() => null))?.agents.find((x) => x.name === agent);
      const team = findTerminal(data, { agent, task: null });
      // Else a profile's name: an agent of that name and profile, as `up --agents claude` starts it.
      const asProfile =
        spec || team
          ? null
          : await this.p.checkProfile(agent).then(
              () => agent,
              () => null,
            );
      const profile = spec?.profile ?? team?.profile ?? asProfile;
      if (!profile) {
        const names = await this.teamNames();
        throw new JaggersError('E_AGENT_UNKNOWN', `run: unknown agent ${JSON.stringify(agent)}: agents are ${names.join(', ') || 'none'}`);
      }
      await this.p.checkProfile(profile);
      terminalId = newTerminalId();
      // An isolated agent's window of a task works in a worktree of its own (src/agents/isolation.ts, made when it opens).
      const worktree = worktreeFor({ name: agent, isolation: spec?.isolation }, task, Boolean(own(data.tasks, task)?.worktree));
      const cwd = path.resolve(this.root, ...(worktree ? ['.jaggers', 'worktrees', worktree] : []), spec?.cwd ?? '.');
      const tid = terminalId;
      await this.p.store.update((d) => {
        const events: NewJournalEvent[] = [];
        if (!own(d.tasks, task)) events.push({ type: 'task-created', taskId: task, workflow: 'run' });
        events.push({ type: 'terminal-created', terminalId: tid, agent, profile, cwd, task });
        return { events, result: null };
      });
    }
    const tid = terminalId;
    await this.p.store.update((d) => ({
      events: own(own(d.tasks, task)?.agents, agent)?.terminalId === tid ? [] : [{ type: 'task-agent', taskId: task, agent, terminalId: tid }],
      result: null,
    }));
    await this.ensureAgent({ taskId: task, agent });
  }

  /** Continue a task from its stored snapshot (a failed or cancelled one from the last turn it was in). */
  async resume(id: string): Promise<TaskView> {
    // A task that has just ended keeps its machine until its last snapshot is saved (CI: a `resume` right
    // after a failed `run` found it there and resumed nothing): that is waited for first.
    const ending = own((await Promise.resolve(this.p.store.data)).tasks, id);
    if (ending && finalTask(ending.status)) await this.settled(id);
    const data = await Promise.resolve(this.p.store.data);
    const t = own(data.tasks, id);
    if (!t) return this.get(id);
    if (!t.definition) return this.get(id);
    if (this.running.has(id) || t.status === 'done') return this.get(id);
    if (finalTask(t.status)) {
      if (!t.resumable) throw new JaggersError('E_USAGE', `task ${id} ${t.status} before its first turn: run it again`);
      await this.start(id, t.resumable, true);
    } else {
      await this.start(id, t.snapshot, false);
    }
    return this.get(id);
  }

  async cancel(id: string, by = 'the user'): Promise<TaskView> {
    const r = this.running.get(id);
    if (r) {
      r.actor.send({ type: 'CANCEL', by });
      await r.chain;
      await this.settled(id);
      return this.get(id);
    }
    const t = (await this.get(id)) as TaskView;
    if (!finalTask(t.status)) {
      // Its work items that have not ended (a handoff's, or the turn of a task no machine runs now) end with it.
      for (const x of t.turns) if (x.job && !finalTask(x.state)) await this.p.jobs.cancel(x.job, by);
      await this.closeWindows(id);
      const reason = `cancelled by ${by}`;
      await this.p.store.update((d) => ({
        events: d.tasks[id] && !finalTask(d.tasks[id].status) ? [{ type: 'task-status', taskId: id, status: 'cancelled', reason }] : [],
        result: null,
      }));
      this.published(await this.get(id));
    }
    return this.get(id);
  }

  /** Its windows closed (a tmux that refuses is logged: the task's end is recorded all the same). */
  private async closeWindows(id: string): Promise<void> {
    await this.p.launcher.closeTask(id).catch((e: Error) => this.p.log.warn({ task: id, err: e.message }, "could not close the task's windows"));
  }

  /** Waits until the task's writes after the actor stopped are done. */
  private async settled(id: string): Promise<void> {
    for (let i = 0; i < 3 && this.running.has(id); i++) await this.running.get(id)?.chain;
  }

  /** On the supervisor's start: detached tasks go on; a foreground one waits for `jaggers resume` (its `run` asks for it). */
  async startAll(): Promise<void> {
    const data = await Promise.resolve(this.p.store.data);
    for (const t of Object.values(data.tasks)) {
      if (!t.definition || finalTask(t.status) || t.status === 'interrupted' || this.running.has(t.id)) continue;
      if (t.detached) {
        await this.start(t.id, t.snapshot, false).catch((e: Error) => this.p.log.error({ task: t.id, err: e.message }, 'could not resume the task'));
      } else {
        await this.record(t.id, [
          {
            type: 'task-status',
            taskId: t.id,
            status: 'interrupted',
            reason: `the supervisor restarted during turn ${(t.snapshot?.context as WorkflowContext | undefined)?.seq ?? 0}; \`jaggers resume ${t.id}\` continues it`,
          },
        ]);
      }
    }
  }

  /** The message that takes a task's end to the inbox of the agent that started it (inside the registry lock). */
  private async resultMessage(d: RegistryData, t: TaskRecord, status: string, reason: string, final: string | null): Promise<NewJournalEvent[]> {
    const home = t.from ? d.terminals[t.from] : undefined;
    if (!home) return [];
    const answer = final ? await readConfinedText(this.p.dirs, final, `task ${t.id}: its final answer`).catch(() => null) : null;
    const what = `Task ${t.id} (workflow ${t.workflow}) that you started`;
    const text =
      status === 'done'
        ? `${what} is done: ${reason}. Its final answer is in ${final ?? '(no file)'}${answer === null ? '' : `:\n\n${answer}`}\n`
        : `${what} ended ${status}: ${reason}\n`;
    const header = { fromAgent: 'jaggers', from: null, toAgent: home.agent, to: home.terminalId, job: null, task: t.id };
    return [await homeMessage({ projectRoot: this.root, jaggersDir: this.p.dirs.jaggersDir }, header, text)];
  }

  private async record(id: string, events: NewJournalEvent[]): Promise<void> {
    await this.p.store.update((d) => ({ events: own(d.tasks, id) ? events : [], result: null }));
  }

  private published(v: TaskView): void {
    this.p.hub.publish('task', {
      id: v.id,
      workflow: v.workflow,
      status: v.status,
      reason: v.reason,
      step: v.step,
      agent: v.agent,
      seq: v.seq,
      final: v.final,
    });
  }

  private async start(id: string, snapshot: Record<string, unknown> | null, retry: boolean): Promise<void> {
    if (this.running.has(id) || this.p.stopping.aborted) return;
    const data = await Promise.resolve(this.p.store.data);
    const t = data.tasks[id]!;
    const def = parseDefinition(t.definition!, `task ${id}`);
    const machine = workflowMachine(def).provide({
      actors: { turn: fromPromise<TurnOutput, TurnInput>(({ input, signal }) => this.turn(input, signal)) },
    });
    const input = { taskId: id, task: t.text ?? '', roles: t.roles };
    const actor = createActor(machine, snapshot ? { input, snapshot: snapshot as never } : { input });
    const r: Running = { actor, chain: Promise.resolve(), lastSaved: snapshot ? JSON.stringify(snapshot) : '', lastStatus: '', retry };
    this.running.set(id, r);
    actor.subscribe({
      next: () => this.save(id, r),
      error: (e) => this.p.log.error({ task: id, err: (e as Error).message }, 'workflow machine error'),
    });
    this.p.log.info({ task: id, workflow: def.name, resumed: snapshot !== null, retry }, snapshot ? 'workflow task resumed' : 'workflow task started');
    actor.start();
    this.save(id, r, true);
  }

  /** Store the machine's persisted snapshot (and the task's status when it changed), in order. */
  private save(id: string, r: Running, force = false): void {
    // A stopping supervisor stops the machines: that is no transition of the task's.
    if (this.p.stopping.aborted) return;
    const snap = r.actor.getSnapshot();
    const persisted = r.actor.getPersistedSnapshot() as unknown as Record<string, unknown>;
    const text = JSON.stringify(persisted);
    const st = workflowStatus(snap);
    const ctx = snap.context;
    const last = ctx.turns.at(-1);
    const reason =
      st.status === 'running'
        ? `turn ${st.seq}: ${st.step} by ${st.agent}`
        : st.status === 'waiting'
          ? `${st.agent} asks: ${ctx.asking ?? 'a question'}; answer it with \`jaggers attach ${st.agent}+${id}\``
          : st.status === 'done'
            ? (ctx.outcome ?? 'every step done')
            : (ctx.error ?? st.status);
    const statusKey = `${st.status}\0${reason}`;
    if (!force && text === r.lastSaved && statusKey === r.lastStatus) return;
    const changed = statusKey !== r.lastStatus;
    r.lastSaved = text;
    r.lastStatus = statusKey;
    const final = st.status === 'done' ? (last?.reply ?? null) : null;
    r.chain = r.chain
      .then(async () => {
        const events: NewJournalEvent[] = [{ type: 'task-snapshot', taskId: id, snapshot: persisted }];
        if (changed)
          events.push({
            type: 'task-status',
            taskId: id,
            status: st.status,
            reason,
            step: st.step,
            agent: st.agent,
            ...(final ? { final } : {}),
            outcome: ctx.outcome,
          });
        // An ended task's windows close before its end is told: whoever waits for the end finds them gone.
        if (changed && finalTask(st.status)) await this.closeWindows(id);
        await this.p.store.update(async (d) => {
          const t = d.tasks[id];
          if (!t) return { events: [], result: null };
          const home = changed && finalTask(st.status) ? await this.resultMessage(d, t, st.status, reason, final) : [];
          return { events: [...events, ...home], result: null };
        });
        if (changed) {
          this.published(await this.get(id));
          this.p.log.info({ task: id, status: st.status, step: st.step, agent: st.agent, turn: st.seq }, reason);
        }
      })
      .catch((e: Error) => this.p.log.error({ task: id, err: e.message }, 'could not store the workflow snapshot'));
    if (snap.status !== 'active') {
      void r.chain.then(() => {
        if (this.running.get(id) === r) this.running.delete(id);
      });
    }
  }

  /**
   * One turn of a workflow: a job for the agent's window of this task. A job of this turn that is
   * already done is its result (a restored machine never runs a finished turn again); one still under
   * way is followed; an agent lost during the turn is restarted in its pinned conversation and the turn
   * tried once more.
   */
  private async turn(input: TurnInput, signal: AbortSignal): Promise<TurnOutput> {
    const r = this.running.get(input.taskId);
    let retry = r?.retry ?? false;
    if (r) r.retry = false;
    for (;;) {
      const data = await Promise.resolve(this.p.store.data);
      const jobs: JobRecord[] = [];
      for (let k = 1; data.jobs[turnJobId(input.taskId, input.seq, k)]; k++) jobs.push(data.jobs[turnJobId(input.taskId, input.seq, k)]!);
      const done = jobs.find((j) => j.state === 'done');
      if (done) return this.output(done);
      const last = jobs.at(-1);
      const host = await this.hostOf(input.agent);
      if (last && !isFinal(last.state)) {
        // Its window gone with its tmux server (a reboot): opened again, so the turn is found finished or lost there.
        // (A turn on another host is followed there: its host's supervisor keeps its window.)
        if (input.mode !== 'headless' && !host) await this.ensureAgent(input);
        // Followed again after a restart: the step's time counts from when its job was made.
        await this.follow(last.id, input, signal, Date.parse(last.created) + input.timeoutMs);
        continue;
      }
      if (last) {
        const lost = last.cause === 'agent-lost' && jobs.filter((j) => j.cause === 'agent-lost').length < 2;
        if (!lost && !retry) throw new Error(`${last.reason} (job ${last.id})`);
        this.p.log.warn(
          { task: input.taskId, turn: input.seq, agent: input.agent, job: last.id },
          lost ? 'the agent was lost during the turn: it is restarted and the turn tried again' : 'the failed turn is tried again',
        );
      }
      retry = false;
      // A headless step needs no pane: the agent's terminal of this task runs its CLI once, outside it.
      const headless = input.mode === 'headless';
      // A role on another host: the item names the agent, and is forwarded with the files its prompt names
      // (a headless one runs headless there, in the agent's conversation pinned there).
      const target = host ? input.agent : headless ? this.terminalOf(input) : await this.ensureAgent(input);
      const id = turnJobId(input.taskId, input.seq, jobs.length + 1);
      await this.p.jobs.create({
        id,
        target,
        ...(host ? { carry: this.carried(input) } : {}),
        text: input.prompt,
        name: `${input.taskId} turn ${input.seq}: ${input.step}`,
        // The step's deadline is kept by the workflow; the job's own is a backstop.
        timeout: input.timeoutMs / 1000 + 5,
        task: input.taskId,
        workflow: input.workflow,
        work: 'turn',
        ...(headless ? { headless: true } : {}),
      });
      await this.follow(id, input, signal, Date.now() + input.timeoutMs);
    }
  }

  private async hostOf(agent: string): Promise<string | null> {
    return (await this.p.hostOf?.(agent)) ?? null;
  }

  /** The earlier turns' reply files (of this project) that the turn's prompt names: they go to its host with it. */
  private carried(input: TurnInput): string[] {
    const ctx = this.running.get(input.taskId)?.actor.getSnapshot().context;
    return namedFiles(
      input.prompt,
      Object.values(ctx?.latest ?? {}).map((l) => l.reply),
    );
  }

  private async output(j: JobRecord): Promise<TurnOutput> {
    const r = await this.p.jobs.result(j.id);
    return { prompt: j.artifact ?? '', reply: j.reply ?? '', text: r.reply ?? '', job: j.id };
  }

  /**
   * Until the job ends; its agent asking a person makes the task waiting. Leaving the turn (cancel) or
   * the step's deadline cancels the job. The deadline is kept here as well as by the machine: a machine
   * restored from its snapshot has lost its timers (XState does not persist them).
   */
  private async follow(jobId: string, input: TurnInput, signal: AbortSignal, deadline: number): Promise<void> {
    const tell = (j: { state: string; reason: string }) => {
      const actor = this.running.get(input.taskId)?.actor;
      if (!actor) return;
      if (j.state === 'waiting_input') actor.send({ type: 'WAITING', what: j.reason.replace(/^.*? asks: /, '').replace(/; answer it with .*$/, '') });
      else if (j.state === 'running') actor.send({ type: 'WORKING' });
    };
    await new Promise<void>((resolve, reject) => {
      const off = this.p.hub.subscribe((e) => {
        if (e.type !== 'job' || e.data.id !== jobId) return;
        tell(e.data as { state: string; reason: string });
        if (isFinal(e.data.state as JobRecord['state'])) finish();
      });
      const aborted = () => {
        finish();
        if (!this.p.stopping.aborted)
          void this.p.jobs
            .cancel(jobId, `workflow task ${input.taskId}`)
            .catch((e: Error) => this.p.log.warn({ job: jobId, err: e.message }, 'could not cancel'));
        reject(new Error('the turn was stopped'));
      };
      signal.addEventListener('abort', aborted, { once: true });
      const late = setTimeout(
        () => {
          finish();
          void this.p.jobs
            .cancel(jobId, `workflow task ${input.taskId} (the step's timeout ran out)`)
            .catch((e: Error) => this.p.log.warn({ job: jobId, err: e.message }, 'could not cancel'));
          reject(new JaggersError('E_TIMEOUT', `did not finish within ${input.timeoutMs / 1000} s (the step's timeout)`));
        },
        Math.max(0, deadline - Date.now()),
      );
      // A stopping supervisor leaves the turn as it is (the job goes on after a restart): the promise never settles.
      const stopping = () => {
        ended = true;
        clearTimeout(late);
        off();
        signal.removeEventListener('abort', aborted);
      };
      this.p.stopping.addEventListener('abort', stopping, { once: true });
      let ended = false;
      const stoppingSignal = this.p.stopping;
      function finish(): void {
        if (ended) return;
        ended = true;
        clearTimeout(late);
        off();
        signal.removeEventListener('abort', aborted);
        stoppingSignal.removeEventListener('abort', stopping);
        resolve();
      }
      // The job may have ended (or asked) before the subscription.
      void Promise.resolve(this.p.store.data).then((d) => {
        const j = d.jobs[jobId];
        if (!j) return;
        tell(j);
        if (isFinal(j.state)) finish();
      });
    });
  }

  private terminalOf(input: Pick<TurnInput, 'taskId' | 'agent'>): string {
    const a = own(own(this.p.store.data.tasks, input.taskId)?.agents, input.agent);
    if (!a) throw new JaggersError('E_AGENT_UNKNOWN', `task ${input.taskId} has no agent ${input.agent}`);
    return a.terminalId;
  }

  /** The task's window of the agent, started again in its pinned conversation when its process exited. */
  private async ensureAgent(input: Pick<TurnInput, 'taskId' | 'agent'>): Promise<string> {
    const data = await Promise.resolve(this.p.store.data);
    const a = own(own(data.tasks, input.taskId)?.agents, input.agent);
    if (!a) throw new JaggersError('E_AGENT_UNKNOWN', `task ${input.taskId} has no agent ${input.agent}`);
    const alive = (x: TerminalEntry | undefined) => !!x && !x.pane.dead && this.p.agents.status(x.pane.paneId) !== 'exited';
    // The watcher hears of deaths and closed windows: tmux is read again only when it says the pane is not live.
    if (alive(this.p.agents.find(a.terminalId))) return a.terminalId;
    await this.p.agents.refresh();
    const e = this.p.agents.find(a.terminalId);
    if (!e) return this.openWindow(input, a.terminalId);
    if (alive(e)) return a.terminalId;
    if (!e.profile) throw new JaggersError('E_PROFILE_INVALID', `${input.agent}'s profile cannot be loaded: ${e.problem}`);
    // As `up` restarts a dead pane: resuming the pinned conversation.
    await this.p.launcher.restart(e);
    await this.p.waitFor(a.terminalId, e.profile.delivery.ready, 60_000).catch(() => {});
    return a.terminalId;
  }

  /** The task's window of an agent, gone with its tmux server (a reboot): opened again as `up --task` would, resuming its conversation. */
  private async openWindow(input: Pick<TurnInput, 'taskId' | 'agent'>, terminalId: string): Promise<string> {
    await this.p.launcher.openTaskWindow(terminalId, input.taskId);
    const e = this.p.agents.find(terminalId);
    if (e?.profile) await this.p.waitFor(terminalId, e.profile.delivery.ready, 60_000).catch(() => {});
    return terminalId;
  }

  stop(): void {
    for (const r of this.running.values()) r.actor.stop();
    this.running.clear();
  }
}

function parseDefinition(definition: Record<string, unknown>, where: string): WorkflowDef {
  const p = workflowSchema.safeParse(definition);
  if (p.success) return p.data;
  const first = p.error.issues[0]!;
  throw new JaggersError('E_WORKFLOW_INVALID', `${where}: field \`${first.path.join('.')}\`: ${first.message}`);
}
