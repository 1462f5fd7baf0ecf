// A usage limit's fallback (docs/limits.md): while an agent is `limited`, the jobs and handoffs waiting
// in its queue move to the agent jaggers.json names as its `fallback`, each move journaled (a job-state
// event that names the new terminal and agent, with the reason). The job keeps its id, its prompt or
// handover file and whoever asked for it, so its reply still goes home to the original asker.
import type { Log } from '../logger.js';
import type { JobRecord } from '../sessions/registry.js';
import type { WorkJournal } from './journal.js';
import type { Agents, Store } from './ports.js';
import { queueOf } from './queue.js';

export interface FallbackPorts {
  store: Pick<Store, 'data'>;
  journal: Pick<WorkJournal, 'change'>;
  agents: Pick<Agents, 'find' | 'status'>;
  /** The agent jaggers.json names as `fallback` of `agent`, if any. */
  fallbackOf(agent: string): Promise<string | undefined>;
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
 * none when it has no fallback, the fallback has no window or is limited itself.
 */
export async function moveToFallback(p: FallbackPorts, terminalId: string, agent: string, why: string): Promise<number> {
  const name = await p.fallbackOf(agent).catch(() => undefined);
  if (!name) return 0;
  const to = p.agents.find(name);
  const toTerminal = to?.pane.terminalId;
  if (!to || !toTerminal || toTerminal === terminalId || to.pane.dead) return 0;
  const status = p.agents.status(to.pane.paneId);
  if (status === 'limited' || status === 'exited') return 0;
  let moved = 0;
  for (const item of queueOf(p.store.data, terminalId)) {
    if (item.kind !== 'job' || !movable(item.j)) continue;
    const reason = `moved from ${agent} to ${name} (its fallback): ${agent} ${why}`;
    const j = await p.journal.change(item.id, 'queued', reason, { terminalId: toTerminal, agent: name });
    if (!j) continue;
    moved++;
    p.log.info({ job: item.id, from: agent, to: name }, 'work item moved to the fallback agent');
  }
  if (moved > 0) p.kick(toTerminal);
  return moved;
}
