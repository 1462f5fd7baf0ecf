// Recording what happens to a work item: each change of its state is journaled with its reason (and an
// ended one cannot change again: the reducer refuses it), published on the event stream, and an ended
// item's result goes home, to the inbox of whoever assigned it, in the same journal entry.
import type { Log } from '../logger.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { isFinal, type JobRecord, type JobState, type RegistryData } from '../sessions/registry.js';
import { homeMessage, renderJobResult } from './files.js';
import type { Dirs, Publish, Store } from './ports.js';

export type JobChange = Partial<Omit<Extract<NewJournalEvent, { type: 'job-state' }>, 'type' | 'jobId' | 'state' | 'reason'>>;

export interface WorkJournalPorts {
  store: Store;
  hub: Publish;
  log: Log;
  dirs: Dirs;
  /** After an item ended (recorded): a worker's window closes, its slot frees, whoever gets the result looks at its queue. */
  ended(j: JobRecord): Promise<void>;
  /**
   * An item ended (recorded), before anyone is told: what must be true once its end is seen (the changes
   * it made in its agent's worktree committed). Never throws.
   */
  settle?(j: JobRecord): Promise<void>;
}

export class WorkJournal {
  constructor(private readonly p: WorkJournalPorts) {}

  get data(): RegistryData {
    return this.p.store.data;
  }

  /**
   * Record a state change unless the item already ended; a final state also sends the result home.
   * Returns the record after the change, or null when the item had already ended.
   */
  async change(id: string, state: JobState, reason: string, more: JobChange = {}, replyText: string | null = null): Promise<JobRecord | null> {
    const changed = await this.p.store.update(async (d) => {
      const cur = d.jobs[id];
      if (!cur || isFinal(cur.state)) return { events: [], result: false };
      const events: NewJournalEvent[] = [{ ...more, type: 'job-state', jobId: id, state, reason }];
      if (isFinal(state)) events.push(...(await this.resultEvents(d, { ...cur, ...more, state, reason } as JobRecord, replyText)));
      return { events, result: true };
    });
    if (!changed) return null;
    return this.after(id);
  }

  /** Publish an item's record as it is now, and act on its end. For changes recorded elsewhere (a reply and the item's end in one entry). */
  async after(id: string): Promise<JobRecord | null> {
    let j = this.p.store.data.jobs[id];
    if (!j) return null;
    if (isFinal(j.state) && this.p.settle) {
      await this.p.settle(j);
      j = this.p.store.data.jobs[id] ?? j;
    }
    this.published(j);
    this.p.log.info({ job: id, work: j.work, agent: j.agent, state: j.state, reason: j.reason }, 'work item state');
    if (isFinal(j.state)) await this.p.ended(j);
    return j;
  }

  /** The message that takes an item's end to the inbox of whoever assigned it (written inside the registry's update). */
  async resultEvents(d: RegistryData, j: JobRecord, replyText: string | null): Promise<NewJournalEvent[]> {
    const home = j.from ? d.terminals[j.from] : undefined;
    // A handoff's caller waits for its reply itself; a send has no reply.
    if (!home || j.work === 'handoff' || j.work === 'send') return [];
    const header = { fromAgent: j.agent ?? j.target, from: j.terminalId, toAgent: home.agent, to: home.terminalId, job: j.id };
    return [await homeMessage(this.p.dirs, header, renderJobResult(j, replyText))];
  }

  published(j: JobRecord): void {
    this.p.hub.publish('job', {
      id: j.id,
      name: j.name,
      work: j.work,
      state: j.state,
      reason: j.reason,
      code: j.code,
      agent: j.agent,
      terminalId: j.terminalId,
      target: j.target,
      kind: j.kind,
      from: j.from,
      reply: j.reply,
      ...(j.outbox ? { outbox: true } : {}),
      ...(j.fromHost ? { fromHost: j.fromHost } : {}),
    });
  }
}
