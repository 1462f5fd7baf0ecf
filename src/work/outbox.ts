// A host's outbox (docs/hosts.md): what this host's agents asked of agents of the machine that started
// this supervisor (jaggers.json's `home`). Messages (src/work/inbox.ts) and items (a job of `assign`, a
// `handoff`, src/work/jobs.ts) wait here, in no queue, until that supervisor takes them home by id
// (`taken`). A message is then delivered; an item runs there under the same id, and its states and end
// come back (`report`): the end is journaled here with its reply, and an `assign`'s result goes to the
// asking agent's inbox here, as a local job's does. A report sent again is applied once.
import path from 'node:path';
import type { JobView } from '../api/types.js';
import { JaggersError } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import { isFinal, type JobRecord, type JobState } from '../sessions/registry.js';
import { writeDurable } from './files.js';
import type { OutboxMessage } from './inbox.js';
import type { WorkJournal } from './journal.js';
import type { Dirs } from './ports.js';
import { HOME, remoteReplyFile } from './remote-work.js';

/** An item waiting in the outbox, or taken home and not ended: with its prompt, and whether it was taken. */
export type OutboxJob = JobView & { item: 'job'; text: string; taken: boolean };
export type OutboxItem = (OutboxMessage & { item: 'message' }) | OutboxJob;

/** How an item taken home stands there: its state and why; at its end, its error code and its reply's text. */
export interface OutboxReport {
  state: JobState;
  reason: string;
  code?: string;
  reply?: string | null;
}

export interface OutboxPorts {
  inbox: { outbox(): Promise<OutboxMessage[]>; taken(id: string): Promise<unknown> };
  journal: WorkJournal;
  jobs: { get(id: string): Promise<JobView> };
  dirs: Dirs;
}

export class Outbox {
  constructor(private readonly p: OutboxPorts) {}

  /** What waits for home: messages not taken, and items not ended (taken or not), oldest first. */
  async list(): Promise<OutboxItem[]> {
    const messages = (await this.p.inbox.outbox()).map((m) => ({ ...m, item: 'message' as const }));
    const waiting = Object.values(this.p.journal.data.jobs).filter((j) => j.outbox && !isFinal(j.state));
    const jobs = await Promise.all(
      waiting.map(async (j) => ({
        ...(await this.p.jobs.get(j.id)),
        item: 'job' as const,
        text: await readConfinedText(this.p.dirs, j.prompt, `job ${j.id}: its prompt`),
        taken: j.state !== 'queued',
      })),
    );
    return [...messages, ...jobs].sort((a, b) => a.seq - b.seq);
  }

  /** Taken home: a message leaves the outbox; an item is in its agent's queue there (`starting` here). Taken twice is taken once. */
  async taken(id: string): Promise<unknown> {
    if (!Object.hasOwn(this.p.journal.data.jobs, id)) return this.p.inbox.taken(id);
    const j = this.item(id);
    if (j.state === 'queued') await this.p.journal.change(id, 'starting', `taken home: in ${j.agent ?? j.target}'s queue there`);
    return this.p.jobs.get(id);
  }

  /** How an item taken home stands there now (journaled when it changed); its end with its reply. Ended here: nothing changes. */
  async report(id: string, r: OutboxReport): Promise<JobView> {
    const j = this.item(id);
    if (isFinal(j.state)) return this.p.jobs.get(id);
    const agent = j.agent ?? j.target;
    if (!isFinal(r.state)) {
      // Queued there is taken here: `queued` here means still in the outbox.
      const state = r.state === 'queued' ? 'starting' : r.state;
      const reason = `on ${HOME}: ${r.reason}`;
      if (j.state !== state || j.reason !== reason) await this.p.journal.change(id, state, reason);
      return this.p.jobs.get(id);
    }
    let reply: string | undefined;
    if (r.state === 'done' && r.reply != null) {
      const file = remoteReplyFile(this.p.dirs.jaggersDir, id);
      await writeDurable(file, `${['---', `job: ${id}`, `agent: ${agent}`, `host: ${HOME}`, '---'].join('\n')}\n${r.reply}\n`);
      reply = path.relative(this.p.dirs.projectRoot, file);
    }
    const code = r.code !== undefined && /^E_[A-Z_]+$/.test(r.code) ? r.code : undefined;
    await this.p.journal.change(id, r.state, `${agent} on ${HOME}: ${r.reason}`, { ...(reply ? { reply } : {}), ...(code ? { code } : {}) }, r.reply ?? null);
    return this.p.jobs.get(id);
  }

  private item(id: string): JobRecord {
    const j = Object.hasOwn(this.p.journal.data.jobs, id) ? this.p.journal.data.jobs[id] : undefined;
    if (!j?.outbox) throw new JaggersError('E_NOT_FOUND', `outbox: no item ${JSON.stringify(id)} in the outbox`);
    return j;
  }
}
