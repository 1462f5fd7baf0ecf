// The supervisor's live state and what the API does with it. One per session: it holds the two tmux
// control connections, the one watcher (a terminal machine per agent pane), the table of agent panes,
// the per-pane queue, the registry handle and the event stream; turns run here and nowhere else.
import stripAnsi from 'strip-ansi';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { publicStatus, type TerminalStatus } from '../../machines/terminal.machine.js';
import type {
  AnswerResult,
  HandoffResult,
  HealthView,
  StreamEvent,
  InputResult,
  ScreenView,
  StateEventData,
  TerminalDetail,
  TerminalView,
  TurnEventData,
} from '../api/types.js';
import type { Context } from '../context.js';
import { deliverNow } from '../delivery/deliver.js';
import { PaneQueue } from '../delivery/queue.js';
import { classify } from '../detect/classify.js';
import { describeQuestion, hasNumberedMenu, pickChoice, readQuestion, rowHighlight, sameQuestion, type Question } from '../detect/question.js';
import { JaggersError } from '../errors.js';
import { newTaskId } from '../task-id.js';
import type { Log } from '../logger.js';
import { binDir } from '../package-root.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { Registry, tmuxTagEvents, type RegistryData } from '../sessions/registry.js';
import { discoverPin } from '../terminals/discover-pin.js';
import { planLaunch, type Launch, type LaunchInput } from '../terminals/plan.js';
import { parseSize, type AgentSpec } from '../project/project-file.js';
import type { Profile } from '../profiles/schema.js';
import { paneField, respawnPane, sendKeys, sendLiteral } from '../tmux/commands.js';
import { describeSocket } from '../tmux/server.js';
import type { ControlClient } from '../tmux/control-client.js';
import { paneIO } from '../tmux/pane-io.js';
import { headlessTurn, type AgentLaunch, type HeadlessPane } from '../turns/headless.js';
import { startTurn, type TurnEnv, type TurnTarget } from '../turns/turn.js';
import type { EventHub } from './event-hub.js';
import { Dispatcher } from './dispatch.js';
import { Inbox } from './inbox.js';
import { Jobs } from './jobs.js';
import { Tasks } from './tasks.js';
import { Flows } from './flows.js';
import { Notifier } from './notify.js';
import { PaneWatcher, type StatusChange } from '../panes/watcher.js';
import { homeOfPid, waitGroupGone } from './proc.js';
import { publishStatus } from './publish.js';
import { RegistryCache } from './registry-cache.js';
import { TerminalTable, type TerminalEntry } from './terminals.js';
import { waitingFor } from './waiting-for.js';
import { writeLaunchFiles } from '../mcp/register.js';

export interface SupervisorDeps {
  ctx: Context;
  /** Receives every pane's output and tmux's notifications. */
  events: ControlClient;
  /** Commands only (attached with no-output), so replies never queue behind output. */
  commands: ControlClient;
  log: Log;
  hub: EventHub;
  version: string;
  socket: string;
  logFile: string;
}

export interface HandoffRequest {
  agent: string;
  message: string;
  from?: string;
  task?: string;
  timeout?: number;
  wait: boolean;
  headless: boolean;
  workflow: string;
}

export const DEFAULT_TURN_TIMEOUT_S = 600;

export class Supervisor {
  readonly watcher: PaneWatcher;
  readonly table: TerminalTable;
  readonly registry: Registry;
  readonly queue = new PaneQueue();
  readonly cache: RegistryCache;
  readonly notifier: Notifier;
  private readonly started = Date.now();
  /** What the registry said when it repaired itself (after a crash): shown by the command that started this supervisor. */
  readonly warnings: string[] = [];
  tcp: string | null = null;
  readonly jobs: Jobs;
  readonly inbox: Inbox;
  /** Aborted when the supervisor stops. */
  readonly stopping = new AbortController();
  readonly dispatch: Dispatcher;
  readonly tasks: Tasks;
  readonly flows: Flows;

  constructor(readonly d: SupervisorDeps) {
    this.registry = new Registry(d.ctx.jaggersDir, {
      // The journal is fsynced on every change; the snapshot is replaced atomically without its own
      // fsyncs (a power loss can leave it behind, and the next load catches it up from the journal).
      durability: 'journal',
      onWarning: (w) => {
        d.log.warn({}, w);
        if (this.warnings.length < 20) this.warnings.push(w);
      },
    });
    this.cache = new RegistryCache(this.registry);
    this.watcher = new PaneWatcher(d.events, { commands: d.commands });
    this.table = new TerminalTable(d.commands, d.ctx.session, d.ctx.jaggersDir, this.watcher, d.log);
    this.notifier = new Notifier(
      d.commands,
      d.log,
      async () => (await d.ctx.project())?.notify,
      (n) => d.hub.publish('notice', { ...n }),
    );
    const kick = (terminalId: string) => this.dispatch.kick(terminalId);
    this.jobs = new Jobs(this, kick, (t) => this.dispatch.waiting(t));
    this.inbox = new Inbox(this, kick, (t) => this.dispatch.waiting(t));
    this.tasks = new Tasks(this);
    this.flows = new Flows(this);
    this.dispatch = new Dispatcher(
      this,
      {
        deliverMessage: (m, e) => this.inbox.deliverMessage(m, e),
        runJob: (j, e) => this.jobs.runJob(j, e),
        paneLost: (j, why) => this.jobs.paneLost(j, why),
      },
      this.jobs.active,
    );
  }

  /** Watch every agent pane tmux knows, record terminals the registry lost, and follow changes. */
  async start(): Promise<void> {
    await this.watcher.start();
    this.watcher.onChange((c) => this.onStatus(c));
    this.watcher.onSession((pane, sessionId) => void this.followSession(pane.terminalId ?? null, pane.agent, sessionId));
    await this.table.refresh();
    await this.recordTags();
    // Jobs and messages left by an earlier supervisor: reopen lost workers, settle claims, follow running turns.
    await this.jobs.start();
    await this.dispatch.kickAll();
    // Workflow tasks: detached ones go on from their stored snapshots.
    await this.tasks.startAll();
    // Scheduled flows: a run the downtime missed goes once now.
    await this.flows.start();
  }

  /** Terminals that only tmux still knows (a registry rebuilt after a crash) are recorded again. */
  private async recordTags(): Promise<void> {
    const tagged = this.table
      .list()
      .filter((e) => e.pane.terminalId && e.pane.profile)
      .map((e) => ({
        terminalId: e.pane.terminalId!,
        agent: e.pane.agent!,
        profile: e.pane.profile!,
        window: e.pane.windowId,
        cwd: this.d.ctx.projectRoot,
        task: e.pane.task,
      }));
    await this.registry.update((data) => ({
      events: tmuxTagEvents(data, tagged, new Date().toISOString()).filter((e) => e.type === 'terminal-created'),
      result: null,
    }));
  }

  private onStatus(c: StatusChange): void {
    const e = this.table.byPane(c.pane.paneId);
    const data: StateEventData = {
      agent: c.pane.agent,
      terminalId: c.pane.terminalId ?? null,
      task: e?.pane.task ?? null,
      pane: c.pane.paneId,
      state: c.status,
      rule: c.rule,
      turns: c.turns,
      since: new Date(c.since).toISOString(),
    };
    this.d.hub.publish('state', { ...data });
    if (data.terminalId) this.dispatch.kick(data.terminalId);
    this.d.log.debug({ agent: data.agent, terminal: data.terminalId, task: data.task, state: data.state, rule: data.rule }, 'state');
    void publishStatus(this.d.commands, c).catch(() => {});
    if (c.status === 'waiting_input') {
      const screen = this.watcher.lastScreen(c.pane.paneId) ?? '';
      const q = readQuestion(screen);
      const reason = q
        ? `${describeQuestion(q)}${q.choices.length ? `; \`jaggers answer ${data.agent} <number or label>\`` : ''}`
        : (c.lines[0] ?? 'a menu on screen');
      void this.notifier.notice({ agent: data.agent, terminalId: data.terminalId, task: data.task, windowId: c.pane.windowId, state: 'waiting_input', reason });
    }
  }

  private async followSession(terminalId: string | null, agent: string, sessionId: string): Promise<void> {
    if (!terminalId) return;
    try {
      const ev = await this.registry.update((d) => {
        const t = d.terminals[terminalId];
        if (!t || t.sessionId === sessionId) return { events: [], result: null };
        const events: NewJournalEvent[] = t.sessionId
          ? [{ type: 'session-forked', terminalId, from: t.sessionId, to: sessionId, reason: 'the CLI reported a new session in its state file' }]
          : [{ type: 'session-pinned', terminalId, sessionId, how: 'discovered' }];
        return { events, result: events[0]! };
      });
      if (ev?.type === 'session-forked') this.d.hub.publish('fork', { agent, terminalId, from: ev.from, to: ev.to });
      if (ev?.type === 'session-pinned') this.d.hub.publish('pin', { agent, terminalId, sessionId, how: ev.how });
      if (ev)
        this.d.log.info(
          { agent, terminal: terminalId, session: sessionId },
          ev.type === 'session-forked' ? 'session forked: the pin follows it' : 'session pinned',
        );
    } catch (e) {
      this.d.log.warn({ agent, terminal: terminalId, err: (e as Error).message }, 'could not record the session the CLI reported');
    }
  }

  health(): HealthView {
    return {
      pid: process.pid,
      version: this.d.version,
      startedAt: new Date(this.started).toISOString(),
      uptimeMs: Date.now() - this.started,
      session: this.d.ctx.session,
      tmux: describeSocket(this.d.ctx.server),
      project: this.d.ctx.projectRoot,
      socket: this.d.socket,
      tcp: this.tcp,
      terminals: this.table.list().length,
      log: this.d.logFile,
      warnings: [...this.warnings],
    };
  }

  private view(e: TerminalEntry, data: RegistryData): TerminalView {
    const snap = this.watcher.snapshot(e.pane.paneId);
    const machine: TerminalStatus = snap?.machine ?? (e.pane.dead ? 'exited' : 'error');
    const state = publicStatus(machine);
    const ctx = snap?.context;
    const screen = state === 'waiting_input' ? this.watcher.lastScreen(e.pane.paneId) : null;
    return {
      agent: e.pane.agent!,
      terminalId: e.pane.terminalId,
      task: e.pane.task,
      profile: e.pane.profile,
      window: e.pane.windowId,
      windowIndex: e.pane.windowIndex,
      pane: e.pane.paneId,
      pid: this.watcher.pane(e.pane.paneId)?.pid ?? e.pane.panePid,
      state,
      since: ctx ? new Date(ctx.since).toISOString() : null,
      rule: ctx?.rule ?? (e.problem ? 'profile-invalid' : null),
      lines: ctx?.lines ?? (e.problem ? [e.problem] : []),
      source: ctx?.source ?? 'tmux',
      turns: ctx?.turns ?? 0,
      sessionId: (e.pane.terminalId && data.terminals[e.pane.terminalId]?.sessionId) || null,
      exitStatus: ctx?.exitStatus ?? e.pane.deadStatus,
      waitingFor: waitingFor(machine, e.profile, e.pane.agent!),
      question: screen ? readQuestion(screen) : null,
      problem: e.problem,
    };
  }

  /** Every agent pane, read from tmux again first (a pane restarted a moment ago shows as such). */
  async terminals(task?: string | null, o: { fresh?: boolean } = { fresh: true }): Promise<TerminalView[]> {
    if (o.fresh) await this.table.refresh();
    const data = await this.cache.get();
    return this.table.list(task).map((e) => this.view(e, data));
  }

  /** One agent, with a fresh reading of what is on screen now (not the reading that decided the state). */
  async terminal(agent: string, task?: string | null): Promise<TerminalDetail> {
    const e = await this.table.get(agent, task);
    const view = this.view(e, await this.cache.get());
    const screen = await paneIO(this.d.commands)
      .capture(e.pane.paneId)
      .catch(() => '');
    const reading = e.profile
      ? classify({ screen, raw: '', rules: e.profile.detect.rules.filter((r) => r.region !== 'raw') })
      : { status: 'unknown', rule: null, lines: [] };
    const screenLines = screen.split('\n').map((l) => l.trimEnd());
    while (screenLines.length && screenLines.at(-1) === '') screenLines.pop();
    return { ...view, now: { ...reading, screenLines: screenLines.slice(-12) } };
  }

  async screen(agent: string, o: { ansi: boolean; history: number; task?: string | null }): Promise<ScreenView> {
    const e = await this.table.get(agent, o.task);
    const screen = await paneIO(this.d.commands).capture(e.pane.paneId, { ansi: o.ansi, ...(o.history ? { history: o.history } : {}) });
    return { agent: e.pane.agent!, terminalId: e.pane.terminalId, pane: e.pane.paneId, ansi: o.ansi, screen: screen.replace(/\n+$/, '') + '\n' };
  }

  /** Resolves with the agent's view once its state is one of `states` (at once if it is); E_TIMEOUT after `timeoutMs`. */
  async waitFor(agent: string, states: readonly string[], timeoutMs: number, task?: string | null): Promise<TerminalView> {
    const e = await this.table.get(agent, task);
    const paneId = e.pane.paneId;
    const now = async () => this.view(this.table.byPane(paneId) ?? e, await this.cache.get());
    const current = this.watcher.status(paneId) ?? (e.pane.dead ? 'exited' : undefined);
    if (current && states.includes(current)) return now();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        this.stopping.signal.removeEventListener('abort', stopped);
        reject(
          new JaggersError(
            'E_TIMEOUT',
            `${e.pane.agent} is still ${this.watcher.status(paneId) ?? 'unwatched'} after ${timeoutMs} ms (waited for ${states.join(' or ')})`,
          ),
        );
      }, timeoutMs);
      const stopped = () => {
        clearTimeout(timer);
        off();
        reject(new JaggersError('E_SUPERVISOR_DOWN', 'the supervisor is stopping'));
      };
      this.stopping.signal.addEventListener('abort', stopped, { once: true });
      const off = this.watcher.onChange((c) => {
        if (c.pane.paneId !== paneId || !states.includes(c.status)) return;
        clearTimeout(timer);
        off();
        this.stopping.signal.removeEventListener('abort', stopped);
        resolve();
      });
    });
    return now();
  }

  /** Resolves when an event on the stream matches, `timeoutMs` ran out, or the supervisor stops. */
  untilEvent(match: (e: StreamEvent) => boolean, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const stopping = this.stopping.signal;
      const timer = setTimeout(done, timeoutMs);
      stopping.addEventListener('abort', done, { once: true });
      const off = this.d.hub.subscribe((e) => {
        if (match(e)) done();
      });
      function done(): void {
        clearTimeout(timer);
        stopping.removeEventListener('abort', done);
        off();
        resolve();
      }
    });
  }

  target(e: TerminalEntry, what: string): TurnTarget {
    if (!e.profile) throw new JaggersError('E_PROFILE_INVALID', `${what}: agent ${e.pane.agent}'s profile cannot be loaded: ${e.problem}`);
    if (e.pane.dead || this.watcher.status(e.pane.paneId) === 'exited') {
      throw new JaggersError(
        'E_PANE_GONE',
        `${what}: agent ${e.pane.agent}'s pane ${e.pane.paneId} is dead (exit status ${e.pane.deadStatus ?? 'unknown'}); run \`jaggers up\` to restart it`,
      );
    }
    return {
      paneId: e.pane.paneId,
      agent: e.pane.agent!,
      terminalId: e.pane.terminalId,
      profile: e.profile,
      pid: this.watcher.pane(e.pane.paneId)?.pid ?? e.pane.panePid,
    };
  }

  /**
   * Answer the menu an agent waits on: the same question must still be on screen (and be the one the
   * caller saw, when it says which), the choice is typed by its number, Enter follows only when the
   * number just moved the highlight, and the menu must go away.
   */
  async answer(agent: string, body: { choice: string; expect?: Question | undefined; task?: string | null | undefined }): Promise<AnswerResult> {
    const e = await this.table.get(agent, body.task, 'agent', 'answer');
    const paneId = e.pane.paneId;
    const name = e.pane.agent!;
    // Not through the pane's queue: the turn that made the agent ask holds it until the answer is given.
    // Answers to one pane still go one at a time.
    const prev = this.answering.get(paneId) ?? Promise.resolve();
    const run = prev
      .catch(() => {})
      .then(async () => {
        const state = this.watcher.status(paneId);
        if (state !== 'waiting_input') throw new JaggersError('E_NOT_WAITING', `answer: ${name} is ${state ?? 'not watched'}, not waiting for an answer`);
        const io = paneIO(this.d.commands);
        const screen = await io.capture(paneId);
        const q = readQuestion(screen);
        // A row menu's highlight is drawn in colour only: read it from a capture with escapes.
        const read =
          q?.layout === 'row'
            ? async () => {
                const styled = await io.capture(paneId, { ansi: true });
                const now = readQuestion(stripAnsi(styled));
                const selected = now?.layout === 'row' ? rowHighlight(styled, now.choices) : undefined;
                return now && selected !== undefined ? { ...now, selected } : now;
              }
            : async () => readQuestion(await io.capture(paneId));
        if (!q || q.choices.length === 0) throw new JaggersError('E_NOT_WAITING', `answer: ${name} shows no menu to answer${q ? ` (it asks: ${q.text})` : ''}`);
        if (body.expect && !sameQuestion(body.expect, q))
          throw new JaggersError(
            'E_SCREEN_CHANGED',
            `answer: ${name}'s screen changed: it now asks ${JSON.stringify(q.text)} (${q.choices.join(' / ')}), not ${JSON.stringify(body.expect.text)} (${body.expect.choices.join(' / ')}); nothing was sent`,
          );
        const picked = pickChoice(q, body.choice);
        if (typeof picked === 'string') throw new JaggersError('E_USAGE', `answer: ${picked}`);
        const gone = (ms: number) =>
          this.watcher.waitFor(paneId, ['busy', 'idle', 'done', 'error', 'exited'], ms).then(
            () => true,
            () => false,
          );
        const keys: string[] = [];
        // A numbered menu takes the digit (most CLIs choose at once; some only move the highlight, and
        // claude 2.1.330 drops keys for a moment after its menu appears): then the highlight is checked.
        if (hasNumberedMenu(screen) && q.selected !== picked.number - 1) {
          keys.push(String(picked.number));
          await sendLiteral(this.d.commands, paneId, String(picked.number));
          if (await gone(1500)) return this.answered(paneId, name, q, picked, keys);
        }
        return this.confirmChoice(paneId, name, q, picked, keys, gone, read);
      });
    this.answering.set(paneId, run);
    try {
      return await run;
    } finally {
      if (this.answering.get(paneId) === run) this.answering.delete(paneId);
    }
  }

  private readonly answering = new Map<string, Promise<unknown>>();

  /**
   * Put the highlight on the choice (arrow keys), check it is there on the same menu, press Enter, and
   * see the menu go. Enter again when the menu stays as it was (claude 2.1.330 ignores keys for a moment
   * after a menu appears); never Enter on a highlight that is not on the choice.
   */
  private async confirmChoice(
    paneId: string,
    name: string,
    q: Question,
    picked: { number: number; label: string },
    keys: string[],
    gone: (ms: number) => Promise<boolean>,
    read: () => Promise<Question | null>,
  ): Promise<AnswerResult> {
    const target = picked.number - 1;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = await read();
      if (!now || !sameQuestion(now, q)) {
        // The menu went away (the status may follow a moment later): answered. Another menu: refused.
        if (this.watcher.status(paneId) !== 'waiting_input' || !now || now.choices.length === 0) return this.answered(paneId, name, q, picked, keys);
        throw new JaggersError(
          'E_SCREEN_CHANGED',
          `answer: ${name}'s screen changed: it now asks ${describeQuestion(now)}; after ${keys.join(', ') || 'no key'} Enter was not pressed`,
        );
      }
      if (now.selected === undefined)
        throw new JaggersError(
          'E_SCREEN_CHANGED',
          `answer: ${name}'s menu shows no highlight to check after ${keys.join(', ') || 'no key'}; Enter was not pressed (answer it with jaggers attach ${name})`,
        );
      if (now.selected !== target) {
        const moves = target - now.selected;
        const [forward, back] = q.layout === 'row' ? ['Right', 'Left'] : ['Down', 'Up'];
        const arrows = Array.from({ length: Math.abs(moves) }, () => (moves > 0 ? forward! : back!));
        keys.push(...arrows);
        await sendKeys(this.d.commands, paneId, arrows);
        // The CLI redraws the highlight on its own time: the next screens the watcher reads (or a fresh one).
        // A row menu's highlight changes colours only, which the watcher does not report: read it again.
        const landed =
          q.layout === 'row'
            ? await readUntil(read, (r) => r?.selected === target, 3000)
            : await this.screenWhere(paneId, (screen) => readQuestion(screen)?.selected === target, 3000);
        if (!landed) {
          const after = await read();
          const on =
            after && sameQuestion(after, q) && after.selected !== undefined
              ? `the highlight is on ${JSON.stringify(after.choices[after.selected])}`
              : 'the menu changed';
          throw new JaggersError(
            'E_SCREEN_CHANGED',
            `answer: ${name}'s menu did not follow: after ${keys.join(', ')} ${on}, not on ${JSON.stringify(picked.label)}; Enter was not pressed`,
          );
        }
      }
      keys.push('Enter');
      await sendKeys(this.d.commands, paneId, ['Enter']);
      if (await gone(2000 + attempt * 1500)) return this.answered(paneId, name, q, picked, keys);
    }
    throw new JaggersError('E_TIMEOUT', `answer: ${name} still shows ${JSON.stringify(q.text)} after ${keys.join(', ')}`);
  }

  private answered(paneId: string, name: string, q: Question, picked: { number: number; label: string }, keys: string[]): AnswerResult {
    this.d.log.info({ agent: name, question: q.text, choice: picked.label, keys }, 'menu answered');
    return { agent: name, pane: paneId, question: q, chose: picked, keys, state: this.watcher.status(paneId) ?? 'unknown' };
  }

  /** The first screen of the pane (a fresh capture, then each one the watcher reads) that satisfies `ok`, or null after `ms`. */
  private async screenWhere(paneId: string, ok: (screen: string) => boolean, ms: number): Promise<string | null> {
    return new Promise<string | null>((resolve) => {
      const finish = (v: string | null) => {
        clearTimeout(timer);
        off();
        resolve(v);
      };
      const timer = setTimeout(() => finish(null), ms);
      const off = this.watcher.onScreen((id, screen) => {
        if (id === paneId && ok(screen)) finish(screen);
      });
      void paneIO(this.d.commands)
        .capture(paneId)
        .then((screen) => ok(screen) && finish(screen))
        .catch(() => {});
    });
  }

  /** Type text into an agent's pane and press Enter, through the same queue as turns, and verify it went in. */
  async input(agent: string, text: string, task?: string | null): Promise<InputResult> {
    const e = await this.table.get(agent, task, 'agent', 'send');
    const target = this.target(e, 'send');
    const d = await this.queue.run(target.paneId, () => deliverNow(paneIO(this.d.commands), this.watcher, target, text, { acceptCleared: true }));
    if (d.kind === 'delivered') {
      this.d.log.info({ agent: target.agent, terminal: target.terminalId, bytes: d.bytes, evidence: d.evidence }, 'input delivered');
      return { agent: target.agent, pane: target.paneId, bytes: d.bytes, submits: d.submits, evidence: d.evidence, ms: d.ms };
    }
    if (d.kind === 'pane-gone') throw new JaggersError('E_PANE_GONE', `send: ${target.agent}'s pane went away: ${d.error}`);
    if (d.kind === 'not-ready')
      throw new JaggersError(d.status.startsWith('waiting_input') ? 'E_AGENT_WAITING' : 'E_TIMEOUT', `send: ${target.agent} never became ready (${d.status})`);
    throw new JaggersError(
      'E_TIMEOUT',
      `send: ${target.agent} did not show that it took the text within ${target.profile.delivery.verifyTimeoutMs} ms${d.stillInInput ? ' (it is still in the input box)' : ' (it was submitted; nothing on screen confirms it)'}`,
    );
  }

  turnEnv(): TurnEnv {
    const d = this.d;
    return {
      io: paneIO(d.commands),
      watch: this.watcher,
      registry: this.registry,
      queue: this.queue,
      projectRoot: d.ctx.projectRoot,
      jaggersDir: d.ctx.jaggersDir,
      log: d.log,
      emit: (e: TurnEventData) => void d.hub.publish('turn', { ...e }),
      homeOf: async (pid) => (pid ? homeOfPid(pid, os.homedir()) : os.homedir()),
      discoverPin: async (target, home, tag) => {
        if (!target.terminalId) return;
        const id = await discoverPin(this.registry, target.terminalId, target.profile, target.pid, home, tag);
        if (id) d.hub.publish('pin', { agent: target.agent, terminalId: target.terminalId, sessionId: id, how: 'discovered' });
      },
    };
  }

  /** One turn: waits for the reply unless `wait` is false (the turn still runs to its end here). */
  async handoff(req: HandoffRequest): Promise<HandoffResult> {
    const task = req.task ?? newTaskId();
    const e = await this.table.get(req.agent, task, 'agent', 'handoff');
    const from = req.from ? await this.table.get(req.from, task, 'agent', 'handoff --from') : null;
    const target = this.target(e, 'handoff');
    const timeoutMs = (req.timeout ?? DEFAULT_TURN_TIMEOUT_S) * 1000;
    const party = from ? { agent: from.pane.agent!, terminalId: from.pane.terminalId } : null;
    const request = { task, workflow: req.workflow, payload: req.message, from: party, timeoutMs, label: req.headless ? 'handoff --headless' : 'handoff' };
    if (req.headless) {
      const paneAlive = !e.pane.dead && this.watcher.status(e.pane.paneId) !== 'exited';
      return headlessTurn(
        { ...this.turnEnv(), launch: (t) => this.headlessLaunch(t, task), pane: paneAlive ? this.headlessPane(e, target) : null },
        target,
        request,
      );
    }
    const turn = startTurn(this.turnEnv(), target, request);
    turn.finished.catch((err: Error) => {
      void this.notifier.notice({
        agent: target.agent,
        terminalId: target.terminalId,
        task,
        windowId: e.pane.windowId,
        state: 'turn-failed',
        reason: err.message,
      });
    });
    return req.wait ? turn.finished : turn.delivered;
  }

  /** The agent's entry in jaggers.json, else what the registry knows of it (an `up` or `demo` without one). */
  private async specOf(e: TerminalEntry): Promise<AgentSpec> {
    const spec = (await this.d.ctx.project())?.agents.find((a) => a.name === e.pane.agent);
    if (spec) return spec;
    const t = e.pane.terminalId ? (await this.cache.get()).terminals[e.pane.terminalId] : undefined;
    const cwd = t?.cwd && path.resolve(t.cwd) !== this.d.ctx.projectRoot ? path.relative(this.d.ctx.projectRoot, t.cwd) : undefined;
    return { name: e.pane.agent!, profile: e.pane.profile ?? '', args: [], env: {}, ...(cwd ? { cwd } : {}) };
  }

  /** What starting an agent of this session needs besides its spec and profile (as `up` gives it). */
  async launchInput(profile: Profile, task: string | null, fallback: { width: number; height: number }, newSessionId: () => string): Promise<LaunchInput> {
    const ctx = this.d.ctx;
    const project = await ctx.project().catch(() => null);
    const size = profile.size ?? (project?.size ? parseSize(project.size, 'jaggers.json size') : fallback);
    return {
      projectRoot: ctx.projectRoot,
      session: ctx.session,
      socket: 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path,
      binDir,
      basePath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      size,
      task,
      newSessionId,
    };
  }

  /** How `up` would start this agent: resuming `sessionId`, or (no conversation yet) starting under it. */
  async launchOf(e: TerminalEntry, profile: Profile, sessionId: string | null, conversation: boolean): Promise<Launch> {
    const input = await this.launchInput(profile, e.pane.task, { width: e.pane.width, height: e.pane.height }, () => sessionId ?? randomUUID());
    return planLaunch(input, await this.specOf(e), profile, e.pane.terminalId!, conversation ? sessionId : null);
  }

  /** The CLI's environment for a headless run: the supervisor's own (tmux's) plus what the agent's launch sets, outside tmux. */
  private async headlessLaunch(t: TurnTarget, task: string): Promise<AgentLaunch> {
    const e = this.table.byPane(t.paneId)!;
    const launch = await this.launchOf(e, t.profile, null, false);
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...launch.env, JAGGERS_TASK_ID: task };
    delete env.TMUX;
    delete env.TMUX_PANE;
    await writeLaunchFiles(launch);
    return { env, args: [...(await this.specOf(e)).args, ...(launch.mcp?.args ?? [])], cwd: launch.cwd };
  }

  /** Stop the agent's TUI for a headless turn (a placeholder holds the pane) and resume it afterwards. */
  private headlessPane(e: TerminalEntry, t: TurnTarget): HeadlessPane {
    const c = this.d.commands;
    return {
      stop: async () => {
        const pid = this.watcher.pane(t.paneId)?.pid ?? t.pid;
        this.watcher.hold(t.paneId, 'headless-turn');
        const note = `jaggers: ${t.agent} is running a headless turn in its pinned conversation; it comes back here when that ends`;
        await respawnPane(c, t.paneId, { cwd: this.d.ctx.projectRoot, env: {}, command: ['sh', '-c', `printf '%s\\n' "$0"; exec sleep 2147483647`, note] });
        if (pid) await waitGroupGone(pid);
      },
      resume: async (sessionId, conversation) => {
        const launch = await this.launchOf(e, t.profile, sessionId, conversation);
        await writeLaunchFiles(launch);
        await respawnPane(c, t.paneId, { cwd: launch.cwd, env: launch.env, command: launch.command });
        const pid = await paneField(c, t.paneId, '#{pane_pid}');
        this.watcher.release(t.paneId, pid ? Number(pid) : null);
        this.d.log.info(
          { agent: t.agent, terminal: t.terminalId, session: sessionId, resumed: conversation },
          'agent started again in its pane after a headless turn',
        );
      },
    };
  }

  stop(): void {
    // Waits for turns end here (a job's is picked up again by the next supervisor); no timer of theirs keeps the process alive.
    this.stopping.abort();
    for (const c of this.jobs.active.values()) c.abort();
    this.tasks.stop();
    this.flows.stop();
    this.dispatch.stop();
    this.watcher.stop();
  }
}

/** Reads until `ok` or `ms` have passed (100 ms apart): for a change no pane output reports. */
async function readUntil<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  for (;;) {
    if (ok(await read())) return true;
    if (performance.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
