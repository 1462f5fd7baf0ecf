// The scheduler of flows: one croner job per enabled flow in `.jaggers/flows/`, reloaded when a file
// there changes. A tick runs the flow as a job (agent or profile) or a workflow task, with an id made
// from the flow and the tick, written to `.jaggers/flow-state.json` before the run is created: a
// supervisor killed in between creates that same run on its next start, never a second one. A tick
// while the flow's last run is still going is skipped; a supervisor that was down runs a flow once
// for all the ticks it missed.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import { JaggersError } from '../errors.js';
import { derivedJobId, own } from '../ids.js';
import type { Log } from '../logger.js';
import type { ProjectFile } from '../project/project-file.js';
import { writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { isFinal } from '../sessions/registry.js';
import type { Dirs, Publish, Store } from '../work/ports.js';
import { TASK_FINAL } from '../workflows/task-view.js';
import { checkSchedule, checkTarget, flowsDir, listFlows, missedTick, type FlowDef } from './flow.js';

export interface FlowsPorts {
  store: Store;
  hub: Publish;
  log: Log;
  dirs: Dirs;
  project(): Promise<ProjectFile | null>;
  profileNames(): Promise<string[]>;
  workflowNames(): Promise<string[]>;
  /** A flow run as a job (kind `flow`), or as a detached workflow task. */
  jobs: { create(req: { id: string; target: string; text: string; name: string; timeout?: number; work: 'flow' }): Promise<unknown> };
  tasks: { create(req: { id: string; workflow: string; text: string; agents?: string[]; detached: boolean }): Promise<unknown> };
  stopping: AbortSignal;
}

export interface FlowRun {
  kind: 'job' | 'task';
  id: string;
  /** The tick it ran for (ISO); `manual` runs have the time they were asked for. */
  tick: string;
  how: 'schedule' | 'missed' | 'manual';
}

interface FlowState {
  /** When this scheduler first saw the flow: ticks before it are not owed. */
  seen: string;
  last: FlowRun | null;
  runs: number;
}

export interface FlowView {
  name: string;
  file: string;
  schedule: string | null;
  target: FlowDef['target'] | null;
  enabled: boolean;
  next: string | null;
  last: (FlowRun & { state: string | null }) | null;
  runs: number;
  problem: string | null;
}

const stateFile = (jaggersDir: string) => path.join(jaggersDir, 'flow-state.json');

/** The flows' state by flow name, in a null-prototype object: only a flow's own entry is ever found. */
export async function readFlowState(jaggersDir: string): Promise<Record<string, FlowState>> {
  const state = Object.create(null) as Record<string, FlowState>;
  const text = await readFile(stateFile(jaggersDir), 'utf8').catch(() => null);
  if (text === null) return state;
  try {
    const data = JSON.parse(text) as unknown;
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) Object.assign(state, data);
  } catch {
    // A damaged state file: the flows start over (a run is then owed from now on).
  }
  return state;
}

/** The run's id: the same flow and tick always give the same one. */
export function runId(flow: FlowDef, tick: string): { kind: 'job' | 'task'; id: string } {
  const h = createHash('sha256').update(`${flow.name}\0${tick}`).digest('hex');
  return flow.target.kind === 'workflow'
    ? { kind: 'task', id: `flow-${flow.name.slice(0, 40)}-${h.slice(0, 8)}` }
    : { kind: 'job', id: derivedJobId(flow.name, tick) };
}

export class Flows {
  private crons = new Map<string, Cron>();
  private defs = new Map<string, FlowDef>();
  private problems = new Map<string, { file: string; error: string }>();
  private state: Record<string, FlowState> = {};
  private watcher: FSWatcher | null = null;
  private reloadTimer: NodeJS.Timeout | null = null;
  /** Ticks and runs one at a time: a tick never races a reload or another tick. */
  private chain: Promise<unknown> = Promise.resolve();
  private loadedSig = '';

  constructor(private readonly p: FlowsPorts) {}

  private get dir(): string {
    return flowsDir(this.p.dirs.jaggersDir);
  }

  async start(): Promise<void> {
    this.state = await readFlowState(this.p.dirs.jaggersDir);
    await ensurePrivateFolder(this.dir);
    await this.serial(() => this.reload(true));
    try {
      this.watcher = watch(this.dir, () => {
        if (this.reloadTimer) clearTimeout(this.reloadTimer);
        this.reloadTimer = setTimeout(() => void this.serial(() => this.reload(false)), 150);
      });
      this.watcher.on('error', () => {});
    } catch (e) {
      this.p.log.warn({ err: (e as Error).message, dir: this.dir }, 'flows: cannot watch the folder; changes need a supervisor restart');
    }
  }

  stop(): void {
    this.watcher?.close();
    if (this.reloadTimer) clearTimeout(this.reloadTimer);
    for (const c of this.crons.values()) c.stop();
    this.crons.clear();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => {});
    return p;
  }

  private async known() {
    const project = await this.p.project().catch(() => null);
    const data = await Promise.resolve(this.p.store.data);
    const agents = project
      ? project.agents.map((a) => a.name)
      : [
          ...new Set(
            Object.values(data.terminals)
              .filter((t) => t.task === null)
              .map((t) => t.agent),
          ),
        ];
    return {
      agents,
      profiles: await this.p.profileNames().catch(() => []),
      workflows: await this.p.workflowNames(),
    };
  }

  /** Read the folder again: schedule what is enabled and valid; on start, run what the downtime missed. */
  private async reload(starting: boolean): Promise<void> {
    if (this.p.stopping.aborted) return;
    this.loadedSig = await this.signature();
    const listed = await listFlows(this.p.dirs.jaggersDir);
    // The agents, profiles and workflows a flow may name: read (workflows parsed) only when there are flows.
    let known: Awaited<ReturnType<Flows['known']>> | undefined;
    for (const c of this.crons.values()) c.stop();
    this.crons.clear();
    this.defs.clear();
    this.problems.clear();
    const now = new Date();
    let changed = false;
    for (const f of listed) {
      let def = f.def;
      let error = f.error;
      if (def) {
        known ??= await this.known();
        try {
          checkTarget(def, known);
        } catch (e) {
          error = (e as Error).message;
          def = null;
        }
      }
      if (!def) {
        this.problems.set(f.name, { file: f.file, error: error! });
        this.p.log.warn({ flow: f.name, file: f.file, err: error }, 'flow not scheduled: its file does not load');
        continue;
      }
      this.defs.set(def.name, def);
      if (!this.state[def.name]) {
        this.state[def.name] = { seen: now.toISOString(), last: null, runs: 0 };
        changed = true;
      }
      if (!def.enabled) continue;
      const name = def.name;
      const cron = new Cron(def.schedule, { ...(def.timezone ? { timezone: def.timezone } : {}) }, () => {
        this.serial(() => this.tick(name, new Date(), 'schedule')).catch(() => {});
      });
      this.crons.set(name, cron);
      if (starting) {
        // A run recorded but not created (killed in between): create it now, as it was meant.
        const last = this.state[name]!.last;
        if (last && !(await this.exists(last))) await this.create(def, last);
        const st = this.state[name]!;
        const from = new Date(st.last?.tick ?? st.seen);
        const missed = missedTick(checkSchedule(def.schedule, def.timezone ?? undefined, def.file), from, now);
        if (missed) this.serial(() => this.tick(name, now, 'missed')).catch(() => {});
      }
    }
    if (changed) await this.save();
    this.p.log.info({ flows: [...this.crons.keys()], problems: [...this.problems.keys()] }, 'flows scheduled');
  }

  private async save(): Promise<void> {
    await writeFileAtomic(stateFile(this.p.dirs.jaggersDir), `${JSON.stringify(this.state, null, 2)}\n`);
  }

  private async exists(run: FlowRun): Promise<boolean> {
    const data = await Promise.resolve(this.p.store.data);
    return run.kind === 'job' ? Boolean(own(data.jobs, run.id)) : Boolean(own(data.tasks, run.id)?.definition);
  }

  /** The state of a run: the job's or the task's; null when it is not (yet) recorded. */
  private async runState(run: FlowRun): Promise<string | null> {
    const data = await Promise.resolve(this.p.store.data);
    return run.kind === 'job' ? (own(data.jobs, run.id)?.state ?? null) : (own(data.tasks, run.id)?.status ?? null);
  }

  private async busy(name: string): Promise<FlowRun | null> {
    const last = this.state[name]?.last;
    if (!last) return null;
    const st = await this.runState(last);
    if (st === null) return null;
    const ended = last.kind === 'job' ? isFinal(st as never) : (TASK_FINAL as readonly string[]).includes(st) || st === 'interrupted';
    return ended ? null : last;
  }

  /** One run of a flow, unless its last one still goes (then the tick is skipped and said so). */
  private async tick(name: string, at: Date, how: FlowRun['how']): Promise<FlowRun> {
    const def = this.defs.get(name);
    if (!def) throw new JaggersError('E_FLOW_UNKNOWN', `no flow ${JSON.stringify(name)} is loaded`);
    const going = await this.busy(name);
    if (going) {
      const why = `flow ${name}: its run ${going.id} (${going.tick}) is still going`;
      this.p.log.info({ flow: name, run: going.id, how }, 'flow tick skipped: the last run still goes');
      this.p.hub.publish('notice', { kind: 'flow-skipped', flow: name, run: going.id, reason: why });
      throw new JaggersError('E_FLOW_BUSY', why);
    }
    const tick = at.toISOString();
    const run: FlowRun = { ...runId(def, `${tick}\0${how}`), tick, how };
    const st = this.state[name] ?? { seen: tick, last: null, runs: 0 };
    this.state[name] = { ...st, last: run, runs: st.runs + 1 };
    await this.save();
    await this.create(def, run);
    return run;
  }

  private async create(def: FlowDef, run: FlowRun): Promise<void> {
    try {
      if (run.kind === 'job') {
        await this.p.jobs.create({
          id: run.id,
          target: def.target.name,
          text: def.prompt,
          name: `flow ${def.name}`,
          work: 'flow',
          ...(def.timeout ? { timeout: def.timeout } : {}),
        });
      } else {
        await this.p.tasks.create({ id: run.id, workflow: def.target.name, text: def.prompt, ...(def.agents ? { agents: def.agents } : {}), detached: true });
      }
      this.p.log.info({ flow: def.name, run: run.id, how: run.how, tick: run.tick }, 'flow run started');
      this.p.hub.publish('notice', { kind: 'flow-run', flow: def.name, run: run.id, how: run.how });
    } catch (e) {
      this.p.log.error({ flow: def.name, run: run.id, err: (e as Error).message }, 'flow run could not start');
      throw e;
    }
  }

  /** `flow run <name>` / POST /v1/flows/{name}/run: a run now (refused while one goes). */
  async runNow(name: string): Promise<FlowView> {
    await this.serial(async () => {
      if ((await this.signature()) !== this.loadedSig) await this.reload(false);
      const problem = this.problems.get(name);
      if (problem) throw new JaggersError('E_FLOW_INVALID', problem.error);
      if (!this.defs.has(name))
        throw new JaggersError('E_FLOW_UNKNOWN', `no flow ${JSON.stringify(name)} in ${this.dir}; flows: ${[...this.defs.keys()].join(', ') || 'none'}`);
      return this.tick(name, new Date(), 'manual');
    });
    return this.get(name);
  }

  /** The files as they are now (a change the watcher has not passed on yet counts too). */
  private async fresh(): Promise<void> {
    const sig = await this.signature();
    if (sig !== this.loadedSig) await this.serial(() => this.reload(false));
    else await this.chain;
  }

  private async signature(): Promise<string> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.md')).sort();
    const stats = await Promise.all(
      names.map((n) =>
        stat(path.join(this.dir, n)).then(
          (x) => `${n}:${x.mtimeMs}:${x.size}`,
          () => n,
        ),
      ),
    );
    return stats.join('|');
  }

  async list(): Promise<FlowView[]> {
    await this.fresh();
    const names = [...new Set([...this.defs.keys(), ...this.problems.keys()])].sort();
    return Promise.all(names.map((n) => this.view(n)));
  }

  async get(name: string): Promise<FlowView> {
    await this.fresh();
    return this.view(name);
  }

  private async view(name: string): Promise<FlowView> {
    const def = this.defs.get(name);
    const problem = this.problems.get(name);
    if (!def && !problem) throw new JaggersError('E_FLOW_UNKNOWN', `no flow ${JSON.stringify(name)}; flows: ${[...this.defs.keys()].join(', ') || 'none'}`);
    const st = this.state[name];
    return {
      name,
      file: path.relative(this.p.dirs.projectRoot, def?.file ?? problem!.file),
      schedule: def?.schedule ?? null,
      target: def?.target ?? null,
      enabled: def?.enabled ?? false,
      next: this.crons.get(name)?.nextRun()?.toISOString() ?? null,
      last: st?.last ? { ...st.last, state: await this.runState(st.last) } : null,
      runs: st?.runs ?? 0,
      problem: problem?.error ?? null,
    };
  }
}
