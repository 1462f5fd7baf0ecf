// Worker windows for items assigned to a profile (`assign claude ...`): each gets a window and a
// terminal of its own, at most `maxWorkers` per profile at once; the rest wait for a slot, oldest first.
// A worker lost in a crash between its window's request and its record is opened again.
import { isFinal, type JobRecord } from '../sessions/registry.js';
import type { Log } from '../logger.js';
import type { Profile } from '../profiles/schema.js';
import type { WorkJournal } from './journal.js';
import type { Store } from './ports.js';

export interface WorkersPorts {
  store: Store;
  journal: WorkJournal;
  log: Log;
  /** How many workers of this profile may run at once (jaggers.json `maxWorkers`). */
  maxWorkers(profile: string): Promise<number>;
  loadProfile(name: string): Promise<Profile>;
  /** Open the worker's window and record it with the item's `starting`; false when the item ended meanwhile. */
  open(j: JobRecord, profile: Profile): Promise<boolean>;
  /** Is the terminal's pane in tmux? */
  hasPane(terminalId: string): boolean;
  /** The worker's window exists: its queue (of one) can go. */
  kick(terminalId: string): void;
}

export class Workers {
  private readonly opening = new Set<string>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly p: WorkersPorts) {}

  waiting(j: JobRecord): string {
    return this.opening.has(j.id) ? `opening a ${j.target} worker window` : `waiting for a ${j.target} worker slot (maxWorkers)`;
  }

  /** Open worker windows for queued profile items, within each profile's limit. */
  pump(): void {
    void this.pumpNow().catch((e: Error) => this.p.log.error({ err: e.message }, 'workers: could not look at the queue'));
  }

  /** One look at a time: a look awaits `maxWorkers`, and a second one meanwhile would not see the windows the first opens. */
  pumpNow(): Promise<void> {
    const run = this.chain.then(() => this.look());
    this.chain = run.catch(() => {});
    return run;
  }

  private async look(): Promise<void> {
    const jobs = Object.values(this.p.store.data.jobs)
      .filter((j) => j.kind === 'worker' && !isFinal(j.state))
      .sort((a, b) => a.seq - b.seq || a.created.localeCompare(b.created));
    const running = new Map<string, number>();
    // A worker being opened counts, whatever the registry says yet: a second pump meanwhile (an item
    // ended, another was assigned) would otherwise see it still queued and open one more.
    // A worker whose turn a usage limit cut is queued again in its own window (docs/limits.md): it waits there.
    const windowed = (j: JobRecord) => j.terminalId !== null && this.p.hasPane(j.terminalId);
    for (const j of jobs) if (j.state !== 'queued' || this.opening.has(j.id) || windowed(j)) running.set(j.target, (running.get(j.target) ?? 0) + 1);
    for (const j of jobs) {
      if (this.opening.has(j.id) || (j.state === 'queued' && windowed(j))) continue;
      if (j.state === 'queued') {
        const n = running.get(j.target) ?? 0;
        if (n >= (await this.p.maxWorkers(j.target))) continue;
        running.set(j.target, n + 1);
        void this.openOne(j);
      } else if (j.state === 'starting' && (!j.terminalId || !this.p.hasPane(j.terminalId))) {
        void this.openOne(j);
      }
    }
  }

  private async openOne(j: JobRecord): Promise<void> {
    this.opening.add(j.id);
    try {
      const profile = await this.p.loadProfile(j.target);
      if (await this.p.open(j, profile)) {
        const now = await this.p.journal.after(j.id);
        if (now?.terminalId) this.p.kick(now.terminalId);
      }
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      await this.p.journal.change(j.id, 'failed', `could not open a worker window: ${(e as Error).message}`, {
        code: typeof code === 'string' && /^E_[A-Z_]+$/.test(code) ? code : 'E_TMUX_COMMAND',
      });
    } finally {
      this.opening.delete(j.id);
    }
  }
}
