// What goes to an agent next: its inbox messages and the jobs assigned to it, oldest first, one at a
// time, each only when the agent is ready (idle or done) and nothing else holds its pane. A job that
// was running when an earlier supervisor died goes first, whatever the agent's state: its turn is
// followed to its end again. Nothing polls: a state change, a new message or job, or an item's end
// starts the next look.
import type { JobRecord, MessageRecord, RegistryData } from '../sessions/registry.js';
import type { Supervisor } from './core.js';
import type { TerminalEntry } from '../agents/table.js';

export type WorkItem = { kind: 'message'; m: MessageRecord; created: string } | { kind: 'job'; j: JobRecord; created: string; resume: boolean };

export interface WorkRunner {
  deliverMessage(m: MessageRecord, e: TerminalEntry): Promise<void>;
  runJob(j: JobRecord, e: TerminalEntry): Promise<void>;
  /** The terminal's pane is dead or gone while `j` waits for it (a worker that died at start). */
  paneLost(j: JobRecord, why: string): Promise<void>;
}

/** The terminal's work in order: jobs to pick up after a restart first, then messages and jobs by age. */
export function workFor(data: RegistryData, terminalId: string, active: { has(id: string): boolean }): WorkItem[] {
  const items: WorkItem[] = [];
  for (const j of Object.values(data.jobs)) {
    if (j.terminalId !== terminalId || active.has(j.id)) continue;
    const resume = j.state === 'running' || j.state === 'waiting_input';
    if (resume || j.state === 'queued' || j.state === 'starting') items.push({ kind: 'job', j, created: j.created, resume });
  }
  for (const m of Object.values(data.messages)) if (m.to === terminalId && m.state !== 'delivered') items.push({ kind: 'message', m, created: m.created });
  const rank = (i: WorkItem) => (i.kind === 'job' && i.resume ? 0 : 1);
  return items.sort((a, b) => rank(a) - rank(b) || a.created.localeCompare(b.created));
}

const RETRY_MS = 1000;

export class Dispatcher {
  /** Terminals with an item in hand. */
  private readonly busy = new Set<string>();
  /** Why a terminal's work waits, for `inbox`. */
  private readonly why = new Map<string, string>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private readonly again = new Set<string>();
  private stopped = false;

  constructor(
    private readonly s: Supervisor,
    private readonly runner: WorkRunner,
    /** Jobs being run now (their ids). */
    private readonly active: { has(id: string): boolean },
  ) {}

  waiting(terminalId: string): string | null {
    if (this.busy.has(terminalId)) return 'an earlier message or job for this agent is being delivered or is running';
    return this.why.get(terminalId) ?? null;
  }

  /** Look at every terminal with work (after a start, or when many may have changed). */
  async kickAll(): Promise<void> {
    const data = await this.s.cache.get();
    const ids = new Set<string>();
    for (const j of Object.values(data.jobs)) if (j.terminalId) ids.add(j.terminalId);
    for (const m of Object.values(data.messages)) if (m.state !== 'delivered') ids.add(m.to);
    for (const id of ids) this.kick(id);
  }

  kick(terminalId: string): void {
    if (this.stopped) return;
    if (this.busy.has(terminalId)) {
      this.again.add(terminalId);
      return;
    }
    void this.pump(terminalId).catch((e: Error) => this.s.d.log.error({ terminal: terminalId, err: e.message }, 'dispatch failed'));
  }

  private later(terminalId: string): void {
    clearTimeout(this.retries.get(terminalId));
    this.retries.set(
      terminalId,
      setTimeout(() => {
        this.retries.delete(terminalId);
        this.kick(terminalId);
      }, RETRY_MS),
    );
  }

  private async pump(terminalId: string): Promise<void> {
    if (this.busy.has(terminalId)) return;
    this.busy.add(terminalId);
    let failed = false;
    let ran = false;
    try {
      const next = workFor(await this.s.cache.get(), terminalId, this.active)[0];
      if (!next) return void this.why.delete(terminalId);
      const e = this.s.table.find(terminalId);
      const agent = next.kind === 'job' ? (next.j.agent ?? next.j.target) : next.m.toAgent;
      if (!e || e.pane.dead || this.s.watcher.status(e.pane.paneId) === 'exited') {
        const why = e ? `${agent}'s pane is dead: run \`jaggers up\` to restart it` : `${agent} has no window open: run \`jaggers up\``;
        this.why.set(terminalId, why);
        // A turn in a pane that died is lost, and so is a worker that died before its prompt: the job fails.
        const lost = next.kind === 'job' && (next.resume || (next.j.kind === 'worker' && next.j.state === 'starting' && e));
        if (lost) await this.runner.paneLost(next.j, why);
        return;
      }
      if (!e.profile) return void this.why.set(terminalId, `${agent}'s profile cannot be loaded: ${e.problem}`);
      const status = this.s.watcher.status(e.pane.paneId) ?? 'starting';
      const resume = next.kind === 'job' && next.resume;
      if (!resume && !e.profile.delivery.ready.includes(status as never)) {
        return void this.why.set(terminalId, `${agent} is ${status}; the next one goes in when it is ${e.profile.delivery.ready.join(' or ')}`);
      }
      if (this.s.queue.pending(e.pane.paneId) > 0) return void this.why.set(terminalId, `${agent}'s pane is taken by a handoff or send`);
      this.why.delete(terminalId);
      try {
        await this.s.queue.run(e.pane.paneId, () => (next.kind === 'message' ? this.runner.deliverMessage(next.m, e) : this.runner.runJob(next.j, e)));
        ran = true;
      } catch (err) {
        failed = true;
        this.why.set(terminalId, `the last try failed: ${(err as Error).message}`);
        this.s.d.log.warn({ terminal: terminalId, agent, item: next.kind === 'job' ? next.j.id : next.m.id, err: (err as Error).message }, 'will try again');
      }
    } finally {
      this.busy.delete(terminalId);
    }
    const again = this.again.delete(terminalId);
    if (failed) this.later(terminalId);
    else if (ran || again) this.kick(terminalId);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.retries.values()) clearTimeout(t);
  }
}
