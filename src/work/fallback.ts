// A usage limit's fallback (docs/limits.md): while an agent is `limited`, the jobs and handoffs waiting
// in its queue move to what jaggers.json names as its `fallback`, each move journaled (a job-state event
// that names where it went, with the reason). The fallback is another agent, or a profile: then each job
// goes to an idle agent of that profile (one with nothing in its queue), or becomes a worker's job of the
// profile, whose window the launcher opens (src/work/workers.ts). The job keeps its id, its prompt or
// handover file and whoever asked for it, so its reply still goes home to the original asker.
import type { Log } from '../logger.js';
import type { JobRecord } from '../sessions/registry.js';
import type { WorkJournal } from './journal.js';
import type { Agents, Store, TerminalEntry } from './ports.js';
import { queueOf } from './queue.js';

/** What an agent's `fallback` names: another agent of jaggers.json (by name), or a profile. */
export type FallbackTarget = string | { profile: string };

export interface FallbackPorts {
  store: Pick<Store, 'data'>;
  journal: Pick<WorkJournal, 'change'>;
  agents: Pick<Agents, 'find' | 'status'> & Partial<Pick<Agents, 'list'>>;
  /** What jaggers.json names as `fallback` of `agent`, if anything. */
  fallbackOf(agent: string): Promise<FallbackTarget | undefined>;
  /** Workers of profiles: a job moved to a profile waits for its window (opened by the launcher). */
  workers?: { pump(): void };
  /** The fallback's queue has new work. */
  kick(terminalId: string): void;
  log: Log;
}

/** Work that can go to another agent: a job or a handoff not started yet (a send, a workflow's turn and a message belong to their agent). */
export function movable(j: JobRecord): boolean {
  return j.state === 'queued' && j.kind === 'agent' && (j.work === 'job' || j.work === 'handoff');
}

/**
 * Move the waiting jobs of `terminalId` (limited: `why`) to its agent's fallback. Returns how many moved;
 * none when it has no fallback, or the fallback agent has no window or is limited itself.
 */
export async function moveToFallback(p: FallbackPorts, terminalId: string, agent: string, why: string): Promise<number> {
  const to = await p.fallbackOf(agent).catch(() => undefined);
  if (!to) return 0;
  if (typeof to !== 'string') return toProfile(p, terminalId, agent, why, to.profile);
  const e = p.agents.find(to);
  if (!e || !usable(p, e, terminalId)) return 0;
  const toTerminal = e.pane.terminalId!;
  let moved = 0;
  for (const j of waiting(p, terminalId)) {
    const reason = `moved from ${agent} to ${to} (its fallback): ${agent} ${why}`;
    if (!(await p.journal.change(j.id, 'queued', reason, { terminalId: toTerminal, agent: to }))) continue;
    moved++;
    p.log.info({ job: j.id, from: agent, to }, 'work item moved to the fallback agent');
  }
  if (moved > 0) p.kick(toTerminal);
  return moved;
}

/** Each waiting job to an idle agent of `profile` while there is one, the rest to new workers of it. */
async function toProfile(p: FallbackPorts, terminalId: string, agent: string, why: string, profile: string): Promise<number> {
  const idle = (p.agents.list?.() ?? []).filter((e) => e.pane.profile === profile && usable(p, e, terminalId) && idleNow(p, e));
  const kicked = new Set<string>();
  let moved = 0;
  let workers = 0;
  for (const j of waiting(p, terminalId)) {
    const e = idle.shift();
    const toTerminal = e?.pane.terminalId;
    const changed =
      e && toTerminal
        ? await p.journal.change(j.id, 'queued', `moved from ${agent} to ${e.pane.agent} (an idle agent of ${profile}, its fallback): ${agent} ${why}`, {
            terminalId: toTerminal,
            agent: e.pane.agent!,
          })
        : p.workers
          ? await p.journal.change(j.id, 'queued', `moved from ${agent} to a new ${profile} worker (its fallback): ${agent} ${why}`, {
              terminalId: null,
              worker: { target: profile },
            })
          : null;
    if (!changed) continue;
    moved++;
    if (toTerminal) kicked.add(toTerminal);
    else workers++;
    p.log.info({ job: j.id, from: agent, to: changed.agent ?? `${profile} worker`, profile }, 'work item moved to the fallback profile');
  }
  for (const t of kicked) p.kick(t);
  if (workers > 0) p.workers?.pump();
  return moved;
}

function waiting(p: FallbackPorts, terminalId: string): JobRecord[] {
  return queueOf(p.store.data, terminalId).flatMap((i) => (i.kind === 'job' && movable(i.j) ? [i.j] : []));
}

/** A pane that can take the work: another terminal's, alive, not limited itself. */
function usable(p: FallbackPorts, e: TerminalEntry, from: string): boolean {
  if (!e.pane.terminalId || e.pane.terminalId === from || e.pane.dead) return false;
  const status = p.agents.status(e.pane.paneId);
  return status !== 'limited' && status !== 'exited';
}

/** Ready for a prompt now, with nothing in its queue. */
function idleNow(p: FallbackPorts, e: TerminalEntry): boolean {
  const status = p.agents.status(e.pane.paneId) ?? 'starting';
  const ready = (e.profile?.delivery.ready ?? ['idle', 'done']) as readonly string[];
  return ready.includes(status) && queueOf(p.store.data, e.pane.terminalId!).length === 0;
}
