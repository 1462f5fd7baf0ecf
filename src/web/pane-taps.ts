// Live pane output for the dashboard's terminals (issue 29): the `%output` of a control connection of its
// own, opened with the first open tap and closed with the last. Its own, because the watcher pauses a busy
// pane's output to its connection (FlowControl): pauses are per client, so this one's output still flows.
// tmux sends a control client every pane's output until told otherwise: a pane nobody taps is paused for
// this client (`refresh-client -A %N:pause`) the first time its output comes, and continued when a tap
// opens on it. Not `%N:off`: on tmux 3.3a a control client that exits with panes turned off brought the
// whole server down (in 3 of 4 runs of 40 rounds; pause and continue in none of 6, docs/tmux-and-node-facts.md).
// A tap's snapshot (capture-pane -e and the cursor) is read on the same connection: tmux writes a command's
// reply and the panes' output in the order it made them, so output before the reply is in the snapshot
// and output after it is new: nothing is lost or shown twice.
import { StringDecoder } from 'node:string_decoder';
import { JaggersError } from '../errors.js';
import type { TmuxReply } from '../tmux/control-client.js';

/** What a tap needs of a control connection (ControlClient has it). */
export interface TapConnection {
  run(args: readonly string[]): Promise<TmuxReply>;
  /** A subscription, removed again when the connection closes (ControlClient.subscribe). */
  subscribe(name: string, target: string, format: string): Promise<void>;
  /** Commands written so far, and replies received: see ControlClient.repliesReceived. */
  readonly commandsSent: number;
  readonly repliesReceived: number;
  onOutput(l: (paneId: string, data: Buffer) => void): () => void;
  onNotification(l: (name: string, args: string[]) => void): () => void;
  onExit(l: (reason: string) => void): () => void;
  close(): Promise<void>;
}

/** The pane's screen as a terminal would redraw it. */
export interface PaneSnapshot {
  cols: number;
  rows: number;
  cursor: { x: number; y: number };
  /** On the alternate screen (a full-screen program): `data` switches to it first. */
  alternate: boolean;
  /** Written into an empty terminal of cols x rows, redraws the screen: its modes, its lines with their colours (joined by \r\n), the cursor. */
  data: string;
  /** The pane's program has exited (the pane is kept, dead). */
  dead: boolean;
}

/** Where a tap's events go. Output is the pane's bytes after the snapshot, as UTF-8 text. */
export interface TapSink {
  output(text: string): void;
  size(cols: number, rows: number): void;
  exit(reason: string): void;
}

export interface Tap {
  /** A fresh snapshot; until it is read, the pane's output is not passed on (it is in the snapshot). */
  snapshot(): Promise<PaneSnapshot>;
  close(): void;
}

export interface PaneTapsOptions {
  connect(): Promise<TapConnection>;
  /** Runs `fn` once the output read now is handled (default setImmediate): a pane's output read at once goes out as one event. */
  defer?: (fn: () => void) => void;
}

interface Sub {
  sink: TapSink;
  /** Output is passed on once this many replies came (the snapshot's capture); Infinity while it is being sent. */
  syncAt: number;
  /** Output held for the next flush. */
  held: string[];
  closed: boolean;
}

interface PaneEntry {
  subs: Set<Sub>;
  decoder: StringDecoder;
}

interface Conn {
  c: TapConnection;
  offs: (() => void)[];
}

const SUBSCRIPTION = 'jaggers-web';
const SIZE_FORMAT = '#{pane_width} #{pane_height} #{pane_dead}';
const SNAPSHOT_FORMAT = '#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{pane_dead}';

/** A snapshot from `capture-pane -p -e` lines and the SNAPSHOT_FORMAT line. */
export function snapshotOf(lines: readonly string[], format: string): PaneSnapshot {
  const [cols, rows, x, y, alt, cursorOn, appCursor, dead] = format.split(' ').map(Number);
  const n = (v: number | undefined) => (Number.isFinite(v) ? v! : 0);
  const alternate = alt === 1;
  const screen = lines.slice(0, n(rows) || lines.length);
  const data =
    (alternate ? '\x1b[?1049h' : '') +
    '\x1b[H\x1b[2J' +
    screen.join('\x1b[0m\r\n') +
    '\x1b[0m' +
    `\x1b[${n(y) + 1};${n(x) + 1}H` +
    (appCursor === 1 ? '\x1b[?1h' : '') +
    (cursorOn === 0 ? '\x1b[?25l' : '');
  return { cols: n(cols), rows: n(rows), cursor: { x: n(x), y: n(y) }, alternate, data, dead: dead === 1 };
}

/** A command whose answer nobody waits for (a closed connection's refusal included). */
function send(conn: Conn, args: readonly string[]): void {
  conn.c.run(args).catch(() => {});
}

export class PaneTaps {
  private conn: Promise<Conn> | null = null;
  private readonly panes = new Map<string, PaneEntry>();
  /** Panes this connection was told to stop sending (paused: nobody taps them). */
  private readonly paused = new Set<string>();
  private readonly dirty = new Set<Sub>();
  private flushing = false;
  private readonly defer: (fn: () => void) => void;

  constructor(private readonly o: PaneTapsOptions) {
    this.defer = o.defer ?? ((fn) => void setImmediate(fn));
  }

  /** Taps open now (for tests and benchmarks). */
  get open(): number {
    let n = 0;
    for (const p of this.panes.values()) n += p.subs.size;
    return n;
  }

  /** A tap on `paneId`: call `snapshot()` next, then its output, size changes and exit go to `sink`. */
  async tap(paneId: string, sink: TapSink): Promise<Tap> {
    const conn = await this.connection();
    let pane = this.panes.get(paneId);
    if (!pane) {
      pane = { subs: new Set(), decoder: new StringDecoder('utf8') };
      this.panes.set(paneId, pane);
    }
    const sub: Sub = { sink, syncAt: Infinity, held: [], closed: false };
    pane.subs.add(sub);
    if (this.paused.delete(paneId) || pane.subs.size === 1) send(conn, ['refresh-client', '-A', `${paneId}:continue`]);
    return {
      snapshot: () => this.snapshot(conn, paneId, sub),
      close: () => this.untap(conn, paneId, sub),
    };
  }

  /** Close the connection (the supervisor stops): every tap ends. */
  async close(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    const c = await conn.catch(() => null);
    if (c) await this.drop(c, 'the supervisor is stopping');
  }

  private async snapshot(conn: Conn, paneId: string, sub: Sub): Promise<PaneSnapshot> {
    sub.syncAt = Infinity;
    sub.held = [];
    const capture = conn.c.run(['capture-pane', '-p', '-e', '-t', paneId]);
    // The capture's reply is the point after which output is new (see ControlClient.repliesReceived).
    const at = conn.c.commandsSent;
    const shape = conn.c.run(['display-message', '-p', '-t', paneId, SNAPSHOT_FORMAT]);
    sub.syncAt = at;
    const [c, d] = await Promise.all([capture, shape]);
    if (!c.ok || !d.ok) throw new JaggersError('E_PANE_GONE', `cannot read pane ${paneId}: ${c.ok ? d.ok || d.error : c.error}`);
    return snapshotOf(c.lines, d.lines[0] ?? '');
  }

  /** The tap ends (`reason`: told to its sink); the pane's output is paused when nobody taps it. */
  private untap(conn: Conn, paneId: string, sub: Sub, reason?: string): void {
    if (sub.closed) return;
    this.flushSub(sub);
    sub.closed = true;
    this.dirty.delete(sub);
    if (reason !== undefined) sub.sink.exit(reason);
    const pane = this.panes.get(paneId);
    if (!pane?.subs.delete(sub) || pane.subs.size > 0) return;
    this.panes.delete(paneId);
    if (this.panes.size === 0 && this.conn) {
      // Nobody taps any pane: the connection goes (nothing of it runs while no terminal is open).
      this.conn = null;
      void this.drop(conn, 'closed');
      return;
    }
    this.paused.add(paneId);
    send(conn, ['refresh-client', '-A', `${paneId}:pause`]);
  }

  private connection(): Promise<Conn> {
    if (this.conn) return this.conn;
    const made = this.o.connect().then(
      async (c): Promise<Conn> => {
        const conn: Conn = { c, offs: [] };
        conn.offs.push(
          c.onOutput((paneId, data) => this.onOutput(conn, paneId, data)),
          c.onNotification((name, args) => this.onNotification(conn, name, args)),
          c.onExit((why) => {
            if (this.conn === made) this.conn = null;
            void this.drop(conn, `tmux connection closed: ${why}`);
          }),
        );
        // Size changes and deaths, checked by tmux once a second (a subscription to `%*`: one to a single
        // pane never reports on tmux 3.3a).
        await c.subscribe(SUBSCRIPTION, '%*', SIZE_FORMAT).catch(() => {});
        return conn;
      },
      (e: unknown) => {
        if (this.conn === made) this.conn = null;
        throw e;
      },
    );
    this.conn = made;
    return made;
  }

  /** Every tap on this connection ends with `reason`, and the connection closes. */
  private async drop(conn: Conn, reason: string): Promise<void> {
    for (const off of conn.offs.splice(0)) off();
    // Taps of a newer connection stay (this one was let go after its last tap closed).
    if (this.conn === null) {
      for (const [paneId, pane] of [...this.panes]) for (const sub of [...pane.subs]) this.untap(conn, paneId, sub, reason);
      this.panes.clear();
      this.paused.clear();
    }
    // Its subscription goes with it, first (ControlClient.close: a tmux 3.3a crash).
    await conn.c.close().catch(() => {});
  }

  private onOutput(conn: Conn, paneId: string, data: Buffer): void {
    const pane = this.panes.get(paneId);
    if (!pane) {
      if (!this.paused.has(paneId)) {
        this.paused.add(paneId);
        send(conn, ['refresh-client', '-A', `${paneId}:pause`]);
      }
      return;
    }
    const text = pane.decoder.write(data);
    if (!text) return;
    const replies = conn.c.repliesReceived;
    for (const sub of pane.subs) {
      if (replies < sub.syncAt) continue;
      sub.held.push(text);
      this.dirty.add(sub);
    }
    if (this.dirty.size && !this.flushing) {
      this.flushing = true;
      this.defer(() => this.flush());
    }
  }

  private flush(): void {
    this.flushing = false;
    const subs = [...this.dirty];
    this.dirty.clear();
    for (const s of subs) this.flushSub(s);
  }

  private flushSub(sub: Sub): void {
    if (sub.closed || sub.held.length === 0) return;
    const text = sub.held.length === 1 ? sub.held[0]! : sub.held.join('');
    sub.held = [];
    sub.sink.output(text);
  }

  private onNotification(conn: Conn, name: string, args: string[]): void {
    if (name === 'subscription-changed' && args[0] === SUBSCRIPTION) {
      // `%subscription-changed <name> $S @W <index> %P : <value>`
      const pane = this.panes.get(args[4] ?? '');
      const colon = args.indexOf(':');
      if (!pane || colon < 0) return;
      const [cols, rows, dead] = args.slice(colon + 1).map(Number);
      for (const sub of [...pane.subs]) {
        if (dead === 1) this.untap(conn, args[4]!, sub, "the pane's program exited");
        else if (sub.syncAt !== Infinity && cols && rows) sub.sink.size(cols, rows);
      }
    } else if (name === 'window-close' || name === 'unlinked-window-close') {
      // A window went, and its panes with it (no subscription reports a pane that no longer is).
      for (const paneId of [...this.panes.keys()]) {
        conn.c.run(['display-message', '-p', '-t', paneId, '#{pane_id}']).then(
          (r) => {
            if (r.ok) return;
            for (const sub of [...(this.panes.get(paneId)?.subs ?? [])]) this.untap(conn, paneId, sub, 'the pane is gone');
          },
          () => {},
        );
      }
    }
  }
}
