// Agents and jobs in git worktrees of their own (issue 28), as the supervisor sees them: an agent with
// `"isolation": "worktree"` in jaggers.json starts (and resumes) in `.jaggers/worktrees/<agent>`; a job
// given `--worktree` runs its worker in `.jaggers/worktrees/<job id>`. The names people use (an agent,
// a job id, a worktree) are resolved here; git itself is src/agents/worktrees/.
import path from 'node:path';
import { JaggersError } from '../errors.js';
import type { Log } from '../logger.js';
import type { AgentSpec, ProjectFile } from '../project/project-file.js';
import type { JobRecord, RegistryData } from '../sessions/registry.js';
import { isFinal } from '../sessions/registry.js';
import { isFinalState } from '../states.js';
import {
  openWorktrees,
  type Created,
  type GcCandidate,
  type MergeMode,
  type MergeResult,
  type Removed,
  type WorktreeDiff,
  type WorktreeStatus,
  type Worktrees,
} from './worktrees/worktrees.js';

export interface IsolationPorts {
  projectRoot: string;
  data(): RegistryData;
  /** Terminals whose pane is alive now (their worktrees are in use). */
  liveTerminals(): string[];
  /** The live state of an agent's terminal (busy, idle...), undefined without a live pane. */
  stateOf(terminalId: string): string | undefined;
  /** The git layer (tests hand in their own); default: opened on the project at first use. */
  open?: () => Promise<Worktrees>;
  /** jaggers.json now: its `worktree.branchPrefix` names the branches (read when the git layer opens). */
  project?: () => Promise<ProjectFile | null>;
  /** Where a new worktree's copied files and setup output are told (the supervisor's log). */
  log?: Pick<Log, 'info'>;
  env?: NodeJS.ProcessEnv;
}

/** A worktree as `jaggers worktrees` lists it: who works in it, and where it stands. */
export interface WorktreeView {
  name: string;
  path: string;
  branch: string | null;
  /** The agent whose worktree it is, or the job's id (a `--worktree` job), or null (neither is known). */
  agent: string | null;
  job: string | null;
  /** A live pane works in it, or a job that has not ended. */
  inUse: boolean;
  status: WorktreeStatus | null;
  problem: string | null;
  /** Made on this host, for an agent there (docs/hosts.md); absent: this machine. */
  host?: string;
}

/** An agent's worktree name: its own name; in a task's window, `<agent>.<task>`. */
export const agentWorktree = (agent: string, task: string | null): string => (task ? `${agent}.${task}` : agent);

/**
 * The worktree an agent starts in, or null for the shared checkout: its task's (`run --worktree`: one for
 * all of the task's agents), else its own when jaggers.json isolates it.
 */
export function worktreeFor(spec: Pick<AgentSpec, 'name' | 'isolation'>, task: string | null, taskHasWorktree: boolean): string | null {
  if (task !== null && taskHasWorktree) return task;
  return spec.isolation === 'worktree' ? agentWorktree(spec.name, task) : null;
}

export class Isolation {
  private opened: Promise<Worktrees> | null = null;

  constructor(private readonly p: IsolationPorts) {}

  /** The git layer, opened once; a failed open (not a repository, an old git) is tried again next time. */
  worktrees(): Promise<Worktrees> {
    if (!this.opened) {
      const open = async () => {
        const prefix = (await this.p.project?.().catch(() => null))?.worktree?.branchPrefix;
        return openWorktrees(this.p.projectRoot, { env: this.p.env, ...(prefix ? { branchPrefix: prefix } : {}) });
      };
      this.opened = (this.p.open ?? open)();
      this.opened.catch(() => (this.opened = null));
    }
    return this.opened;
  }

  /**
   * The spec as it starts: an isolated agent's folder is its worktree (made when missing, from its
   * `base`; its own `cwd` is then a folder inside it). Other agents as they are.
   */
  async place(spec: AgentSpec, project: ProjectFile | null, task: string | null): Promise<AgentSpec> {
    const shared = task !== null ? this.p.data().tasks[task]?.worktree : undefined;
    const name = worktreeFor(spec, task, Boolean(shared));
    if (!name) return spec;
    const made = await this.create(name, shared ? (shared.base ?? undefined) : spec.base, project, shared ? `task ${task}` : `agent ${spec.name}`);
    const inside = spec.cwd ? path.join(made.path, spec.cwd) : made.path;
    return { ...spec, cwd: path.relative(this.p.projectRoot, inside) || '.' };
  }

  /** A `--worktree` job's folder: its worktree `<job id>`, made (or found again) from the base it was given. */
  async jobFolder(j: JobRecord, project: ProjectFile | null): Promise<string> {
    return (await this.create(j.id, j.worktree?.base ?? undefined, project, `job ${j.id}`)).path;
  }

  /**
   * A `--worktree` job ended: its worker's work is committed on its branch, and what the branch holds is
   * recorded with the end (the result sent home names it). Null for a job without a worktree of its own.
   */
  async jobResult(j: JobRecord): Promise<NonNullable<NonNullable<JobRecord['worktree']>['result']> | null> {
    if (!j.worktree) return null;
    const wt = await this.worktrees();
    const first = j.name ?? j.id;
    await wt.commit(j.id, `jaggers: job ${first} (${j.agent ?? j.target}, ${j.state})`);
    const d = await wt.diff(j.id, {});
    const status = await wt.status(j.id);
    return {
      branch: status.branch,
      base: d.base,
      head: d.head,
      commits: d.commits.length,
      files: d.files.length,
      added: d.files.reduce((n, f) => n + (f.added ?? 0), 0),
      removed: d.files.reduce((n, f) => n + (f.removed ?? 0), 0),
    };
  }

  /** Make (or find again) a worktree with the project's copy list and setup command; errors say for whom. */
  async create(name: string, base: string | undefined, project: ProjectFile | null, forWhom: string): Promise<Created> {
    const wt = await this.worktrees().catch((e: JaggersError) => {
      throw new JaggersError(e.code ?? 'E_GIT', `${forWhom} works in a git worktree, but: ${e.message}`);
    });
    const setup = project?.worktree?.setup;
    const made = await wt
      .create(name, { ...(base ? { base } : {}), copy: project?.worktree?.copy ?? [], ...(setup ? { setup } : {}) })
      .catch((e: JaggersError) => {
        throw new JaggersError(e.code ?? 'E_GIT', `${forWhom}: its worktree ${name}: ${e.message}`);
      });
    if (made.created || made.repaired)
      this.p.log?.info(
        {
          worktree: name,
          branch: made.branch,
          base: made.base,
          repaired: made.repaired,
          copied: made.copied?.copied ?? [],
          setup: made.setup ? { exitCode: made.setup.exitCode, ms: Math.round(made.setup.ms), output: made.setup.output } : null,
        },
        `worktree made for ${forWhom}`,
      );
    return made;
  }

  /** The worktree an agent, a job, a task or a worktree name means. */
  resolve(x: string): { name: string; agent: string | null; job: string | null } {
    const data = this.p.data();
    if (Object.hasOwn(data.tasks, x) && data.tasks[x]!.worktree) return { name: x, agent: null, job: null };
    const job = Object.hasOwn(data.jobs, x) ? data.jobs[x]! : undefined;
    if (job) {
      const name = jobWorktree(job);
      if (!name) throw new JaggersError('E_WORKTREE_UNKNOWN', `job ${x} did not run in a worktree of its own (assign it with --worktree)`);
      return { name, agent: job.agent, job: job.id };
    }
    const dir = this.dir();
    for (const t of Object.values(data.terminals)) {
      if (t.agent !== x || t.task !== null) continue;
      const name = worktreeOf(dir, t.cwd);
      if (name) return { name, agent: t.agent, job: null };
    }
    return { name: x, agent: null, job: null };
  }

  private dir(): string {
    return path.join(this.p.projectRoot, '.jaggers', 'worktrees');
  }

  /** Names in use: worktrees a live pane works in, and those of jobs that have not ended. */
  private inUse(): Set<string> {
    const data = this.p.data();
    const used = new Set<string>();
    const dir = this.dir();
    for (const id of this.p.liveTerminals()) {
      const t = data.terminals[id];
      const name = t ? worktreeOf(dir, t.cwd) : null;
      if (name) used.add(name);
    }
    for (const j of Object.values(data.jobs)) {
      const name = jobWorktree(j);
      if (name && !isFinal(j.state)) used.add(name);
    }
    for (const t of Object.values(data.tasks)) if (t.worktree && !isFinalState(t.status)) used.add(t.id);
    return used;
  }

  /** Who a worktree belongs to, from the registry. */
  private owner(name: string): { agent: string | null; job: string | null } {
    const data = this.p.data();
    if (Object.hasOwn(data.jobs, name) && jobWorktree(data.jobs[name]!) === name) return { agent: data.jobs[name]!.agent, job: name };
    const dir = this.dir();
    const t = Object.values(data.terminals).find((x) => worktreeOf(dir, x.cwd) === name);
    return { agent: t?.agent ?? null, job: null };
  }

  async list(): Promise<WorktreeView[]> {
    const wt = await this.worktrees();
    const used = this.inUse();
    const out: WorktreeView[] = [];
    for (const w of await wt.list()) {
      let status: WorktreeStatus | null = null;
      let problem: string | null = null;
      try {
        status = await wt.status(w.name);
      } catch (e) {
        problem = (e as Error).message;
      }
      out.push({ name: w.name, path: w.path, branch: w.branch, ...this.owner(w.name), inUse: used.has(w.name), status, problem });
    }
    return out;
  }

  async diff(x: string, o: { patch?: boolean; uncommitted?: boolean }): Promise<WorktreeDiff & { agent: string | null; job: string | null }> {
    const r = this.resolve(x);
    const d = await (await this.worktrees()).diff(r.name, o);
    return { ...d, agent: r.agent, job: r.job };
  }

  /**
   * Merge a worktree's branch into its base. What its agent left uncommitted is committed first (an
   * agent may not commit: codex's sandbox keeps .git read-only), but not while it works on a turn.
   */
  async merge(x: string, o: { mode?: MergeMode; into?: string; message?: string }): Promise<MergeResult & { name: string; committed: string | null }> {
    const r = this.resolve(x);
    const wt = await this.worktrees();
    const status = await wt.status(r.name);
    let committed: string | null = null;
    if (!status.clean) {
      const busy = this.busyIn(r.name);
      if (busy)
        throw new JaggersError(
          'E_WORKTREE_BUSY',
          `worktree ${r.name} has uncommitted changes and ${busy} is working in it now: merge once its turn ended (\`jaggers wait ${busy}\`)`,
        );
      committed = (await wt.commit(r.name, `jaggers: ${r.agent ?? r.job ?? r.name}'s uncommitted work, before a merge`)).sha;
    }
    return { ...(await wt.merge(r.name, o)), name: r.name, committed };
  }

  /** The agent working on a turn in this worktree now, or null. */
  private busyIn(name: string): string | null {
    const data = this.p.data();
    for (const id of this.p.liveTerminals()) {
      const t = data.terminals[id];
      if (!t || worktreeOf(this.dir(), t.cwd) !== name) continue;
      const state = this.p.stateOf(id);
      if (state === 'busy' || state === 'waiting_input') return t.agent;
    }
    return null;
  }

  /**
   * An item ended in an agent's worktree: what it changed is committed on the agent's branch, one commit
   * per item (`jaggers diff` then shows the work item by item). Null when nothing was left to commit.
   */
  async itemEnded(j: JobRecord): Promise<string | null> {
    const t = j.terminalId ? this.p.data().terminals[j.terminalId] : undefined;
    const name = t ? worktreeOf(this.dir(), t.cwd) : null;
    if (!name || j.work === 'send') return null;
    const wt = await this.worktrees();
    if ((await wt.status(name)).clean) return null;
    const first = j.name ?? `${j.work} ${j.id}`;
    return (await wt.commit(name, `jaggers: ${first} (${j.agent ?? j.target}, ${j.state})`)).sha;
  }

  /** Remove a worktree and its branch: refused while a pane or a job works in it, and (unless forced) while it holds work. */
  async discard(x: string, force: boolean): Promise<Removed> {
    const r = this.resolve(x);
    if (this.inUse().has(r.name))
      throw new JaggersError(
        'E_WORKTREE_BUSY',
        `worktree ${r.name} is in use${r.agent ? ` by ${r.agent}` : ''}: stop its agent first (\`jaggers down\`) or wait for its job to end`,
      );
    return (await this.worktrees()).remove(r.name, { force });
  }

  /**
   * Worktrees whose agent and job are gone (no live pane, no job that has not ended, no agent of that name
   * isolated in jaggers.json): removed when clean and merged (all of them with `force`); the rest listed with why.
   */
  async gc(force: boolean, project: ProjectFile | null): Promise<{ removed: Removed[]; kept: GcCandidate[] }> {
    const wt = await this.worktrees();
    const used = this.inUse();
    for (const a of project?.agents ?? []) if (a.isolation === 'worktree') used.add(a.name);
    const removed: Removed[] = [];
    const kept: GcCandidate[] = [];
    for (const c of await wt.gcCandidates(used)) {
      if (c.removable || force) removed.push(await wt.remove(c.name, { force }));
      else kept.push(c);
    }
    return { removed, kept };
  }
}

/** The worktree name of a folder inside `.jaggers/worktrees/`, or null. */
export function worktreeOf(dir: string, cwd: string): string | null {
  const rel = path.relative(dir, path.resolve(cwd));
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep)[0] ?? null;
}

/** A job's own worktree (`--worktree`: named after the job), or null. */
export function jobWorktree(j: JobRecord): string | null {
  return j.worktree ? j.id : null;
}
