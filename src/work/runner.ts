// The one runner: for each agent, the head of its queue (src/work/queue.ts) runs to its end, then the
// next, one at a time, in order. An item waits only on an event, never on a timer or a later arrival:
// its agent becoming ready (a state change kicks the runner), the item before it ending (the loop goes
// on by itself), a window opened or restarted (the table kicks it), a person answering (the item in
// flight follows its own turn). An item in flight when a supervisor died is the head again on the next
// start, and is followed from the phase the journal says it reached.
import { DEFAULT_LIMIT_WAIT_MS } from '../../machines/terminal.machine.js';
import { isDiskError } from '../fs/disk-health.js';
import type { Log } from '../logger.js';
import type { JobRecord, RegistryData } from '../sessions/registry.js';
import type { TerminalEntry } from './ports.js';
import { describeItem, inFlight, itemAgent, queueOf, terminalsWithWork, type WorkItem } from './queue.js';

export interface RunnerPorts {
  data(): RegistryData;
  /** The terminal's pane as tmux shows it now; undefined when it has none. */
  pane(terminalId: string): TerminalEntry | undefined;
  /** The pane's live state (the watcher's), undefined when it is not watched. */
  status(paneId: string): string | undefined;
  /** State `limited`: when the limit resets (null: not shown), when the queue is tried again, what said so. */
  limit?(paneId: string): { resetAt: number | null; until: number; said: string | null } | null | undefined;
  /**
   * The agent is limited (`why`): move its waiting jobs to its fallback, if it has one (src/work/fallback.ts).
   * Resolves with how many moved.
   */
  limited?(terminalId: string, agent: string, why: string): Promise<number>;
  /**
   * Run an item from the phase the journal says it is in to its end, journaling each phase. A job's
   * failure is recorded by it (it resolves); a message try that failed throws, to be tried again.
   * `e` is undefined (or dead) only for a headless job, which needs no pane.
   */
  run(item: WorkItem, e: TerminalEntry | undefined, signal: AbortSignal): Promise<void>;
  /** The agent's pane died or is gone while `j` was in flight (or a worker's before its prompt): it fails. */
  lost(j: JobRecord, why: string): Promise<void>;
  /** A job whose run threw (a bug, or a full disk): it fails, so the queue does not stop behind it. */
  broken(j: JobRecord, err: Error): Promise<void>;
  /**
   * Why an item that has not started may not start now for a reason of its own (a budget reached,
   * src/work/budget.ts), in words; null when it may. Never asked of an item in flight.
   */
  hold?(item: WorkItem): string | null;
  /**
   * An item for an agent on another host (its `host`, src/work/remote-work.ts): why it cannot go on now (its
   * host's connection is down), or null when it can. It needs no pane here; `run` forwards it.
   */
  remote?(host: string): string | null;
  /** The head waits for `hold`'s reason (told each time the runner looks; the port tells a person once). */
  held?(item: WorkItem, why: string): void;
  log: Log;
}

/**
 * A message that failed this many tries in a row waits for the next event (a state change, a new window),
 * or for a wait that doubles with each such round (RETRY_FIRST_MS, at most RETRY_MAX_MS): an agent that
 * stays idle while its screen refuses the prompt sends no event, and the queue must not stop for good.
 */
const TRIES_IN_A_ROW = 3;
export const RETRY_FIRST_MS = 5_000;
export const RETRY_MAX_MS = 300_000;

export class Runner {
  /** The item each terminal runs now, with what stops it. */
  private readonly running = new Map<string, { id: string; stop: AbortController }>();
  private readonly pumping = new Set<string>();
  private readonly again = new Set<string>();
  private readonly why = new Map<string, string>();
  private readonly failures = new Map<string, number>();
  /** Rounds of failed tries in a row of each terminal's head (not reset by a kick: only by a try that works, or another head). */
  private readonly rounds = new Map<string, { id: string; n: number }>();
  private readonly wakes = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly p: RunnerPorts) {}

  /** Something changed for this terminal (an item added or ended elsewhere, its state, its window): look again. */
  kick(terminalId: string): void {
    if (this.stopped) return;
    this.failures.delete(terminalId);
    if (this.pumping.has(terminalId)) {
      this.again.add(terminalId);
      return;
    }
    void this.pump(terminalId).catch((e: Error) => this.p.log.error({ terminal: terminalId, err: e.message }, 'runner failed'));
  }

  /** Look at every terminal with work (after a start, or when many may have changed). */
  kickAll(): void {
    for (const id of terminalsWithWork(this.p.data())) this.kick(id);
  }

  /** The item the terminal runs now. */
  current(terminalId: string): string | null {
    return this.running.get(terminalId)?.id ?? null;
  }

  /** Stop following an item that runs now (it was cancelled and recorded so). */
  abort(itemId: string): void {
    for (const r of this.running.values()) if (r.id === itemId) r.stop.abort();
  }

  /**
   * Why an item has not gone in, in words, always as things stand now: what the head of its queue
   * waits for, or which item it waits behind. Null for an item that runs or is not queued.
   */
  waiting(terminalId: string, itemId?: string): string | null {
    const q = queueOf(this.p.data(), terminalId);
    const head = q[0];
    if (!head) return null;
    const place = itemId === undefined ? 0 : q.findIndex((i) => i.id === itemId);
    if (place < 0) return null;
    if (place > 0) {
      const state = head.kind === 'job' ? head.j.state : head.m.state;
      return `behind ${describeItem(head)} (${state})${place > 1 ? ` and ${place - 1} more` : ''} for ${itemAgent(head)}`;
    }
    if (this.running.get(terminalId)?.id === head.id) return null;
    return this.why.get(terminalId) ?? this.blocked(head, terminalId) ?? 'next for its agent: goes in now';
  }

  /** Why the head cannot start now, or null when it can. */
  private blocked(head: WorkItem, terminalId: string): string | null {
    const held = inFlight(head) ? null : (this.p.hold?.(head) ?? null);
    if (held) return held;
    const host = head.kind === 'job' ? head.j.host : head.m.host;
    if (host) return this.p.remote ? this.p.remote(host) : `${itemAgent(head)} is on host ${host}, which this runner cannot reach`;
    const agent = itemAgent(head);
    if (head.kind === 'job' && head.j.headless) return inFlight(head) ? null : this.headlessLimited(head.j, terminalId);
    const e = this.p.pane(terminalId);
    if (!e) return `${agent} has no window open: run \`jaggers up\``;
    if (e.pane.dead || this.p.status(e.pane.paneId) === 'exited') return `${agent}'s pane is dead: run \`jaggers up\` to restart it`;
    if (!e.profile) return `${agent}'s profile cannot be loaded: ${e.problem}`;
    if (inFlight(head)) return null;
    const status = this.p.status(e.pane.paneId) ?? 'starting';
    // Its limit's reset ends the state by itself (a timer in the pane's machine): the queue goes on then.
    if (status === 'limited') return this.limitedWords(head, agent, e.pane.paneId);
    const ready = e.profile.delivery.ready as readonly string[];
    if (ready.includes(status)) return null;
    const how = status === 'waiting_input' ? ` (it waits for a person: \`jaggers answer ${agent} <choice>\` or \`jaggers attach ${agent}\`)` : '';
    return `${agent} is ${status}${how}; the next item goes in when it is ${ready.join(' or ')}`;
  }

  /**
   * A headless item waits for a usage limit too (docs/limits.md): its agent's pane `limited`, or, with no
   * live pane, the limit that cut its own last run until its reset (a timer kicks the queue then).
   */
  private headlessLimited(j: JobRecord, terminalId: string): string | null {
    const e = this.p.pane(terminalId);
    const item: WorkItem = { kind: 'job', id: j.id, seq: j.seq, created: j.created, j };
    if (e && !e.pane.dead && this.p.status(e.pane.paneId) === 'limited') return this.limitedWords(item, itemAgent(item), e.pane.paneId);
    if (e && !e.pane.dead) return null;
    const l = j.limited;
    if (!l || l.terminalId !== terminalId) return null;
    const until = l.resetAt ? Date.parse(l.resetAt) : Date.parse(l.at) + DEFAULT_LIMIT_WAIT_MS;
    if (until <= Date.now()) return null;
    this.wakeAt(terminalId, until);
    return `its run was stopped by ${j.agent ?? j.target}'s usage limit (${l.said ?? 'no reset time shown'}); it runs again at ${new Date(until).toISOString()}`;
  }

  /** Look at the terminal's queue again at `at` (a headless item's limit with no pane to time it, a message's next round of tries). */
  private wakeAt(terminalId: string, at: number): void {
    const t = this.wakes.get(terminalId);
    if (t?.at === at) return;
    if (t) clearTimeout(t.timer);
    const timer = setTimeout(
      () => {
        this.wakes.delete(terminalId);
        this.kick(terminalId);
      },
      at - Date.now() + 5,
    );
    timer.unref();
    this.wakes.set(terminalId, { at, timer });
  }

  /** Why the head waits for its agent's limit, in words. */
  private limitedWords(head: WorkItem, agent: string, paneId: string): string {
    const l = this.p.limit?.(paneId);
    const at = l ? new Date(l.until).toISOString() : null;
    // An item whose turn the limit cut (docs/limits.md) runs again; it says so.
    if (head.kind === 'job' && head.j.limited) {
      const again = at ? `it runs again at ${l?.resetAt !== null ? "the limit's reset, " : ''}${at}` : 'it runs again at its reset';
      return `its turn was cut by ${agent}'s usage limit (${l?.said ?? head.j.limited.said ?? 'on screen'}); ${again}`;
    }
    if (!l || !at) return `${agent} hit a usage limit; the next item waits for its reset`;
    return l.resetAt !== null
      ? `${agent} hit a usage limit (${l.said ?? 'on screen'}); the next item waits for the limit's reset at ${at}`
      : `${agent} hit a usage or rate limit that showed no reset time; the next item is tried at ${at}`;
  }

  private async pump(terminalId: string): Promise<void> {
    this.pumping.add(terminalId);
    try {
      while (!this.stopped) {
        this.again.delete(terminalId);
        const head = queueOf(this.p.data(), terminalId)[0];
        if (!head) {
          this.why.delete(terminalId);
          return;
        }
        const blocked = this.blocked(head, terminalId);
        if (blocked) {
          this.why.set(terminalId, blocked);
          const e = this.p.pane(terminalId);
          // A turn in a pane that died is lost, and so is a worker that died before its prompt: the job
          // fails. A team agent with no window at all (its tmux server went away) waits for `up`, which
          // reopens it: the turn is then found lost or finished by what the new pane shows.
          const dead = e ? e.pane.dead || this.p.status(e.pane.paneId) === 'exited' : head.kind === 'job' && head.j.kind === 'worker';
          const lost = head.kind === 'job' && dead && (inFlight(head) || head.j.kind === 'worker');
          if (lost) {
            await this.p.lost(head.j, blocked);
            continue;
          }
          if (e && this.p.limited && this.p.status(e.pane.paneId) === 'limited') {
            const l = this.p.limit?.(e.pane.paneId);
            const why = l?.resetAt ? `hit a usage limit that resets at ${new Date(l.resetAt).toISOString()}` : 'hit a usage or rate limit';
            if ((await this.p.limited(terminalId, itemAgent(head), why)) > 0) continue;
          }
          if (!inFlight(head) && this.p.hold?.(head) === blocked) this.p.held?.(head, blocked);
          if (this.again.has(terminalId)) continue;
          return;
        }
        this.why.delete(terminalId);
        if (!(await this.runOne(terminalId, head))) {
          if (this.again.has(terminalId)) continue;
          return;
        }
      }
    } finally {
      this.pumping.delete(terminalId);
      if (this.again.delete(terminalId) && !this.stopped) this.kick(terminalId);
    }
  }

  /** Run the head; false when a message try failed too often in a row (it waits for the next event). */
  private async runOne(terminalId: string, head: WorkItem): Promise<boolean> {
    const stop = new AbortController();
    this.running.set(terminalId, { id: head.id, stop });
    try {
      await this.p.run(head, this.p.pane(terminalId), stop.signal);
      this.failures.delete(terminalId);
      this.rounds.delete(terminalId);
      return true;
    } catch (err) {
      if (this.stopped) return false;
      const e = err as Error;
      // A full or failing disk is not the item's fault: it stays as the journal has it and goes on when a
      // write succeeds again (the disk's recovery kicks every queue), instead of failing or running in a loop.
      if (isDiskError(e)) {
        this.p.log.warn({ terminal: terminalId, item: head.id, err: e.message }, 'work item held: the disk refuses writes');
        this.why.set(terminalId, `held: ${e.message}; it goes on when the disk takes writes again`);
        return false;
      }
      if (head.kind === 'job') {
        this.p.log.error({ terminal: terminalId, item: head.id, err: e.message }, 'work item broke');
        try {
          await this.p.broken(head.j, e);
        } catch (x) {
          this.p.log.error({ item: head.id, err: (x as Error).message }, 'could not record a broken item');
          // Not recorded, so still the head: tried again at the next event, not at once.
          this.why.set(terminalId, `${describeItem(head)} broke (${e.message}) and its end could not be recorded: ${(x as Error).message}`);
          return false;
        }
        return true;
      }
      const n = (this.failures.get(terminalId) ?? 0) + 1;
      this.failures.set(terminalId, n);
      this.p.log.warn({ terminal: terminalId, item: head.id, tries: n, err: e.message }, 'message not delivered; tried again');
      if (n < TRIES_IN_A_ROW) return true;
      const last = this.rounds.get(terminalId);
      const round = last?.id === head.id ? last.n + 1 : 1;
      this.rounds.set(terminalId, { id: head.id, n: round });
      const at = Date.now() + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (round - 1));
      this.wakeAt(terminalId, at);
      this.why.set(
        terminalId,
        `the last ${n} tries failed (${e.message}); tried again at ${new Date(at).toISOString()} or at the agent's next change of state`,
      );
      return false;
    } finally {
      this.running.delete(terminalId);
    }
  }

  /** Stop starting items; those in flight are left as the journal says (the next supervisor follows them). */
  stop(): void {
    this.stopped = true;
    for (const w of this.wakes.values()) clearTimeout(w.timer);
    this.wakes.clear();
    for (const r of this.running.values()) r.stop.abort();
  }
}
