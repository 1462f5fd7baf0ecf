// The hook spool (issue 27): the folder `.jaggers/hook-spool/` into which the hook bridge
// (bin/jaggers-hook) drops one file per call of a CLI's native hook, named
// `<terminal id>.<time in ns>.<pid>-<size in bytes>.<event>` (its bash path writes the file in place: it
// is whole once it holds that many bytes) or `<terminal id>.<time in ns>.<pid>.<event>` (its plain sh
// path renames a whole temp file into view). One inotify watch on the folder (no polling); each whole
// file is read (bounded), removed, and handed on as a HookCall in the order the calls were made. The
// file an event names is taken without listing the folder; the folder is listed at the start, on an
// event without a name, and once a second while calls come (SWEEP_MS).
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, unlinkSync, watch } from 'node:fs';
import path from 'node:path';
import { coalesced, onceSoon } from '../coalesced.js';
import { realClock, type Clock, type TimerHandle } from './clock.js';

/** A hook's payload is a few KB (a Stop holds the turn's last reply): a larger file is not read. */
export const MAX_HOOK_BYTES = 4 * 1024 * 1024;

/** The spool folder of a project's `.jaggers/`. */
export function hookSpoolDir(jaggersDir: string): string {
  return path.join(jaggersDir, 'hook-spool');
}

/** One call of the bridge, as its file says. */
export interface HookCall {
  terminalId: string;
  event: string;
  /** The payload: parsed JSON, else the raw text ('' when the CLI gave none). */
  payload: unknown;
  /** When the bridge ran (ns since the epoch) and its pid: the order of calls. */
  ns: bigint;
  pid: number;
  /** Made before this spool was started (left by a supervisor that stopped): only its session counts. */
  stale: boolean;
}

export interface SpoolName {
  terminalId: string;
  ns: bigint;
  pid: number;
  /** The payload's size in bytes the name says (the bridge's bash path, which writes in place); null: renamed into view whole. */
  size: number | null;
  event: string;
}

// The size is digits without a leading zero (one way to write each size), after a '-' the pid's digits
// and the event's first character never hold: a name reads one way only.
const NAME = /^([A-Za-z0-9_-]{1,64})\.(\d{1,20})\.(\d{1,10})(?:-(0|[1-9]\d{0,9}))?\.([A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,63})$/;

/** A spool file's name taken apart; null when it is not one the bridge makes. */
export function parseSpoolName(name: string): SpoolName | null {
  const m = NAME.exec(name);
  if (!m) return null;
  return { terminalId: m[1]!, ns: BigInt(m[2]!), pid: Number(m[3]!), size: m[4] === undefined ? null : Number(m[4]), event: m[5]! };
}

/** The order of calls: by time, then pid (two calls in one nanosecond), then name. */
export function bySpoolOrder(a: { name: string; n: SpoolName }, b: { name: string; n: SpoolName }): number {
  if (a.n.ns !== b.n.ns) return a.n.ns < b.n.ns ? -1 : 1;
  if (a.n.pid !== b.n.pid) return a.n.pid - b.n.pid;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * What reading a spool file found: its text; `short`, the bytes a file whose name says `size` holds so
 * far (a bridge still writing, or one that died: not read); `over`, the bytes of one holding more than
 * its name says (not what the bridge wrote: not read); null, not a regular file or larger than `max`.
 */
export type SpoolRead = { text: string } | { short: number } | { over: number } | null;

export interface SpoolPorts {
  list(dir: string): string[];
  /** The file's text, whole: `size` bytes when its name says so (null: any size up to `max`). */
  read(file: string, max: number, size: number | null): SpoolRead;
  remove(file: string): void;
  /** `name`: the file the event is about (null when the system does not say). */
  watchFolder(dir: string, onChange: (name: string | null) => void): { close(): void };
}

/**
 * Open without following a link and without blocking on a FIFO, check the open file, read at most `max`
 * bytes; a file whose name says its size is read only once it holds exactly that many.
 */
function readBounded(file: string, max: number, size: number | null): SpoolRead {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) return null;
    if (size !== null && st.size < size) return { short: st.size };
    if (size !== null && st.size > size) return { over: st.size };
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    // Shorter than its fstat (cut meanwhile): not whole.
    if (size !== null && got < size) return { short: got };
    return { text: buf.toString('utf8', 0, got) };
  } finally {
    closeSync(fd);
  }
}

export const realSpoolPorts: SpoolPorts = {
  list: (dir) => readdirSync(dir),
  read: readBounded,
  // One unlink (rm looks at the file first); gone already is fine.
  remove: (file) => {
    try {
      unlinkSync(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  },
  watchFolder: (dir, onChange) => watch(dir, (_ev, name) => onChange(name ? name.toString() : null)),
};

export interface SpoolOptions {
  dir: string;
  /** Each call, in order. */
  deliver(call: HookCall): void;
  /** One line per file skipped (a bad name, an unreadable or huge file). */
  skipped(file: string, why: string): void;
  ports?: SpoolPorts;
  /** Wall time in ns (the bridge's clock): files older than the start are stale. */
  nowNs?: () => bigint;
  /** The sweep's timer (SWEEP_MS). */
  clock?: Clock;
}

/**
 * A bridge's temp file (`.<id>.<ns>.<pid>.tmp`), or a file with a size in its name holding fewer bytes,
 * this old (by the time in its name) was left by a bridge that died mid-write.
 */
const TEMP_MAX_AGE_NS = 60_000_000_000n;

/**
 * The folder is listed again this long after a call was taken (one listing a period while calls come,
 * none at idle): a call whose event the kernel dropped (inotify's queue overflowed, and libuv drops the
 * overflow notice itself) waits at most this long, not until the next supervisor.
 */
export const SWEEP_MS = 1000;

type Named = { name: string; n: SpoolName };

export class HookSpool {
  private watcher: { close(): void } | null = null;
  private startNs = 0n;
  private readonly ports: SpoolPorts;
  private readonly nowNs: () => bigint;
  private readonly clock: Clock;
  readonly drain: () => Promise<void>;
  /** Files their events named since the last drain: taken without a listing. */
  private readonly named = new Set<string>();
  /** An event without a name, or the sweep: the next drain lists the folder. */
  private listAsked = false;
  private sweep: TimerHandle | null = null;

  constructor(private readonly o: SpoolOptions) {
    this.ports = o.ports ?? realSpoolPorts;
    this.nowNs = o.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.clock = o.clock ?? realClock;
    this.drain = coalesced(async () => this.drainDue());
  }

  /** Watch the folder (it must exist: the supervisor makes it private) and take what is in it already. */
  start(): void {
    this.startNs = this.nowNs();
    this.watcher = this.ports.watchFolder(this.o.dir, (name) => this.changed(name));
    this.drainNow(true);
  }

  /**
   * One call of the bridge makes several events (its file created and written, on the plain sh path
   * under a temp name then renamed into view; then removed by us), and some may come after we took it:
   * only a name that may be a call not yet taken is kept, and the names of one turn of the event loop
   * are taken together, in call order. An event without a name lists the folder.
   */
  private changed(name: string | null): void {
    if (name === null) this.listAsked = true;
    else {
      if (name.startsWith('.')) return;
      // Every event for a name this spool removed (its write's and its removal's) is no new call.
      if (this.removed.has(name)) return;
      this.named.add(name);
    }
    this.soon();
  }

  private readonly removed = new Set<string>();
  private readonly soon = onceSoon(() => void this.drain());

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.sweep !== null) this.clock.clearTimeout(this.sweep);
    this.sweep = null;
  }

  /** What the events since the last drain ask for: the files they named, or the whole folder. */
  private drainDue(): void {
    if (this.listAsked) return this.drainNow();
    const files: Named[] = [];
    for (const name of this.named) {
      const n = this.checked(name);
      if (n) files.push({ name, n });
    }
    this.named.clear();
    if (this.take(files) > 0 && this.sweep === null && this.watcher !== null) {
      this.sweep = this.clock.setTimeout(() => {
        this.sweep = null;
        this.listAsked = true;
        this.soon();
      }, SWEEP_MS);
      (this.sweep as { unref?: () => void }).unref?.();
    }
  }

  /** Every file in the folder, in call order: read, removed, delivered. */
  drainNow(starting = false): void {
    this.listAsked = false;
    this.named.clear();
    if (this.sweep !== null) this.clock.clearTimeout(this.sweep);
    this.sweep = null;
    let names: string[];
    try {
      names = this.ports.list(this.o.dir);
    } catch (e) {
      this.o.skipped(this.o.dir, `cannot list the hook spool: ${(e as Error).message}`);
      return;
    }
    const files: Named[] = [];
    for (const name of names) {
      if (name.startsWith('.')) {
        // A bridge still writing; one left by a bridge that died goes at the start.
        const t = /^\.[A-Za-z0-9_-]{1,64}\.(\d{1,20})\.\d{1,10}\.tmp$/.exec(name);
        if (starting && (!t || this.startNs - BigInt(t[1]!) > TEMP_MAX_AGE_NS)) this.remove(path.join(this.o.dir, name));
        continue;
      }
      const n = this.checked(name);
      if (n) files.push({ name, n });
    }
    this.take(files);
  }

  /** The name taken apart; a name the bridge does not make (or a size no hook file has) is one line, and its file goes. */
  private checked(name: string): SpoolName | null {
    const n = parseSpoolName(name);
    if (n && (n.size === null || n.size <= MAX_HOOK_BYTES)) return n;
    const file = path.join(this.o.dir, name);
    this.o.skipped(
      file,
      n
        ? `its name says ${n.size} bytes, more than the ${MAX_HOOK_BYTES} a hook file may hold`
        : 'not a name the hook bridge makes (<terminal id>.<ns>.<pid>-<size>.<event>)',
    );
    this.drop(name);
    return null;
  }

  /**
   * Each whole file in call order: read, removed, delivered. One still being written is left for a later
   * event of its name (or the sweep); one a bridge left unfinished long ago goes. How many were there to read.
   */
  private take(files: Named[]): number {
    files.sort(bySpoolOrder);
    let read = 0;
    for (const { name, n } of files) {
      const file = path.join(this.o.dir, name);
      let got: SpoolRead;
      try {
        got = this.ports.read(file, MAX_HOOK_BYTES, n.size);
      } catch (e) {
        // Gone meanwhile (taken already: its removal's event, or a listing's) says nothing; anything else is one line.
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        this.o.skipped(file, `cannot read it: ${(e as Error).message}`);
        this.drop(name);
        continue;
      }
      read++;
      if (got !== null && 'short' in got) {
        const age = this.nowNs() - n.ns;
        if (age <= TEMP_MAX_AGE_NS) continue;
        this.o.skipped(
          file,
          `${got.short} of the ${n.size} bytes its name says, ${age / 1_000_000_000n} s after the bridge started: left by a bridge that died`,
        );
        this.drop(name);
        continue;
      }
      this.drop(name);
      if (got === null) this.o.skipped(file, `not a regular file of at most ${MAX_HOOK_BYTES} bytes`);
      else if ('over' in got) this.o.skipped(file, `${got.over} bytes, more than the ${n.size} its name says: not what the bridge wrote`);
      else this.o.deliver({ terminalId: n.terminalId, event: n.event, ns: n.ns, pid: n.pid, payload: parsePayload(got.text), stale: n.ns < this.startNs });
    }
    return read;
  }

  /** The file removed, and its name remembered as taken. */
  private drop(name: string): void {
    this.remove(path.join(this.o.dir, name));
    this.taken(name);
  }

  /** A file this spool removed: the events of its write that come late and of its removal are no new call. */
  private taken(name: string): void {
    this.removed.add(name);
    // Bounded: an event that never came (a watcher closed meanwhile) must not keep its name for ever.
    if (this.removed.size > 1024) for (const old of this.removed) if (this.removed.delete(old) && this.removed.size <= 512) break;
  }

  private remove(file: string): void {
    try {
      this.ports.remove(file);
    } catch {
      // gone already, or the folder is: nothing to do
    }
  }
}

/** Parsed JSON, else the raw text (codex passes JSON; a CLI might pass plain words). */
export function parsePayload(text: string): unknown {
  const t = text.trim();
  if (t === '') return '';
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return text;
  }
}
