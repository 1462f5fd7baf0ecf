// The per-agent queue, read from the registry: every work item for one terminal (jobs of every kind and
// inbox messages) in one first-in-first-out order. An item in flight (a turn a supervisor started, a
// message claimed for delivery) is at the head: only the head ever runs, so there is at most one.
import { isFinal, type JobRecord, type MessageRecord, type RegistryData } from '../sessions/registry.js';
import { changesSince, tableVersion } from '../sessions/work.js';

export type WorkItem =
  { kind: 'job'; id: string; seq: number; created: string; j: JobRecord } | { kind: 'message'; id: string; seq: number; created: string; m: MessageRecord };

/** A message to deliver here: not delivered yet, and not one in the outbox (taken home by another supervisor, docs/hosts.md). */
const open = (m: MessageRecord): boolean => m.state !== 'delivered' && !m.outbox;
/** A job to run here: for a terminal, not ended, and not one in the outbox (run by the supervisor that started this host). */
const openJob = (j: JobRecord): boolean => !!j.terminalId && !isFinal(j.state) && !j.outbox;
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

/** Each terminal's items that have not ended, in the order they run; derived from the record tables as they are. */
interface OpenItems {
  messages: object;
  jobsVersion: number;
  messagesVersion: number;
  byTerminal: Map<string, WorkItem[]>;
  /** Where each open item is queued (`j:<id>`, `m:<id>`): its terminal. */
  where: Map<string, string>;
}

/**
 * By jobs table: the open items found in it and a messages table, kept up to date from the keys each
 * change of the tables touched (src/sessions/work.ts `changesSince`). The runner asks for a queue on every
 * change of every agent; a scan of every record each time made a burst of n items cost n^2.
 */
const openCache = new WeakMap<object, OpenItems>();

/** The order items run in. A compaction goes in between turns, before the items that wait (its context would only grow with them). */
const runOrder = (a: WorkItem, b: WorkItem): number =>
  Number(inFlight(b)) - Number(inFlight(a)) || Number(isCompact(b)) - Number(isCompact(a)) || a.seq - b.seq || a.created.localeCompare(b.created);

/** Past this many changed records, the index is made again whole. */
const INCREMENTAL_MAX = 256;

function openItems(data: RegistryData): Map<string, WorkItem[]> {
  const jobsVersion = tableVersion(data.jobs);
  const messagesVersion = tableVersion(data.messages);
  const hit = openCache.get(data.jobs);
  if (hit && hit.messages === data.messages) {
    if (hit.jobsVersion === jobsVersion && hit.messagesVersion === messagesVersion) return hit.byTerminal;
    const jobs = changesSince(data.jobs, hit.jobsVersion);
    const messages = changesSince(data.messages, hit.messagesVersion);
    if (jobs && messages && jobs.length + messages.length <= INCREMENTAL_MAX) {
      const dirty = new Set<string>();
      for (const id of new Set(jobs)) {
        const j = Object.hasOwn(data.jobs, id) ? data.jobs[id] : undefined;
        reindex(hit, dirty, `j:${id}`, id, j && openJob(j) ? { terminalId: j.terminalId!, item: job(j) } : null);
      }
      for (const id of new Set(messages)) {
        const m = Object.hasOwn(data.messages, id) ? data.messages[id] : undefined;
        reindex(hit, dirty, `m:${id}`, id, m && open(m) ? { terminalId: m.to, item: message(m) } : null);
      }
      for (const t of dirty) {
        const q = hit.byTerminal.get(t);
        if (q?.length === 0) hit.byTerminal.delete(t);
        else q?.sort(runOrder);
      }
      hit.jobsVersion = jobsVersion;
      hit.messagesVersion = messagesVersion;
      return hit.byTerminal;
    }
  }
  const byTerminal = new Map<string, WorkItem[]>();
  const where = new Map<string, string>();
  const add = (key: string, terminalId: string, item: WorkItem) => {
    const q = byTerminal.get(terminalId);
    if (q) q.push(item);
    else byTerminal.set(terminalId, [item]);
    where.set(key, terminalId);
  };
  for (const id in data.jobs) {
    const j = data.jobs[id]!;
    if (openJob(j)) add(`j:${id}`, j.terminalId!, job(j));
  }
  for (const id in data.messages) {
    const m = data.messages[id]!;
    if (open(m)) add(`m:${id}`, m.to, message(m));
  }
  for (const q of byTerminal.values()) q.sort(runOrder);
  openCache.set(data.jobs, { messages: data.messages, jobsVersion, messagesVersion, byTerminal, where });
  return byTerminal;
}

/** One record changed: its item leaves the queue it was in, and joins its terminal's again while it is open. */
function reindex(o: OpenItems, dirty: Set<string>, key: string, id: string, now: { terminalId: string; item: WorkItem } | null): void {
  const was = o.where.get(key);
  if (was !== undefined) {
    const q = o.byTerminal.get(was)!;
    const kind = key.startsWith('j:') ? 'job' : 'message';
    const at = q.findIndex((i) => i.id === id && i.kind === kind);
    if (at >= 0) q.splice(at, 1);
    o.where.delete(key);
    dirty.add(was);
  }
  if (now) {
    const q = o.byTerminal.get(now.terminalId);
    if (q) q.push(now.item);
    else o.byTerminal.set(now.terminalId, [now.item]);
    o.where.set(key, now.terminalId);
    dirty.add(now.terminalId);
  }
}

/** The terminal's items that have not ended, in the order they run: the one in flight, then by their place in the registry. */
export function queueOf(data: RegistryData, terminalId: string): WorkItem[] {
  return [...(openItems(data).get(terminalId) ?? [])];
}

const isCompact = (i: WorkItem): boolean => i.kind === 'job' && i.j.work === 'compact';

/** Every terminal that has an item waiting or in flight. */
export function terminalsWithWork(data: RegistryData): Set<string> {
  return new Set(openItems(data).keys());
}

/** Where an item stands in its agent's queue: 0 is the head; -1 when it is not queued there. */
export function placeOf(data: RegistryData, terminalId: string, id: string): { place: number; head: WorkItem | null } {
  const q = queueOf(data, terminalId);
  return { place: q.findIndex((i) => i.id === id), head: q[0] ?? null };
}
