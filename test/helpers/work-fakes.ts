// In-memory fakes for the work services (src/work/, src/agents/, src/workflows/tasks.ts, src/flows/):
// a registry Store that stamps and checks events as the supervisor's RegistryOwner does, then folds
// them with the real reducer; a table of agent panes with their live states; a profile; a log that
// keeps what it was told. Each service takes narrow ports, so these are all a unit test needs.
import { JaggersError } from '../../src/errors.js';
import type { Log } from '../../src/logger.js';
import { ProfileSchema, type Profile } from '../../src/profiles/schema.js';
import { journalEventSchema, type JournalEvent, type NewJournalEvent } from '../../src/sessions/events.js';
import type { UpdatePlan } from '../../src/sessions/registry.js';
import { applyEvent, emptyRegistry, type RegistryData } from '../../src/sessions/schema.js';
import type { PaneInfo } from '../../src/tmux/commands.js';
import type { TurnTarget } from '../../src/turns/turn.js';
import type { Agents, Store, Subscribe, TerminalEntry } from '../../src/work/ports.js';

/** Resolves after every callback queued so far (promise jobs and I/O callbacks of this turn) has run. */
export const flush = () => new Promise<void>((r) => setImmediate(r));

/** Lets the event loop turn `n` times: for chains of awaits that end in a callback of a later turn. */
export async function settle(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await flush();
}

/**
 * The registry as the supervisor's RegistryOwner holds it, in memory: `update` runs one at a time,
 * stamps each event with the clock's time, checks it with the journal's schema and folds it with the
 * real reducer; a plan that throws (or an event that does not fit) changes nothing.
 */
export class FakeStore implements Store {
  data: RegistryData = emptyRegistry();
  /** Every event recorded, in order (as the journal would hold them). */
  readonly events: JournalEvent[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  /** Set to make the next updates fail (a full disk). */
  failing: Error | null = null;

  constructor(private readonly now: () => number = () => Date.now()) {}

  read(): Promise<RegistryData> {
    return Promise.resolve(this.data);
  }

  async record(...events: NewJournalEvent[]): Promise<RegistryData> {
    await this.update(() => ({ events, result: null }));
    return this.data;
  }

  update<T>(fn: (data: RegistryData) => UpdatePlan<T> | Promise<UpdatePlan<T>>): Promise<T> {
    const run = this.chain.then(async () => {
      const plan = await fn(this.data);
      if (plan.events.length === 0) return plan.result;
      if (this.failing) throw this.failing;
      this.apply(plan.events);
      return plan.result;
    });
    this.chain = run.catch(() => {});
    return run;
  }

  /** Record events now, outside the update chain (to set a test up). */
  seed(...events: NewJournalEvent[]): RegistryData {
    this.apply(events);
    return this.data;
  }

  /** The events of one type, in order. */
  of<K extends JournalEvent['type']>(type: K): Extract<JournalEvent, { type: K }>[] {
    return this.events.filter((e): e is Extract<JournalEvent, { type: K }> => e.type === type);
  }

  private apply(events: readonly NewJournalEvent[]): void {
    const ts = new Date(this.now()).toISOString();
    const stamped = events.map((e) => journalEventSchema.parse({ ...e, ts: e.ts ?? ts }));
    let data = this.data;
    for (const e of stamped) data = applyEvent(data, e);
    this.data = data;
    this.events.push(...stamped);
  }
}

/** A profile whose screens the fake panes of these tests draw: `> ` is the input box, a spinner is busy, `Worked for` ends a turn. */
export function testProfile(over: Record<string, unknown> = {}): Profile {
  return ProfileSchema.parse({
    name: 'fake',
    command: 'sh',
    detect: {
      settleMs: 0,
      chrome: '^Worked for',
      rules: [
        { name: 'spinner', status: 'busy', pattern: 'esc to cancel', lines: 3 },
        { name: 'summary', status: 'done', pattern: 'Worked for', lines: 4 },
        { name: 'box', status: 'idle', pattern: '^> ', lines: 1 },
      ],
    },
    delivery: { settleMs: 0, verifyTimeoutMs: 5000, readyTimeoutMs: 5000 },
    ...over,
  });
}

export interface PaneSpec {
  agent: string;
  terminalId: string;
  paneId?: string;
  windowId?: string;
  task?: string | null;
  profile?: Profile | null;
  problem?: string | null;
  dead?: boolean;
  pid?: number | null;
}

let panes = 0;

export function paneInfo(s: PaneSpec): PaneInfo {
  const n = ++panes;
  return {
    windowId: s.windowId ?? `@${n}`,
    windowIndex: n,
    windowName: s.agent,
    paneId: s.paneId ?? `%${n}`,
    panePid: s.pid === undefined ? 1000 + n : s.pid,
    dead: s.dead ?? false,
    deadStatus: s.dead ? 1 : null,
    inMode: false,
    width: 200,
    height: 50,
    terminalId: s.terminalId,
    agent: s.agent,
    profile: s.profile === null ? 'broken' : (s.profile?.name ?? 'fake'),
    state: null,
    task: s.task ?? null,
  };
}

/** The agents' panes as tmux and the watcher would show them, set by the test. */
export class FakeAgents implements Agents {
  readonly entries: TerminalEntry[] = [];
  readonly statuses = new Map<string, string>();
  readonly screens = new Map<string, string>();
  refreshes = 0;

  add(s: PaneSpec, status?: string): TerminalEntry {
    const profile = s.profile === undefined ? testProfile() : s.profile;
    const e: TerminalEntry = { pane: paneInfo(s), profile, problem: profile ? null : (s.problem ?? 'it does not load') };
    this.entries.push(e);
    if (status) this.statuses.set(e.pane.paneId, status);
    return e;
  }

  remove(terminalId: string): void {
    const i = this.entries.findIndex((e) => e.pane.terminalId === terminalId);
    if (i >= 0) this.entries.splice(i, 1);
  }

  /** The pane died (tmux shows it dead). */
  kill(terminalId: string): void {
    const e = this.entries.find((x) => x.pane.terminalId === terminalId)!;
    e.pane = { ...e.pane, dead: true, deadStatus: 1 };
  }

  find(nameOrId: string, task?: string | null): TerminalEntry | undefined {
    if (/^jg-/.test(nameOrId)) return this.entries.find((e) => e.pane.terminalId === nameOrId);
    const named = this.entries.filter((e) => e.pane.agent === nameOrId);
    return (task ? named.find((e) => e.pane.task === task) : undefined) ?? named.find((e) => e.pane.task === null) ?? named[0];
  }

  async get(nameOrId: string, task?: string | null, what = 'agent', op = ''): Promise<TerminalEntry> {
    const e = this.find(nameOrId, task);
    if (!e) throw new JaggersError('E_AGENT_UNKNOWN', `${op ? `${op}: ` : ''}unknown ${what} ${JSON.stringify(nameOrId)}`);
    return e;
  }

  list(task?: string | null): TerminalEntry[] {
    return task === undefined ? [...this.entries] : this.entries.filter((e) => e.pane.task === task);
  }

  async refresh(): Promise<void> {
    this.refreshes++;
  }

  status(paneId: string): string | undefined {
    return this.statuses.get(paneId);
  }

  lastScreen(paneId: string): string | null {
    return this.screens.get(paneId) ?? null;
  }

  /** As the composition root's: a dead pane or a broken profile cannot take a turn. */
  target(e: TerminalEntry, what: string): TurnTarget {
    if (!e.profile) throw new JaggersError('E_PROFILE_INVALID', `${what}: agent ${e.pane.agent}'s profile cannot be loaded: ${e.problem}`);
    if (e.pane.dead || this.status(e.pane.paneId) === 'exited') throw new JaggersError('E_PANE_GONE', `${what}: agent ${e.pane.agent}'s pane is dead`);
    return { paneId: e.pane.paneId, agent: e.pane.agent!, terminalId: e.pane.terminalId, profile: e.profile, pid: e.pane.panePid };
  }
}

/** A log that keeps every line, to check what a service said. */
export function recordingLog(): Log & { lines: { level: string; msg: string; obj: object }[] } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg: string): void =>
      void lines.push({ level, msg, obj });
  const log = { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return log;
}

/** The events that make a terminal in the registry. */
export function terminalEvents(terminalId: string, agent: string, o: { profile?: string; cwd?: string; task?: string | null; sessionId?: string } = {}) {
  const events: NewJournalEvent[] = [
    { type: 'terminal-created', terminalId, agent, profile: o.profile ?? 'fake', cwd: o.cwd ?? '/nowhere', task: o.task ?? null },
  ];
  if (o.sessionId) events.push({ type: 'session-pinned', terminalId, sessionId: o.sessionId, how: 'pre-generated' });
  return events;
}

/** A job-created event with the fields most tests do not care about filled in. */
export function jobEvent(jobId: string, o: Partial<Extract<NewJournalEvent, { type: 'job-created' }>> = {}): NewJournalEvent {
  return {
    type: 'job-created',
    jobId,
    name: null,
    target: 'coder',
    kind: 'agent',
    terminalId: 'jg-c0de',
    from: null,
    fromAgent: null,
    prompt: `.jaggers/jobs/${jobId}.md`,
    bytes: 1,
    timeoutMs: null,
    keep: false,
    ...o,
  };
}

export function messageEvent(messageId: string, o: Partial<Extract<NewJournalEvent, { type: 'message-created' }>> = {}): NewJournalEvent {
  return {
    type: 'message-created',
    messageId,
    to: 'jg-c0de',
    toAgent: 'coder',
    from: null,
    fromAgent: 'user',
    file: `.jaggers/inbox/${messageId}.md`,
    bytes: 1,
    job: null,
    ...o,
  };
}

/** A promise with its resolve and reject at hand. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Resolves once the item `id` is in `state` (at once when it is), as the journal publishes it on the hub. */
export function reaches(hub: Subscribe, store: Store, id: string, state: string): Promise<void> {
  return new Promise((resolve) => {
    if (store.data.jobs[id]?.state === state) return resolve();
    const off = hub.subscribe((e) => {
      if (e.type !== 'job' || e.data.id !== id || e.data.state !== state) return;
      off();
      resolve();
    });
  });
}
