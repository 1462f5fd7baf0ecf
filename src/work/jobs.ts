// Work items as the API sees them: recorded (the text fsynced, then journaled) before the request
// returns, listed, waited for, their results read, cancelled. Every kind goes through `create`: an
// `assign` (job), a `handoff`, a `send`, a workflow's turn, a flow run. An item for a team agent joins
// that agent's queue (the runner); an item for a profile gets a worker window of its own (workers.ts).
import path from 'node:path';
import type { JobResultView, JobView } from '../api/types.js';
import { JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import { parseArtifact } from '../handover/artifact.js';
import { JOB_ID, newJobId } from '../ids.js';
import type { Log } from '../logger.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { isFinal, KEEP_FINISHED, type JobRecord, type JobState } from '../sessions/registry.js';
import { jobPromptFile, writeDurable } from './files.js';
import type { WorkJournal } from './journal.js';
import type { OverBudget } from './budget.js';
import type { Budget } from '../usage/budget-schema.js';
import { knownAgents, resolveParty, resolveSender } from './parties.js';
import type { Agents, Dirs, Store, Subscribe, TerminalEntry } from './ports.js';
import { HOME, remoteKey } from './remote-work.js';
import { killGroup } from './run-headless.js';

export type WorkKind = JobRecord['work'];

export interface JobRequest {
  id?: string;
  target: string;
  text: string;
  name?: string;
  /** Seconds the item's turn may run. */
  timeout?: number;
  from?: string;
  fromTerminal?: string;
  keep?: boolean;
  task?: string;
  /** A workflow's turn or a handoff: the workflow's name (its handover files are the task's). */
  workflow?: string;
  work?: WorkKind;
  headless?: boolean;
  /** `assign --worktree`: a worker of a profile in a git worktree of its own, from `base`. */
  worktree?: boolean;
  base?: string;
  /** The job's own budget (docs/usage.md, Budgets). */
  budget?: Budget;
  /** A workflow's turn for an agent on another host: files of this project its prompt names, carried there with it. */
  carry?: string[];
  /**
   * Not an API field: taken home from this host's outbox (src/work/outbox-home.ts). `from` is an agent of
   * that host (the asker is `<from>@<fromHost>`), and the item's end is reported back there.
   */
  fromHost?: string;
}

export interface JobsPorts {
  store: Store;
  journal: WorkJournal;
  agents: Pick<Agents, 'find' | 'list'>;
  hub: Subscribe;
  log: Log;
  dirs: Dirs;
  /** The agent's queue: kicked when an item joins it; says why an item waits; stops following a cancelled one. */
  runner: { kick(terminalId: string): void; waiting(terminalId: string, itemId?: string): string | null; abort(itemId: string): void };
  /** Worker windows of profile items. */
  workers: { pump(): void; waiting(j: JobRecord): string };
  /** Throws E_PROFILE_UNKNOWN when there is no profile of this name. */
  checkProfile(name: string): Promise<void>;
  /** Press the profile's interrupt keys in the agent's pane (a cancelled turn). */
  interrupt(e: TerminalEntry): Promise<void>;
  /** Resolves when an event on the stream matches or `ms` ran out. */
  untilEvent(match: (e: { type: string; data: Record<string, unknown> }) => boolean, ms: number): Promise<void>;
  /** The host a team agent runs on (jaggers.json's `host`, docs/hosts.md), or null: this machine. */
  hostOf?(agent: string): Promise<string | null>;
  /** Items for agents on other hosts (src/work/remote-work.ts): why one in flight waits, and its cancel there. */
  remote?: { waiting(j: JobRecord): string | null; cancel(j: JobRecord): Promise<void> };
  /** The budget that holds a queued item, if one does (src/work/budgets.ts). */
  overBudget?(j: JobRecord): OverBudget | null;
  /** On a host's supervisor: the team's agents elsewhere (jaggers.json's `home`), whose jobs and handoffs go to the outbox. */
  homeAgents?(): Promise<readonly string[]>;
}

export class Jobs {
  constructor(private readonly p: JobsPorts) {}

  view(j: JobRecord): JobView {
    let waiting: string | null = null;
    if (j.state === 'queued') waiting = j.terminalId ? (this.p.runner.waiting(j.terminalId, j.id) ?? 'next for its agent') : this.p.workers.waiting(j);
    // An item forwarded to a host waits for that host while in flight too (its connection down).
    else if (j.host && j.terminalId && !isFinal(j.state)) waiting = this.p.runner.waiting(j.terminalId, j.id) ?? this.p.remote?.waiting(j) ?? null;
    // On a host's supervisor: an item for an agent of home waits in the outbox, then runs there (docs/hosts.md).
    // (Taken, its reason says how it stands there: `on home: ...`.)
    if (j.outbox && j.state === 'queued') waiting = `in the outbox: waits for the supervisor that started this host to take it home to ${j.agent ?? j.target}`;
    const overBudget = j.state === 'queued' && this.p.overBudget ? this.p.overBudget(j) : null;
    return { ...j, attach: j.state === 'waiting_input' && j.agent ? `jaggers attach ${j.agent}` : null, waiting, ...(overBudget ? { overBudget } : {}) };
  }

  /** Record an item (a resent request with the same id records it once) and hand it to its queue. */
  async create(req: JobRequest): Promise<JobView> {
    const { store, dirs } = this.p;
    const what = req.work === 'send' ? 'send' : req.work === 'handoff' ? 'handoff' : 'assign';
    if (req.id !== undefined && !JOB_ID.test(req.id)) throw new JaggersError('E_USAGE', `job id must look like j-0123456789ab, got ${JSON.stringify(req.id)}`);
    if (req.text.trim() === '') throw new JaggersError('E_USAGE', `${what}: the ${what === 'send' ? 'text' : 'prompt'} is empty`);
    const data = store.data;
    const known = req.id && Object.hasOwn(data.jobs, req.id) ? data.jobs[req.id] : undefined;
    if (known) return this.view(known);
    const task = req.task ?? null;
    let agent = resolveParty(this.p.agents, data, req.target, task);
    let kind: JobRecord['kind'] = 'agent';
    // An agent on another host (docs/hosts.md): its item is forwarded to that host's supervisor.
    // (A job from a task's window stays a local matter; a handoff carries a task of its own, and a
    // workflow's turn is its task's.)
    const forwardable = ((req.work ?? 'job') === 'job' && !task) || req.work === 'handoff' || req.work === 'turn';
    const host = !agent && forwardable ? ((await this.p.hostOf?.(req.target)) ?? null) : null;
    // On a host's supervisor: an agent of the team elsewhere (jaggers.json's `home`): a job or a handoff waits
    // in the outbox until the supervisor that started this host takes it home (src/work/outbox-home.ts).
    const outbox = !agent && !host && req.work !== 'turn' && forwardable && !!(await this.p.homeAgents?.())?.includes(req.target);
    if (host || outbox) {
      // (A headless handoff or workflow turn runs headless there, in far's conversation pinned there.)
      const no = req.worktree ? '--worktree' : req.base !== undefined ? '--base' : req.budget ? 'with a budget (--budget-tokens, --budget-usd)' : null;
      const where = host ? `an agent on host ${host}` : 'an agent of the machine that started this host';
      if (no) throw new JaggersError('E_USAGE', `${what} ${no}: ${req.target} is ${where}, where this is not supported yet`);
      agent = { agent: req.target, terminalId: remoteKey(req.target, host ?? HOME) };
    }
    if (!agent) {
      if (req.work && req.work !== 'job' && req.work !== 'flow')
        throw new JaggersError('E_AGENT_UNKNOWN', `${what}: unknown agent ${JSON.stringify(req.target)}: agents are ${knownAgents(this.p.agents, data)}`);
      await this.p.checkProfile(req.target).catch((e: JaggersError) => {
        if (e.code !== 'E_PROFILE_UNKNOWN') throw e;
        throw new JaggersError(
          'E_AGENT_UNKNOWN',
          `${what}: ${JSON.stringify(req.target)} is neither an agent (agents are ${knownAgents(this.p.agents, data)}) nor a profile (${e.message.replace(/^.*: known/, 'known')})`,
        );
      });
      kind = 'worker';
    }
    if (kind === 'worker' && req.headless)
      throw new JaggersError('E_USAGE', `${what} --headless needs an agent with a pinned conversation, not the profile ${req.target}`);
    if (req.base !== undefined && !req.worktree) throw new JaggersError('E_USAGE', `${what}: --base is the base of a --worktree job's branch; add --worktree`);
    if (req.worktree && kind === 'agent')
      throw new JaggersError(
        'E_USAGE',
        `${what} --worktree: ${req.target} is an agent with a folder and a conversation of its own; give it "isolation": "worktree" in jaggers.json, or assign to a profile (a new worker in a worktree of its own)`,
      );
    if (req.worktree && req.headless) throw new JaggersError('E_USAGE', `${what}: --worktree and --headless do not go together`);
    // Taken home from a host's outbox: the asker is that host's agent (its result goes back there, not to an inbox here).
    const from =
      req.fromHost !== undefined && req.from !== undefined
        ? { agent: req.from, terminalId: remoteKey(req.from, req.fromHost) }
        : resolveSender(this.p.agents, data, req, task, what);
    const id = req.id ?? newJobId();
    const file = jobPromptFile(dirs.jaggersDir, id);
    await writeDurable(file, req.text);
    const target = agent?.agent ?? req.target;
    const created = await store.update((d) => {
      if (Object.hasOwn(d.jobs, id)) return { events: [], result: false };
      const e: NewJournalEvent = {
        type: 'job-created',
        jobId: id,
        name: req.name ?? null,
        target,
        kind,
        terminalId: agent?.terminalId ?? null,
        from: from?.terminalId ?? null,
        fromAgent: from?.agent ?? null,
        prompt: path.relative(dirs.projectRoot, file),
        bytes: Buffer.byteLength(req.text),
        timeoutMs: req.timeout ? Math.round(req.timeout * 1000) : null,
        keep: req.keep ?? false,
        ...(req.workflow ? { task, workflow: req.workflow } : {}),
        ...(req.work ? { work: req.work } : {}),
        ...(req.headless ? { headless: true } : {}),
        ...(req.worktree ? { worktree: { base: req.base ?? null } } : {}),
        ...(host ? { host } : {}),
        ...(host && req.carry?.length ? { carry: req.carry } : {}),
        ...(outbox ? { outbox: true as const } : {}),
        ...(req.fromHost !== undefined ? { fromHost: req.fromHost } : {}),
      };
      const budget: NewJournalEvent[] = req.budget ? [{ type: 'budget-set', key: `job:${id}`, ...req.budget }] : [];
      return { events: [e, ...budget], result: true };
    });
    const j = store.data.jobs[id]!;
    if (created) {
      this.p.journal.published(j);
      this.p.log.info({ job: id, work: j.work, target, kind, from: from?.agent ?? null }, 'work item recorded');
    }
    // One in the outbox is in no queue here: the supervisor that started this host takes it.
    if (outbox) return this.view(j);
    if (kind === 'agent') this.p.runner.kick(agent!.terminalId);
    else this.p.workers.pump();
    return this.view(j);
  }

  async list(): Promise<JobView[]> {
    return Object.values(this.p.store.data.jobs).map((j) => this.view(j));
  }

  record(id: string): JobRecord {
    const jobs = this.p.store.data.jobs;
    const j = Object.hasOwn(jobs, id) ? jobs[id] : undefined;
    if (!j)
      throw new JaggersError(
        'E_NOT_FOUND',
        `no job ${JSON.stringify(id)} in this project (see \`jaggers jobs\`; of ended jobs only the newest ${KEEP_FINISHED} are kept there, older ones are in .jaggers/events.jsonl)`,
      );
    return j;
  }

  async get(id: string): Promise<JobView> {
    return this.view(this.record(id));
  }

  /** The item once it ended, or as it is when `timeoutMs` ran out. */
  async wait(id: string, timeoutMs: number): Promise<JobView> {
    const now = await this.get(id);
    if (isFinal(now.state)) return now;
    await this.p.untilEvent((e) => e.type === 'job' && e.data.id === id && isFinal(e.data.state as JobState), timeoutMs);
    return this.get(id);
  }

  async result(id: string): Promise<JobResultView> {
    const job = await this.get(id);
    if (!job.reply) return { job, reply: null, artifact: null };
    const text = await readConfinedText(this.p.dirs, job.reply, `job ${id}: its reply`);
    return { job, reply: parseArtifact(text).body.replace(/\n$/, ''), artifact: job.reply };
  }

  /** A queued item never starts; one in flight is interrupted (its agent gets its interrupt keys, a headless run is killed). */
  async cancel(id: string, by = 'the user'): Promise<JobView> {
    const j = this.record(id);
    if (isFinal(j.state)) return this.view(j);
    if (j.outbox) {
      // In the outbox, or taken home: ended here; the supervisor that took it sees the event and cancels its run.
      const taken = j.state !== 'queued';
      await this.p.journal.change(id, 'cancelled', `cancelled by ${by} while ${taken ? `taken home (${j.reason})` : 'in the outbox'}`, { code: 'E_CANCELLED' });
      return this.get(id);
    }
    if (j.host) {
      // Ended here first (its follower stops), then there; one still queued here never went there.
      const there = j.state !== 'queued';
      await this.p.journal.change(id, 'cancelled', `cancelled by ${by} while ${j.state}${there ? `; cancelled on host ${j.host} too` : ''}`, {
        code: 'E_CANCELLED',
      });
      this.p.runner.abort(id);
      if (there) await this.p.remote?.cancel(j);
      return this.get(id);
    }
    if (j.state !== 'queued') {
      if (j.headless && j.pid) killGroup(j.pid);
      else if (j.terminalId && j.work !== 'send') {
        const e = this.p.agents.find(j.terminalId);
        if (e?.profile && !e.pane.dead) await this.p.interrupt(e).catch(() => {});
      }
    }
    await this.p.journal.change(
      id,
      'cancelled',
      `cancelled by ${by}${j.state === 'queued' ? ' while queued' : ` while ${j.state}${j.headless ? '; its headless run was stopped' : '; the agent was interrupted'}`}`,
      { code: 'E_CANCELLED' },
    );
    this.p.runner.abort(id);
    return this.get(id);
  }
}
