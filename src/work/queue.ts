// The per-agent queue, read from the registry: every work item for one terminal (jobs of every kind and
// inbox messages) in one first-in-first-out order. An item in flight (a turn a supervisor started, a
// message claimed for delivery) is at the head: only the head ever runs, so there is at most one.
import { isFinal, type JobRecord, type MessageRecord, type RegistryData } from '../sessions/registry.js';

export type WorkItem =
  { kind: 'job'; id: string; seq: number; created: string; j: JobRecord } | { kind: 'message'; id: string; seq: number; created: string; m: MessageRecord };

const job = (j: JobRecord): WorkItem => ({ kind: 'job', id: j.id, seq: j.seq, created: j.created, j });
const message = (m: MessageRecord): WorkItem => ({ kind: 'message', id: m.id, seq: m.seq, created: m.created, m });

/** Started and not ended: its turn is under way (or was, when a supervisor died). */
export function inFlight(i: WorkItem): boolean {
  return i.kind === 'job' ? i.j.state !== 'queued' && !isFinal(i.j.state) : i.m.state === 'claimed';
}

/** The agent an item goes to, by name. */
export function itemAgent(i: WorkItem): string {
  return i.kind === 'job' ? (i.j.agent ?? i.j.target) : i.m.toAgent;
}

/** What an item is, in words: `job j-1a2b3c4d5e6f`, `handoff j-...`, `message m-...`. */
export function describeItem(i: WorkItem): string {
  return i.kind === 'job' ? `${i.j.headless ? 'headless ' : ''}${i.j.work} ${i.id}` : `message ${i.id}`;
}

/** The terminal's items that have not ended, in the order they run: the one in flight, then by their place in the registry. */
export function queueOf(data: RegistryData, terminalId: string): WorkItem[] {
  const items: WorkItem[] = [];
  for (const j of Object.values(data.jobs)) if (j.terminalId === terminalId && !isFinal(j.state)) items.push(job(j));
  for (const m of Object.values(data.messages)) if (m.to === terminalId && m.state !== 'delivered') items.push(message(m));
  // A compaction goes in between turns, before the items that wait (its context would only grow with them).
  return items.sort(
    (a, b) => Number(inFlight(b)) - Number(inFlight(a)) || Number(isCompact(b)) - Number(isCompact(a)) || a.seq - b.seq || a.created.localeCompare(b.created),
  );
}

const isCompact = (i: WorkItem): boolean => i.kind === 'job' && i.j.work === 'compact';

/** Every terminal that has an item waiting or in flight. */
export function terminalsWithWork(data: RegistryData): Set<string> {
  const ids = new Set<string>();
  for (const j of Object.values(data.jobs)) if (j.terminalId && !isFinal(j.state)) ids.add(j.terminalId);
  for (const m of Object.values(data.messages)) if (m.state !== 'delivered') ids.add(m.to);
  return ids;
}

/** Where an item stands in its agent's queue: 0 is the head; -1 when it is not queued there. */
export function placeOf(data: RegistryData, terminalId: string, id: string): { place: number; head: WorkItem | null } {
  const q = queueOf(data, terminalId);
  return { place: q.findIndex((i) => i.id === id), head: q[0] ?? null };
}
