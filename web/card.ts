// What one agent's card shows, computed from the model (pure, so it is tested without a browser):
// its state in words, how long it has been in it, the work item it runs and what waits behind it, its
// pinned session, its worktree, and the question it waits on.
import { ACTIVE_JOB_STATES, agentKey, type Model } from './model.js';
import type { AgentState, JobView, TerminalView } from './types.js';

export interface WorkLine {
  id: string;
  label: string;
  state: string;
  /** Why it has not gone in yet (queued items), or the job's last reason. */
  note: string | null;
}

export interface CardView {
  key: string;
  agent: string;
  task: string | null;
  /** The host it runs on (docs/hosts.md), or null: this machine. */
  host: string | null;
  profile: string | null;
  state: AgentState;
  word: string;
  since: string | null;
  /** Time in this state, `12 s`, `3 min 4 s`; empty when unknown. */
  elapsed: string;
  current: WorkLine | null;
  behind: WorkLine[];
  pendingMessages: number;
  sessionId: string | null;
  worktree: { name: string; branch: string | null; path: string } | null;
  waitingFor: string | null;
  question: { text: string; choices: string[]; selected?: number } | null;
  problem: string | null;
  /** At a usage limit: when it resets (ISO; null when the CLI did not say) and when its queue goes on. */
  limit: { resetAt: string | null; retryAt: string } | null;
}

/** The state in words, as `jaggers ls` says it; a person reads "waiting for you" faster than waiting_input. */
export const STATE_WORDS: Record<AgentState, string> = {
  starting: 'starting',
  idle: 'idle',
  busy: 'busy',
  waiting_input: 'waiting for you',
  done: 'done',
  error: 'error',
  limited: 'at a usage limit',
  exited: 'exited',
};

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** A job as one line: its name, else the first line of its prompt (not the file the prompt went by), cut short. */
export function jobLabel(j: Pick<JobView, 'name' | 'prompt' | 'work'>): string {
  const prompt = /^\.jaggers\/\S+$/.test(j.prompt ?? '') ? '' : (j.prompt ?? '');
  const first = (j.name ?? prompt).split('\n').find((l) => l.trim() !== '') ?? '';
  const text = first.length > 80 ? `${first.slice(0, 79)}…` : first;
  return j.work && j.work !== 'job' ? `${j.work}${text ? `: ${text}` : ''}` : text;
}

const line = (j: JobView, note: string | null): WorkLine => ({ id: j.id, label: jobLabel(j), state: j.state, note });

/** The jobs of one terminal: the one it runs now, and the queued ones in their order. */
export function workOf(jobs: Iterable<JobView>, terminalId: string | null): { current: WorkLine | null; behind: WorkLine[] } {
  if (!terminalId) return { current: null, behind: [] };
  const mine = [...jobs].filter((j) => j.terminalId === terminalId).sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  const now = mine.find((j) => ACTIVE_JOB_STATES.has(j.state));
  const behind = mine.filter((j) => j.state === 'queued').map((j) => line(j, j.waiting));
  return { current: now ? line(now, null) : null, behind };
}

/** The agent's worktree: one made on its own machine (a host agent's on that host, `host` in the list). */
export function worktreeOf(m: Model, t: TerminalView): CardView['worktree'] {
  const names = t.task ? [`${t.agent}.${t.task}`, t.task] : [t.agent];
  const w = m.worktrees.find(
    (w) => w.job === null && (w.host ?? null) === (t.host ?? null) && names.includes(w.name) && (w.agent === null || w.agent === t.agent),
  );
  return w ? { name: w.name, branch: w.branch, path: w.path } : null;
}

export function cardView(m: Model, t: TerminalView, now: number): CardView {
  const key = agentKey(t);
  // A host agent's work is recorded here under `<agent>@<host>` (src/work/remote-work.ts), not its terminal id there.
  const { current, behind } = workOf(m.jobs.values(), t.host ? `${t.agent}@${t.host}` : t.terminalId);
  return {
    key,
    agent: t.agent,
    task: t.task,
    host: t.host ?? null,
    profile: t.profile,
    state: t.state,
    word: STATE_WORDS[t.state] ?? t.state,
    since: t.since,
    elapsed: t.since ? formatDuration(now - Date.parse(t.since)) : '',
    current,
    behind,
    pendingMessages: m.pending.get(key) ?? 0,
    sessionId: t.sessionId,
    worktree: worktreeOf(m, t),
    waitingFor: t.waitingFor,
    question: t.state === 'waiting_input' && t.question ? t.question : null,
    problem: t.problem,
    limit: t.state === 'limited' && t.limit ? { resetAt: t.limit.resetAt, retryAt: t.limit.retryAt } : null,
  };
}
