// The supervisor's handle on the registry: it is the registry's one writer, so it takes the registry's
// lock once, for its whole life, keeps the data in memory, appends each change to the journal (fsynced:
// the journal is the truth), and writes the snapshot only now and then (a second after the last change,
// or after many events): a change costs one append, never a rewrite of the whole snapshot. A supervisor
// killed in between leaves a snapshot behind the journal, which the next load catches up.
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { journalEventSchema, type JournalEvent, type NewJournalEvent } from './events.js';
import { DurableAppender, writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { serializeEvents } from './journal.js';
import { loadLocked, type RegistryPaths } from './load.js';
import { acquireLock, type LockHandle } from './lock.js';
import { JOURNAL_FILE, SNAPSHOT_FILE, type RegistryStore, type UpdatePlan } from './registry.js';
import { applyEvent, type RegistryData } from './schema.js';
import { validateOrThrow } from './validate.js';
import { Undo } from './work.js';

export interface OwnerOptions {
  now?: () => Date;
  /** Called with each warning of the load (a snapshot rebuilt, a torn journal line cut). */
  onWarning?: (message: string) => void;
  /** The snapshot is written this long after the last change (default 1000 ms)... */
  snapshotDelayMs?: number;
  /** ...or at once after this many events since the last one (default 2000), so a catch-up stays short. */
  snapshotEvery?: number;
  /** How long to wait for the registry's lock when another process holds it (default 30 s). */
  lockTimeoutMs?: number;
}

interface Waiting {
  fn: (data: RegistryData) => UpdatePlan<unknown> | Promise<UpdatePlan<unknown>>;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
  /** What `fn` returned, when it is a promise left for the next group. */
  planned?: Promise<UpdatePlan<unknown>>;
}

const AsyncFunction = (async () => {}).constructor;
const isAsync = (fn: unknown): boolean => fn instanceof AsyncFunction;
const isThenable = (x: unknown): boolean => typeof (x as { then?: unknown } | null)?.then === 'function';

export class RegistryOwner implements RegistryStore {
  readonly paths: RegistryPaths;
  /** What the load said (a snapshot caught up or rebuilt after a crash). */
  readonly warnings: string[];
  private current: RegistryData;
  /** Updates not yet decided, in the order they came. */
  private readonly waiting: Waiting[] = [];
  /** Set while groups are decided and written; settles once no update waits. */
  private draining: Promise<void> | null = null;
  private unsaved = 0;
  private timer: NodeJS.Timeout | null = null;
  private saving: Promise<void> | null = null;
  private closed = false;
  private readonly journal: DurableAppender;

  private constructor(
    paths: RegistryPaths,
    data: RegistryData,
    warnings: string[],
    private readonly lock: LockHandle,
    private readonly o: OwnerOptions,
  ) {
    this.paths = paths;
    this.journal = new DurableAppender(paths.journal);
    this.current = data;
    this.warnings = warnings;
  }

  static async open(jaggersDir: string, o: OwnerOptions = {}): Promise<RegistryOwner> {
    const dir = path.resolve(jaggersDir);
    await ensurePrivateFolder(dir);
    const paths = { snapshot: path.join(dir, SNAPSHOT_FILE), journal: path.join(dir, JOURNAL_FILE) };
    const lock = await acquireLock(paths.snapshot, { timeoutMs: o.lockTimeoutMs ?? 30_000 });
    try {
      // Once per supervisor: the journal's lines the snapshot holds are checked for damage too.
      const loaded = await loadLocked(paths, (o.now ?? (() => new Date()))(), null, { quietCatchUp: true, checkJournal: true });
      const owner = new RegistryOwner(paths, loaded.data, loaded.warnings, lock, o);
      for (const w of loaded.warnings) o.onWarning?.(w);
      if (loaded.dirty) await owner.flush();
      return owner;
    } catch (e) {
      await lock.release();
      throw e;
    }
  }

  /**
   * The registry now: a new object after every change, but its `jobs` and `messages` tables are changed
   * in place (records themselves are never changed, only replaced): to keep what was, keep the records.
   */
  get data(): RegistryData {
    return this.current;
  }

  async read(): Promise<RegistryData> {
    return this.current;
  }

  async record(...events: NewJournalEvent[]): Promise<RegistryData> {
    await this.update(() => ({ events, result: null }));
    return this.current;
  }

  /**
   * Read-modify-write, one at a time: `fn` sees the current data and returns the events to record. The
   * events are checked, applied, appended to the journal and fsynced before the data changes here: a
   * change that cannot be written (a full disk) changes nothing, and the promise settles only then.
   *
   * Group commit: the updates that arrive while the journal is being written wait, then go together:
   * each one's `fn` in turn sees the data with the events of those before it in the group (applied in
   * place, put back before anything awaits), and the whole group is one append and one fsync. A plain
   * `fn` may join a group; an `async` one starts a group of its own (it sees only what is on disk: nobody
   * else may see the group's events while it awaits).
   */
  update<T>(fn: (data: RegistryData) => UpdatePlan<T> | Promise<UpdatePlan<T>>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      // Started a microtask later: the updates asked for in the same turn of the event loop go together.
      this.draining ??= Promise.resolve().then(() => this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.commitGroup();
    } finally {
      this.draining = null;
    }
  }

  /** Decides the waiting updates (as many as may go together), appends their events at once, then applies them. */
  private async commitGroup(): Promise<void> {
    const group: Array<{ u: Waiting; events: JournalEvent[]; result: unknown }> = [];
    const undos: Undo[] = [];
    let view = this.current;
    try {
      while (this.waiting.length > 0) {
        const u = this.waiting[0]!;
        if (group.length > 0 && isAsync(u.fn)) break;
        this.waiting.shift();
        if (this.closed) {
          u.reject(new JaggersError('E_SUPERVISOR_DOWN', 'the registry is closed: the supervisor is stopping'));
          continue;
        }
        const undo = new Undo();
        try {
          const planned = u.planned ?? u.fn(view);
          if (isThenable(planned) && group.length > 0) {
            // A plain function that returned a promise: it waits for the group before it to be written
            // (it saw that group's events, which are on disk once it goes on).
            this.waiting.unshift({ ...u, planned: planned as Promise<UpdatePlan<unknown>> });
            break;
          }
          // Only the first of a group may await: nothing of the group is applied yet. A plan given as it
          // is goes on without a pause, so no other code runs while the group's events are applied in place.
          const plan = isThenable(planned) ? await (planned as Promise<UpdatePlan<unknown>>) : (planned as UpdatePlan<unknown>);
          if (plan.events.length === 0) {
            u.resolve(plan.result);
            continue;
          }
          const events = this.stamp(plan.events);
          // Checked now (applied in place, put back before the append: the data stays as it was while the
          // journal is written), applied for good once they are in the journal.
          let check = view;
          for (const event of events) check = applyEvent(check, event, undo);
          view = check;
          undos.push(undo);
          group.push({ u, events, result: plan.result });
        } catch (e) {
          undo.restore();
          u.reject(e);
        }
      }
    } finally {
      for (let i = undos.length - 1; i >= 0; i--) undos[i]!.restore();
    }
    if (group.length === 0) return;
    const events = group.flatMap((g) => g.events);
    const text = serializeEvents(events);
    const expected = this.current.journal.bytes + Buffer.byteLength(text);
    try {
      const size = await this.journal.append(text);
      if (size !== expected) this.o.onWarning?.(`${this.paths.journal} is ${size} bytes after appending, expected ${expected}: written to by another process?`);
      let data = this.current;
      for (const event of events) data = applyEvent(data, event, 'commit');
      this.current = { ...data, journal: { bytes: size, lines: this.current.journal.lines + events.length } };
    } catch (e) {
      for (const g of group) g.u.reject(e);
      return;
    }
    this.unsaved += events.length;
    this.scheduleSnapshot();
    for (const g of group) g.u.resolve(g.result);
  }

  private stamp(events: readonly NewJournalEvent[]): JournalEvent[] {
    const ts = (this.o.now ?? (() => new Date()))().toISOString();
    return events.map((e, i) =>
      validateOrThrow(
        journalEventSchema,
        { ...e, ts: e.ts ?? ts },
        `event ${i + 1} of ${events.length} (${String(e.type)}) to record in ${this.paths.journal}`,
      ),
    );
  }

  private scheduleSnapshot(): void {
    if (this.unsaved >= (this.o.snapshotEvery ?? 2000)) {
      void this.flush().catch((e: Error) => this.o.onWarning?.(`could not write ${this.paths.snapshot}: ${e.message}`));
      return;
    }
    // A second after the last change: under steady work the whole registry is not rewritten every
    // second (it grew with the history and cost more than the changes); `snapshotEvery` bounds the wait.
    // (The same timer started again: a change costs no new one.)
    if (this.timer) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().catch((e: Error) => this.o.onWarning?.(`could not write ${this.paths.snapshot}: ${e.message}`));
    }, this.o.snapshotDelayMs ?? 1000);
    this.timer.unref();
  }

  /** Write the snapshot of the data as it is now (atomically: a reader sees the old one or this one). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.saving) await this.saving;
    const data = this.current;
    this.unsaved = 0;
    this.saving = writeFileAtomic(this.paths.snapshot, `${JSON.stringify(data, null, 2)}\n`, { sync: false }).finally(() => (this.saving = null));
    await this.saving;
  }

  /** Write the snapshot and give the lock back; later updates are refused. */
  async close(): Promise<void> {
    while (this.draining) await this.draining;
    this.closed = true;
    try {
      if (this.unsaved > 0) await this.flush();
    } finally {
      this.journal.close();
      await this.lock.release();
    }
  }
}
