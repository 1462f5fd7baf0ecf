// The hook spool (issue 27): the folder `.jaggers/hook-spool/` into which the hook bridge
// (bin/jaggers-hook) drops one file per call of a CLI's native hook, named
// `<terminal id>.<time in ns>.<pid>.<event>`. One inotify watch on the folder (no polling); each file is
// read (bounded), removed, and handed on as a HookCall in the order the calls were made. The file an
// event names is taken without listing the folder; the folder is listed at the start, on an event
// without a name, and once a second while calls come (SWEEP_MS).
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
  event: string;
}

const NAME = /^([A-Za-z0-9_-]{1,64})\.(\d{1,20})\.(\d{1,10})\.([A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,63})$/;

/** A spool file's name taken apart; null when it is not one the bridge makes. */
export function parseSpoolName(name: string): SpoolName | null {
  const m = NAME.exec(name);
  if (!m) return null;
  return { terminalId: m[1]!, ns: BigInt(m[2]!), pid: Number(m[3]!), event: m[4]! };
}

/** The order of calls: by time, then pid (two calls in one nanosecond), then name. */
export function bySpoolOrder(a: { name: string; n: SpoolName }, b: { name: string; n: SpoolName }): number {
  if (a.n.ns !== b.n.ns) return a.n.ns < b.n.ns ? -1 : 1;
  if (a.n.pid !== b.n.pid) return a.n.pid - b.n.pid;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export interface SpoolPorts {
  list(dir: string): string[];
  /** The file's text; null when it is not a regular file or is larger than `max`. */
  read(file: string, max: number): string | null;
  remove(file: string): void;
  /** `name`: the file the event is about (null when the system does not say). */
  watchFolder(dir: string, onChange: (name: string | null) => void): { close(): void };
}

/** Open without following a link and without blocking on a FIFO, check the open file, read at most `max` bytes. */
function readBounded(file: string, max: number): string | null {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) return null;
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, buf, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.toString('utf8', 0, got);
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

/** A bridge's temp file (`.<id>.<ns>.<pid>.tmp`) this old was left by a bridge that died mid-write. */
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
   * One call of the bridge makes five or six events (its temp file created and written, renamed into
   * view, then removed by us): only a name that may be a call not yet taken is kept, and the names of
   * one turn of the event loop are taken together, in call order. An event without a name lists the folder.
   */
  private changed(name: string | null): void {
    if (name === null) this.listAsked = true;
    else {
      if (name.startsWith('.')) return;
      if (this.removed.delete(name)) return;
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

  /** The name taken apart; a name the bridge does not make is one line, and its file goes. */
  private checked(name: string): SpoolName | null {
    const n = parseSpoolName(name);
    if (n) return n;
    const file = path.join(this.o.dir, name);
    this.o.skipped(file, 'not a name the hook bridge makes (<terminal id>.<ns>.<pid>.<event>)');
    this.remove(file);
    this.taken(name);
    return null;
  }

  /** Each file in call order: read, removed, delivered. How many were there to read. */
  private take(files: Named[]): number {
    files.sort(bySpoolOrder);
    let read = 0;
    for (const { name, n } of files) {
      const file = path.join(this.o.dir, name);
      let text: string | null;
      try {
        text = this.ports.read(file, MAX_HOOK_BYTES);
      } catch (e) {
        // Gone meanwhile (taken already: its removal's event, or a listing's) says nothing; anything else is one line.
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        this.o.skipped(file, `cannot read it: ${(e as Error).message}`);
        this.remove(file);
        this.taken(name);
        continue;
      }
      read++;
      this.remove(file);
      this.taken(name);
      if (text === null) {
        this.o.skipped(file, `not a regular file of at most ${MAX_HOOK_BYTES} bytes`);
        continue;
      }
      this.o.deliver({ ...n, payload: parsePayload(text), stale: n.ns < this.startNs });
    }
    return read;
  }

  /** A file this spool removed: the event its removal makes is not a new call. */
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
