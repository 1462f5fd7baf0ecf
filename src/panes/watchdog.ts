// The watchdog (docs/limits.md): an agent that looks stuck, said once per stretch.
// - `silent`: busy, and neither its screen (its spinner line and the digits of its timer aside) nor its
//   hooks have moved for `stuckAfterMs` (default 10 min). gemini retrying a rate limit looks exactly so:
//   only `Thinking... (esc to cancel, 10m 49s)`.
// - `repeated-question`: the same question (permission or choice menu) asked `REPEATS` times in a row.
// - `tool-loop`: the same tool call with the same input `REPEATS` times in a row within a turn, from the
//   CLI's pre-tool-use hook (claude's PreToolUse; CLIs without one are not watched for this).
// Driven by events only: a status change, a new screen, a hook call; one timer per busy agent, set to
// when it would be stuck (moved on by whatever happened meanwhile), never a poll. Each is said once per
// busy stretch (silent) or per run of repeats. Output clears a silent finding and watches for the next
// silence, which stands again (`again`) for `why` and the API without being said twice.
import type { Clock, TimerHandle } from './clock.js';

export type StuckKind = 'silent' | 'repeated-question' | 'tool-loop';

export interface StuckFinding {
  paneId: string;
  agent: string;
  kind: StuckKind;
  /** When the agent last showed a sign of progress (silent), or first asked / called (repeats). */
  since: number;
  reason: string;
  /** Not the first silence of this busy stretch (it moved after the first, then went silent again):
   *  it stands for `why` and the API, and is not said again. */
  again?: boolean;
}

export interface WatchdogPorts {
  clock: Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;
  /** How long a busy agent may go without output or a hook call (ms). */
  stuckAfterMs(agent: string): number;
  /** When the pane's hooks last called the bridge (ms since the epoch), or null. */
  lastHookAt(paneId: string): number | null;
  /** Something looks stuck: published, notified, acted on (once per stretch). */
  found(f: StuckFinding): void;
}

/** Asked or called this many times in a row: a loop. */
export const REPEATS = 3;
export const DEFAULT_STUCK_AFTER_MS = 10 * 60_000;

interface Watched {
  agent: string;
  busy: boolean;
  /** The last sign of progress: a changed screen (beside its spinner), a status change. */
  movedAt: number;
  fingerprint: string | null;
  timer: TimerHandle | null;
  question: { text: string; count: number; since: number } | null;
  tool: { key: string; count: number; since: number } | null;
  finding: StuckFinding | null;
  /** A silent finding was said in this busy stretch (a later one is said `again`). */
  saidSilent: boolean;
}

/** The screen without what moves while nothing happens: its busy lines (a spinner, a timer) and every digit. */
export function screenFingerprint(screen: string, busy: readonly RegExp[]): string {
  return screen
    .split('\n')
    .filter((l) => !busy.some((re) => re.test(l)))
    .join('\n')
    .replace(/[0-9]/g, '#')
    .replace(/[⠀-⣿◐◓◑◒·✻✶✳✢✽*⏺●○◦•]/gu, '')
    .trimEnd();
}

/** `45 s`, `10 min`, `1.5 h`. */
function duration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round((ms / 60_000) * 10) / 10} min`;
  return `${Math.round((ms / 3_600_000) * 10) / 10} h`;
}

export class Watchdog {
  private readonly panes = new Map<string, Watched>();

  constructor(private readonly p: WatchdogPorts) {}

  /** The pane's status changed. */
  status(paneId: string, agent: string, status: string): void {
    const w = this.entry(paneId, agent);
    const now = this.p.clock.now();
    const busy = status === 'busy';
    if (busy && !w.busy) {
      w.movedAt = now;
      w.busy = true;
      w.saidSilent = false;
      this.arm(paneId, w, now + this.p.stuckAfterMs(agent));
    } else if (!busy && w.busy) {
      w.busy = false;
      this.disarm(w);
      if (w.finding?.kind === 'silent') w.finding = null;
    }
    // A turn's end (or a menu) ends a tool loop's count; a new turn starts it over.
    if (status !== 'busy') w.tool = null;
    if (status === 'idle' || status === 'done') {
      w.question = null;
      if (w.finding?.kind !== 'silent') w.finding = null;
    }
  }

  /** A new screen of the pane; `busy`: its profile's busy patterns (their lines move by themselves). */
  screen(paneId: string, screen: string, busy: readonly RegExp[]): void {
    const w = this.panes.get(paneId);
    if (!w) return;
    // Only a busy pane is watched for silence (its turn's start is its first sign of progress).
    if (!w.busy) {
      w.fingerprint = null;
      return;
    }
    const f = screenFingerprint(screen, busy);
    if (f === w.fingerprint) return;
    w.fingerprint = f;
    w.movedAt = this.p.clock.now();
    // Progress after a finding: it no longer stands, and a new silence is watched for (the timer was spent).
    if (w.finding?.kind === 'silent') {
      w.finding = null;
      this.arm(paneId, w, w.movedAt + this.p.stuckAfterMs(w.agent));
    }
  }

  /** The pane shows a question (a permission or choice menu): the same one again and again is a loop. */
  question(paneId: string, agent: string, text: string): void {
    const w = this.entry(paneId, agent);
    const now = this.p.clock.now();
    w.question = w.question?.text === text ? { ...w.question, count: w.question.count + 1 } : { text, count: 1, since: now };
    if (w.question.count === REPEATS) {
      this.report(paneId, w, 'repeated-question', w.question.since, `asked the same question ${REPEATS} times in a row: ${text}`);
    }
  }

  /** A pre-tool-use hook: the tool and its input, as the CLI called it. */
  tool(paneId: string, agent: string, tool: string, input: string): void {
    const w = this.entry(paneId, agent);
    const key = `${tool}\n${input}`;
    const now = this.p.clock.now();
    w.tool = w.tool?.key === key ? { ...w.tool, count: w.tool.count + 1 } : { key, count: 1, since: now };
    if (w.tool.count === REPEATS) {
      const shown = input.length > 120 ? `${input.slice(0, 119)}…` : input;
      this.report(paneId, w, 'tool-loop', w.tool.since, `called ${tool} with the same input ${REPEATS} times in a row in one turn: ${shown}`);
    }
  }

  /** What the watchdog found on the pane and still stands, for `why` and the API. */
  finding(paneId: string): StuckFinding | null {
    return this.panes.get(paneId)?.finding ?? null;
  }

  forget(paneId: string): void {
    const w = this.panes.get(paneId);
    if (w) this.disarm(w);
    this.panes.delete(paneId);
  }

  stop(): void {
    for (const id of [...this.panes.keys()]) this.forget(id);
  }

  private entry(paneId: string, agent: string): Watched {
    let w = this.panes.get(paneId);
    if (!w) {
      w = { agent, busy: false, movedAt: this.p.clock.now(), fingerprint: null, timer: null, question: null, tool: null, finding: null, saidSilent: false };
      this.panes.set(paneId, w);
    }
    return w;
  }

  private arm(paneId: string, w: Watched, at: number): void {
    this.disarm(w);
    w.timer = this.p.clock.setTimeout(() => this.check(paneId, w), Math.max(0, at - this.p.clock.now()));
  }

  private disarm(w: Watched): void {
    if (w.timer !== null) this.p.clock.clearTimeout(w.timer);
    w.timer = null;
  }

  /** The timer fired: stuck, unless the screen or a hook moved since (then look again when that would be). */
  private check(paneId: string, w: Watched): void {
    w.timer = null;
    if (!w.busy || this.panes.get(paneId) !== w) return;
    const after = this.p.stuckAfterMs(w.agent);
    const last = Math.max(w.movedAt, this.p.lastHookAt(paneId) ?? 0);
    const now = this.p.clock.now();
    if (now - last < after) return this.arm(paneId, w, last + after);
    // Said once per busy stretch: an interrupted turn's last frames come while the turn still reads busy.
    this.report(paneId, w, 'silent', last, `busy with no output and no hook event for ${duration(now - last)}`, w.saidSilent);
    w.saidSilent = true;
  }

  /** A finding stands (for `why` and the API); it is said (event, notice, interrupt) unless `again`. */
  private report(paneId: string, w: Watched, kind: StuckKind, since: number, reason: string, again = false): void {
    const f: StuckFinding = { paneId, agent: w.agent, kind, since, reason, ...(again ? { again } : {}) };
    w.finding = f;
    if (!again) this.p.found(f);
  }
}
