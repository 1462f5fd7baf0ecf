// The session registry under `.jaggers/`: the journal events.jsonl is the truth, sessions.json a snapshot
// derived from it. Every change takes a cross-process lock, appends to the journal, then replaces the snapshot.
import { readdirSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { journalEventSchema, type JournalEvent, type NewJournalEvent } from './events.js';
import { appendDurable, writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { serializeEvents } from './journal.js';
import { loadLocked, type Loaded, type RegistryPaths, type Trusted } from './load.js';
import { pidIsAlive, withLock, type LockOptions } from './lock.js';
import { applyEvent, emptyRegistry, type RegistryData } from './schema.js';
import { validateOrThrow } from './validate.js';

export { newSessionId, newTerminalId, findTerminal, pinnedSession, mergeTmuxTags, tmuxTagEvents } from './lookup.js';
export type { TmuxTaggedWindow } from './lookup.js';
export { emptyRegistry, applyEvent } from './schema.js';
export type { RegistryData, TerminalRecord, TaskRecord, TaskAgentRecord } from './schema.js';
export type { JobRecord, JobState, MessageRecord } from './work.js';
export { isFinal, KEEP_FINISHED } from './work.js';

export const SNAPSHOT_FILE = 'sessions.json';
export const JOURNAL_FILE = 'events.jsonl';

export interface RegistryOptions {
  /** Clock for event times and recovery file names. */
  now?: () => Date;
  lock?: LockOptions;
  /**
   * `full` (default): fsync the journal, and fsync the snapshot and its folder around the rename.
   * `journal`: fsync only the journal. The snapshot is still replaced atomically; after a power loss it
   * may be stale or empty, which the next load repairs from the journal (with a warning): nothing recorded
   * is lost either way. About twice as fast on ext4.
   */
  durability?: 'full' | 'journal';
  /** Called with each warning as it happens (they are also kept in `lastWarnings`). */
  onWarning?: (message: string) => void;
}

/** A registry handle: the supervisor's (`RegistryOwner`, its one writer) or a locked one for tests and tools (`Registry`). */
export interface RegistryStore {
  read(): Promise<RegistryData>;
  update<T>(fn: (data: RegistryData) => UpdatePlan<T> | Promise<UpdatePlan<T>>): Promise<T>;
  record(...events: NewJournalEvent[]): Promise<RegistryData>;
}

/** What an `update` callback decides: events to record (may be none) and a result to hand back. */
export interface UpdatePlan<T> {
  events: readonly NewJournalEvent[];
  result: T;
}

export interface ReadResult {
  data: RegistryData;
  warnings: string[];
}

export class Registry implements RegistryStore {
  readonly dir: string;
  readonly paths: RegistryPaths;
  /** Warnings of the last read/record/update: recovered snapshot, skipped torn journal line... */
  lastWarnings: string[] = [];
  private readonly now: () => Date;
  private readonly options: RegistryOptions;
  private dirReady = false;
  private swept = false;
  /** The snapshot as this process last wrote or validated it: text and data. */
  private trusted: Trusted | null = null;

  constructor(jaggersDir: string, options: RegistryOptions = {}) {
    this.dir = path.resolve(jaggersDir);
    this.paths = { snapshot: path.join(this.dir, SNAPSHOT_FILE), journal: path.join(this.dir, JOURNAL_FILE) };
    this.now = options.now ?? (() => new Date());
    this.options = options;
  }

  /** The current registry; recovers a missing or corrupt snapshot (see `lastWarnings`). */
  async read(): Promise<RegistryData> {
    return (await this.readWithWarnings()).data;
  }

  async readWithWarnings(): Promise<ReadResult> {
    if (!(await exists(this.dir))) return this.finish({ data: emptyRegistry(), warnings: [] });
    return this.locked(async () => {
      const loaded = await this.load();
      if (loaded.dirty) await this.writeSnapshot(loaded.data);
      return this.finish(loaded);
    });
  }

  /** Append events to the journal and update the snapshot; all or nothing if an event does not fit. */
  async record(...events: NewJournalEvent[]): Promise<RegistryData> {
    return (await this.transact(() => ({ events, result: null }))).data;
  }

  /**
   * Read-modify-write under the lock: `fn` sees the current data and returns the events to record.
   * Do not call other methods of this registry from inside `fn`: the lock is not re-entrant.
   */
  async update<T>(fn: (data: RegistryData) => UpdatePlan<T> | Promise<UpdatePlan<T>>): Promise<T> {
    return (await this.transact(fn)).result;
  }

  private async transact<T>(fn: (data: RegistryData) => UpdatePlan<T> | Promise<UpdatePlan<T>>): Promise<{ data: RegistryData; result: T }> {
    if (!this.dirReady) await ensurePrivateFolder(this.dir);
    this.dirReady = true;
    return this.locked(async () => {
      const loaded = await this.load();
      const plan = await fn(loaded.data);
      const events = this.stamp(plan.events);
      let data = loaded.data;
      for (const event of events) data = applyEvent(data, event);
      if (events.length > 0) {
        const text = serializeEvents(events);
        const expected = loaded.data.journal.bytes + Buffer.byteLength(text);
        const size = await appendDurable(this.paths.journal, text);
        if (size !== expected) {
          loaded.warnings.push(`${this.paths.journal} is ${size} bytes after appending, expected ${expected}: written to outside the lock?`);
        }
        data = { ...data, journal: { bytes: expected, lines: loaded.data.journal.lines + events.length } };
      }
      if (events.length > 0 || loaded.dirty) await this.writeSnapshot(data);
      this.finish({ data, warnings: loaded.warnings });
      return { data, result: plan.result };
    });
  }

  private stamp(events: readonly NewJournalEvent[]): JournalEvent[] {
    const ts = this.now().toISOString();
    return events.map((e, i) =>
      validateOrThrow(
        journalEventSchema,
        { ...e, ts: e.ts ?? ts },
        `event ${i + 1} of ${events.length} (${String(e.type)}) to record in ${this.paths.journal}`,
      ),
    );
  }

  private async load(): Promise<Loaded> {
    const loaded = await loadLocked(this.paths, this.now(), this.trusted);
    if (loaded.text !== undefined) this.trusted = { text: loaded.text, data: loaded.data };
    return loaded;
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return withLock(
      this.paths.snapshot,
      async () => {
        if (!this.swept) this.sweepTemps();
        return fn();
      },
      this.options.lock,
    );
  }

  /** Temp snapshots left by a process killed while it wrote one (`sessions.json.tmp-<pid>-<hex>`): removed once per process. */
  private sweepTemps(): void {
    this.swept = true;
    const prefix = `${path.basename(this.paths.snapshot)}.tmp-`;
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const n of names) {
      const pid = n.startsWith(prefix) ? Number(n.slice(prefix.length).split('-')[0]) : NaN;
      if (Number.isInteger(pid) && pid !== process.pid && !pidIsAlive(pid)) rmSync(path.join(this.dir, n), { force: true });
    }
  }

  private async writeSnapshot(data: RegistryData): Promise<void> {
    const sync = (this.options.durability ?? 'full') === 'full';
    const text = `${JSON.stringify(data, null, 2)}\n`;
    this.trusted = null;
    await writeFileAtomic(this.paths.snapshot, text, { sync });
    this.trusted = { text, data };
  }

  private finish(result: ReadResult): ReadResult {
    this.lastWarnings = result.warnings;
    for (const w of result.warnings) this.options.onWarning?.(w);
    return result;
  }
}

async function exists(dir: string): Promise<boolean> {
  try {
    await fs.stat(dir);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return false;
    throw new JaggersError('E_FILE', `cannot read ${dir}: ${(e as Error).message}`, { cause: e });
  }
}
