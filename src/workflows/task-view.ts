// A task as `tasks` and `show` present it, from the registry alone: the supervisor serves it, and a
// command reads it from `.jaggers/` when no session runs.
import type { WorkflowContext } from '../../machines/workflow.machine.js';
import type { TaskTurnView, TaskView } from '../api/types.js';
import { readConfinedText, type ConfineDirs } from '../fs/confine.js';
import { parseArtifact } from '../handover/artifact.js';
import { derivedJobId, JOB_ID, own } from '../ids.js';
import { isFinal, type JobRecord, type RegistryData, type TaskRecord } from '../sessions/registry.js';
import { windowName } from '../window-name.js';
import { tokenTotal } from '../usage/tokens.js';

export { FINAL_STATES as TASK_FINAL } from '../states.js';

/** The job of a task's turn: the same task, turn and attempt always give the same id. */
export function turnJobId(task: string, seq: number, attempt: number): string {
  return derivedJobId(task, seq, attempt);
}

/**
 * The work items of each task (a job's own task is the job), in their order: indexed once per registry
 * state. Keyed by the registry data itself, a new object for every change (the owner changes the jobs'
 * table in place, so the table is no key).
 */
const itemIndex = new WeakMap<RegistryData, Map<string, JobRecord[]>>();

function itemsOf(data: RegistryData, task: string): JobRecord[] {
  let index = itemIndex.get(data);
  if (!index) {
    index = new Map();
    for (const j of Object.values(data.jobs)) {
      const key = j.task ?? j.id;
      const list = index.get(key);
      if (list) list.push(j);
      else index.set(key, [j]);
    }
    for (const list of index.values()) list.sort((a, b) => a.seq - b.seq);
    itemIndex.set(data, index);
  }
  return index.get(task) ?? [];
}

/** A job's own task (its handover files are under the job's id): listed by `jobs`, not by `tasks`. */
export function isJobTask(t: Pick<TaskRecord, 'id' | 'workflow'>): boolean {
  return t.workflow === 'job' && JOB_ID.test(t.id);
}

function itemTurn(j: JobRecord): TaskTurnView {
  const started = j.history.find((h) => h.state === 'starting' || h.state === 'running')?.at ?? null;
  const ended = isFinal(j.state) ? j.updated : null;
  return {
    seq: j.turn ?? 0,
    step: j.work,
    agent: j.agent ?? j.target,
    round: 1,
    job: j.id,
    attempts: 1,
    state: j.state,
    reason: j.reason,
    prompt: j.artifact,
    reply: j.reply,
    sessionId: null,
    started,
    ended,
    ms: started && ended ? Date.parse(ended) - Date.parse(started) : null,
  };
}

/**
 * A task that no workflow runs (a handoff's, the demo's, `up --task`'s, a job's own), as its work items
 * say: each item a turn; running, waiting or queued while one has not ended (the reducer records each
 * item's end on the task, so its status and final reply outlive items pruned from the snapshot).
 */
function itemsView(t: TaskRecord, data: RegistryData, base: TaskView, turns: boolean): TaskView {
  const items = itemsOf(data, t.id);
  if (items.length === 0) return base;
  const open = items.find((j) => !isFinal(j.state));
  const updated = items.reduce((m, j) => (j.updated > m ? j.updated : m), base.updated ?? base.created);
  const view: TaskView = { ...base, seq: items.length, updated, turns: turns ? items.map(itemTurn) : [] };
  if (!open) return view;
  const status = open.state === 'waiting_input' ? 'waiting' : open.state === 'queued' ? 'queued' : 'running';
  const agent = open.agent ?? open.target;
  return {
    ...view,
    status,
    reason: `${open.work} ${open.id} to ${agent}: ${open.reason}`,
    agent,
    attach: status === 'waiting' ? `jaggers attach ${windowName(agent, data.terminals[open.terminalId ?? '']?.task ?? null)}` : null,
  };
}

export function taskView(t: TaskRecord, data: RegistryData, live: boolean, turns = true): TaskView {
  const view = workflowView(t, data, live, turns);
  const usage = tokenTotal(own(data.usage.tasks, t.id));
  return { ...(t.definition ? view : itemsView(t, data, view, turns)), usage };
}

function workflowView(t: TaskRecord, data: RegistryData, live: boolean, turns: boolean): TaskView {
  const ctx = (t.snapshot?.context ?? null) as WorkflowContext | null;
  const windowOf = (agent: string | null) => (agent ? `${agent}+${t.id}` : null);
  const list: TaskTurnView[] = turns
    ? (ctx?.turns ?? []).map((x) => {
        const jobs = [1, 2, 3].map((k) => data.jobs[turnJobId(t.id, x.seq, k)]).filter((j): j is JobRecord => !!j);
        const j = jobs.find((y) => y.state === 'done') ?? jobs.at(-1);
        const started = j?.history.find((h) => h.state === 'starting' || h.state === 'running')?.at ?? null;
        const ended = j && isFinal(j.state) ? j.updated : null;
        return {
          seq: x.seq,
          step: x.step,
          agent: x.agent,
          round: x.round,
          job: j?.id ?? x.job,
          attempts: jobs.length,
          state: j?.state ?? (x.reply ? 'done' : 'queued'),
          reason: j?.reason ?? null,
          prompt: x.prompt ?? j?.artifact ?? null,
          reply: x.reply ?? j?.reply ?? null,
          sessionId: null,
          started,
          ended,
          ms: started && ended ? Date.parse(ended) - Date.parse(started) : null,
        };
      })
    : [];
  const agents = Object.fromEntries(
    Object.entries(t.agents).map(([name, a]) => [
      name,
      { terminalId: a.terminalId, sessionId: data.terminals[a.terminalId]?.sessionId ?? a.sessionId, turns: a.turns },
    ]),
  );
  return {
    id: t.id,
    workflow: t.workflow,
    status: t.status,
    reason: t.reason,
    step: t.step,
    agent: t.agent,
    text: t.text,
    source: t.source,
    roles: t.roles,
    detached: t.detached,
    created: t.created,
    updated: t.updated,
    final: t.final,
    outcome: t.outcome,
    seq: ctx?.seq ?? 0,
    live,
    attach: t.status === 'waiting' && t.agent ? `jaggers attach ${windowOf(t.agent)}` : null,
    agents,
    turns: list,
  };
}

/** Each turn's conversation, read from its handover file. */
export async function withSessions(v: TaskView, data: RegistryData, dirs: ConfineDirs): Promise<TaskView> {
  for (const turn of v.turns) {
    if (!turn.prompt) continue;
    const text = await readConfinedText(dirs, turn.prompt, `task ${v.id}: turn ${turn.seq}`).catch(() => null);
    const s = text ? parseArtifact(text).meta.target_session : null;
    turn.sessionId = typeof s === 'string' ? s : null;
    // A CLI that cannot take an id up front (codex) had none when its first turn was written: the
    // conversation pinned after it, its first, is the one that turn made.
    const t = data.terminals[v.agents[turn.agent]?.terminalId ?? ''];
    if (turn.sessionId === null && t?.sessionId && t.sessionHistory.length === 0 && turn.state === 'done') turn.sessionId = t.sessionId;
  }
  return v;
}
