// The composition root: builds the supervisor's services, each on the narrow ports it needs, and wires
// the one path events take: tmux output -> the watcher -> a state change -> the event stream, the
// runner of that agent's queue, the status line, a notice. No logic of its own beyond that wiring.
import { atMostEvery } from '../coalesced.js';
import { HostWorktrees } from '../hosts/host-worktrees.js';
import os from 'node:os';
import path from 'node:path';
import type { HealthView, StateEventData, StreamEvent, TurnEventData } from '../api/types.js';
import { Answers } from '../agents/answer.js';
import { Isolation } from '../agents/isolation.js';
import { Launcher } from '../agents/launcher.js';
import { realSessionNicePorts, SessionNice } from '../agents/session-nice.js';
import { homeOfPid } from '../agents/proc.js';
import { usageSource } from '../usage/source.js';
import { priceTable } from '../usage/prices.js';
import { usageReport, type UsageBy } from '../usage/report.js';
import { TerminalTable } from '../agents/table.js';
import { AgentViews } from '../agents/views.js';
import type { Context } from '../context.js';
import { describeQuestion, readQuestion } from '../detect/question.js';
import { JaggersError } from '../errors.js';
import { Flows } from '../flows/scheduler.js';
import type { DiskHealth } from '../fs/disk-health.js';
import type { Log } from '../logger.js';
import { binDir } from '../package-root.js';
import { listProfileNames, loadProfile } from '../profiles/load.js';
import { maxWorkersOf, parseProjectFile, type ProjectFile } from '../project/project-file.js';
import type { NewJournalEvent } from '../sessions/events.js';
import type { RegistryOwner } from '../sessions/owner.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import { sendBytes, sendKeys, sendLiteral } from '../tmux/commands.js';
import { openControl } from '../tmux/connect.js';
import { PaneTaps } from '../web/pane-taps.js';
import type { ControlClient } from '../tmux/control-client.js';
import { paneIO } from '../tmux/pane-io.js';
import { describeSocket } from '../tmux/server.js';
import type { TurnEnv, TurnTarget } from '../turns/turn.js';
import { Handoffs } from '../work/handoffs.js';
import { Inbox } from '../work/inbox.js';
import { OutboxHome } from '../work/outbox-home.js';
import { Outbox } from '../work/outbox.js';
import { Jobs } from '../work/jobs.js';
import { WorkJournal } from '../work/journal.js';
import { moveToFallback } from '../work/fallback.js';
import { Outcomes } from '../work/outcomes.js';
import { realClock, type Agents } from '../work/ports.js';
import { RemoteWork } from '../work/remote-work.js';
import { runHeadless } from '../work/run-headless.js';
import { runMessage } from '../work/run-message.js';
import { runSend } from '../work/run-send.js';
import { runPaneTurn } from '../work/run-turn.js';
import { Runner } from '../work/runner.js';
import { queueOf } from '../work/queue.js';
import { Workers } from '../work/workers.js';
import { Budgets } from '../work/budgets.js';
import { ContextWatch } from '../work/context.js';
import { contextWindows } from '../usage/context.js';
import type { BudgetConfig } from '../work/budget.js';
import type { Budget } from '../usage/budget-schema.js';
import { listWorkflows } from '../workflows/load.js';
import { Tasks } from '../workflows/tasks.js';
import type { EventHub } from './event-hub.js';
import { Notifier } from './notify.js';
import { PaneWatcher } from '../panes/watcher.js';
import { DEFAULT_STUCK_AFTER_MS, Watchdog, type StuckFinding } from '../panes/watchdog.js';
import { realClock as paneClock } from '../panes/clock.js';
import { regexOf } from '../detect/classify.js';
import { statusLine } from './publish.js';
import { ChangedFileReader } from '../fs/changed-file.js';
import { existsSync, readdirSync } from 'node:fs';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import { writeBridgeShell } from '../panes/bridge-shell.js';
import { HookSpool, hookSpoolDir } from '../panes/hook-spool.js';
import { Hosts } from './hosts.js';

export interface SupervisorDeps {
  ctx: Context;
  /** Receives every pane's output and tmux's notifications. */
  events: ControlClient;
  /** Commands only (attached with no-output), so replies never queue behind output. */
  commands: ControlClient;
  registry: RegistryOwner;
  log: Log;
  hub: EventHub;
  version: string;
  socket: string;
  logFile: string;
  /** Where write failures go: new work waits while the disk fails, and queues go on when it works again. */
  disk: DiskHealth;
}

export type Supervisor = ReturnType<typeof compose>;

/** jaggers.json's text: asked for as each turn starts, it is read again only when it changed. */
const projectText = new ChangedFileReader({ max: 4 });
/** The last jaggers.json parsed, frozen (shared by every caller until the file changes). */
let lastProject: { file: string; text: string; project: ProjectFile } | null = null;

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** jaggers.json as it is on disk now (null without one): looked at each time, it may change while the supervisor runs. */
async function readProject(root: string): Promise<ProjectFile | null> {
  const file = path.join(root, 'jaggers.json');
  const text = await projectText.read(file);
  if (text === null) return null;
  if (lastProject?.file === file && lastProject.text === text) return lastProject.project;
  const project = deepFreeze(await parseProjectFile(text, file));
  lastProject = { file, text, project };
  return project;
}

/** jaggers.json's budgets: the session's and each agent's (docs/usage.md, Budgets). */
function budgetConfig(p: ProjectFile | null): BudgetConfig {
  const agents: Record<string, Budget> = {};
  for (const a of p?.agents ?? []) if (a.budget) agents[a.name] = a.budget;
  return { ...(p?.budget ? { session: p.budget } : {}), agents };
}

export function compose(d: SupervisorDeps) {
  const { ctx, commands, log, hub, registry: store } = d;
  const started = Date.now();
  const stopping = new AbortController();
  const dirs = { projectRoot: ctx.projectRoot, jaggersDir: ctx.jaggersDir };
  const io = paneIO(commands);
  const project = () => readProject(ctx.projectRoot);
  const profile = async (name: string) => (await loadProfile(name, ctx.jaggersDir)).profile;
  const warnings = [...store.warnings].slice(0, 20);

  const watcher = new PaneWatcher(d.events, {
    commands,
    // Started with its hooks installed: the launcher wrote its hook folder (hooks off: it removed it).
    hooksInstalled: (pane) => pane.terminalId != null && existsSync(path.join(ctx.jaggersDir, 'hooks', pane.terminalId)),
  });
  // The CLIs' hook calls (issue 27): the bridge drops each into this folder; one watch, each handed to its pane.
  const spool = new HookSpool({
    dir: hookSpoolDir(ctx.jaggersDir),
    deliver: (call) => {
      const skipped = watcher.hookCall(call);
      if (skipped) log.info({ terminal: call.terminalId, event: call.event }, `hook call skipped: ${skipped}`);
    },
    skipped: (file, why) => log.warn({ file }, `hook spool file skipped: ${why}`),
  });
  const table = new TerminalTable(commands, ctx.session, ctx.jaggersDir, watcher, log);
  const notifier = new Notifier(
    commands,
    log,
    async () => (await project().catch(() => null))?.notify,
    (n) => hub.publish('notice', { ...n }),
  );

  /** The watchdog's settings per agent, from jaggers.json as last read (its timers need them at once). */
  const stuckSettings = new Map<string, { afterMs: number; onStuck: 'notify' | 'interrupt' }>();
  const readStuckSettings = async () => {
    const p = await project().catch(() => null);
    stuckSettings.clear();
    for (const a of p?.agents ?? [])
      stuckSettings.set(a.name, {
        afterMs: (a.stuckAfter ?? p?.stuckAfter ?? DEFAULT_STUCK_AFTER_MS / 1000) * 1000,
        onStuck: a.onStuck ?? p?.onStuck ?? 'notify',
      });
  };
  const rereadStuckSettings = atMostEvery(2000, () => void readStuckSettings());
  /** Something looks stuck (docs/limits.md): an event, a notice, and the CLI's own interrupt once where asked. */
  const onStuck = (f: StuckFinding) => {
    const e = table.byPane(f.paneId);
    const data = {
      agent: f.agent,
      terminalId: e?.pane.terminalId ?? null,
      task: e?.pane.task ?? null,
      pane: f.paneId,
      kind: f.kind,
      reason: f.reason,
      since: new Date(f.since).toISOString(),
    };
    const interrupt = stuckSettings.get(f.agent)?.onStuck === 'interrupt' && f.kind !== 'repeated-question' && e?.profile && !e.pane.dead;
    hub.publish('stuck', { ...data, interrupted: Boolean(interrupt) });
    log.warn({ agent: f.agent, kind: f.kind, interrupt: Boolean(interrupt) }, `stuck: ${f.reason}`);
    if (e) void notifier.notice({ agent: f.agent, terminalId: data.terminalId, task: data.task, windowId: e.pane.windowId, state: 'stuck', reason: f.reason });
    if (interrupt)
      void sendKeys(commands, f.paneId, e.profile!.delivery.interruptKeys).catch((err: Error) =>
        log.warn({ agent: f.agent, err: err.message }, 'could not interrupt the stuck agent'),
      );
  };
  const watchdog = new Watchdog({
    clock: paneClock,
    stuckAfterMs: (agent) => stuckSettings.get(agent)?.afterMs ?? DEFAULT_STUCK_AFTER_MS,
    lastHookAt: (paneId) => watcher.lastHookAt(paneId),
    found: onStuck,
  });

  /** Resolves when an event on the stream matches, `ms` ran out, or the supervisor stops. */
  const untilEvent = (match: (e: StreamEvent) => boolean, ms: number) =>
    new Promise<void>((resolve) => {
      const signal = stopping.signal;
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      const off = hub.subscribe((e) => {
        if (match(e)) done();
      });
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        off();
        resolve();
      }
    });

  const agents: Agents = {
    find: (x, task) => table.find(x, task),
    get: (x, task, what, op) => table.get(x, task, what, op),
    list: (task) => table.list(task),
    refresh: () => table.refresh(),
    status: (paneId) => watcher.status(paneId),
    lastScreen: (paneId) => watcher.lastScreen(paneId),
    target(e, what): TurnTarget {
      if (!e.profile) throw new JaggersError('E_PROFILE_INVALID', `${what}: agent ${e.pane.agent}'s profile cannot be loaded: ${e.problem}`);
      if (e.pane.dead || watcher.status(e.pane.paneId) === 'exited')
        throw new JaggersError(
          'E_PANE_GONE',
          `${what}: agent ${e.pane.agent}'s pane ${e.pane.paneId} is dead (exit status ${e.pane.deadStatus ?? 'unknown'}); run \`jaggers up\` to restart it`,
        );
      return {
        paneId: e.pane.paneId,
        agent: e.pane.agent!,
        terminalId: e.pane.terminalId,
        profile: e.profile,
        pid: watcher.pane(e.pane.paneId)?.pid ?? e.pane.panePid,
      };
    },
  };

  const isolation = new Isolation({
    projectRoot: ctx.projectRoot,
    project,
    log,
    data: () => store.data,
    liveTerminals: () => table.list().flatMap((e) => (e.pane.terminalId && !e.pane.dead ? [e.pane.terminalId] : [])),
    stateOf: (terminalId) => {
      const e = table.find(terminalId);
      return e && !e.pane.dead ? watcher.status(e.pane.paneId) : undefined;
    },
  });
  // Agents on other hosts (docs/hosts.md): each host's supervisor, reached over a kept SSH connection.
  const hosts = new Hosts({
    jaggersDir: ctx.jaggersDir,
    session: ctx.session,
    env: process.env,
    version: d.version,
    log,
    commandOf: async (name) => (await profile(name)).command,
    // Items for its agents wait while its connection is down, and go on once it is back.
    changed: (name) =>
      queueMicrotask(() => {
        runner.kickAll();
        outboxHome.follow(name);
      }),
    // A host's supervisor started again (or a restart that failed): an event on /v1/events.
    told: (e) => {
      hub.publish('host', { host: e.host, supervisor: e.what, was: e.was, detail: e.detail, attempt: e.attempt });
      // Items for its agents that paused for it ask again now, and its outbox is followed again.
      if (e.what === 'restarted') {
        remote.wake(e.host);
        outboxHome.follow(e.host);
      }
    },
  });
  const launcher = new Launcher({
    tmux: commands,
    store,
    table,
    watcher,
    log,
    where: {
      ...dirs,
      session: ctx.session,
      socket: 'name' in ctx.server.socket ? ctx.server.socket.name : ctx.server.socket.path,
      binDir,
      basePath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      env: process.env as Record<string, string>,
    },
    project,
    loadProfile: profile,
    place: (spec, p, task) => isolation.place(spec, p, task),
    jobFolder: (j, p) => isolation.jobFolder(j, p),
    hosts,
    sessionNice: new SessionNice(realSessionNicePorts((pid, why) => log.debug({ pid, why }, "an agent pane's session group kept its nice (autogroup)"))),
  });

  const homes = new Map<number, string>();
  const turnEnv: TurnEnv = {
    io,
    watch: watcher,
    registry: store,
    ...dirs,
    log,
    emit: (e: TurnEventData) => void hub.publish('turn', { ...e }),
    homeOf: async (pid) => {
      if (!pid) return os.homedir();
      // A process's HOME never changes: read once per pid (the agents' pids change only on a restart).
      let home = homes.get(pid);
      if (home === undefined) {
        home = await homeOfPid(pid, os.homedir());
        if (homes.size > 1000) homes.clear();
        homes.set(pid, home);
      }
      return home;
    },
    discoverPin: async (target, home, tag) => {
      if (!target.terminalId) return;
      // Loaded when first needed: it runs the CLI with execa, which the supervisor's start does without.
      const { discoverPin } = await import('../agents/discover-pin.js');
      const id = await discoverPin(store, target.terminalId, target.profile, target.pid, home, tag);
      if (id) hub.publish('pin', { agent: target.agent, terminalId: target.terminalId, sessionId: id, how: 'discovered' });
    },
  };

  const outcomes = new Outcomes();
  /** Each turn's tokens, from its CLI's own records, recorded with its end (docs/usage.md). */
  const usage = usageSource();
  // The journal, the runner and the workers call each other only from callbacks: declared in any order.
  const journal = new WorkJournal({
    store,
    hub,
    log,
    dirs,
    // What the item changed in its agent's worktree is committed before its end is published (and the next item goes in).
    settle: async (j: JobRecord) =>
      void (await isolation.itemEnded(j).catch((e: Error) => log.warn({ job: j.id, err: e.message }, "could not commit the item's changes in its worktree"))),
    ended: async (j: JobRecord) => {
      await budgets.refresh();
      // Awaited: a compaction it queues is in the queue before the agent's next item starts.
      if (j.terminalId && j.work !== 'compact')
        await context.turnEnded(j.terminalId).catch((e: Error) => log.warn({ job: j.id, err: e.message }, 'context check failed'));
      if (j.kind === 'worker' && !j.keep && j.window) await launcher.close(j.window);
      if (j.kind === 'worker') workers.pump();
      if (j.from) runner.kick(j.from);
      if (j.work === 'handoff' && j.state === 'failed') {
        const e = j.terminalId ? table.find(j.terminalId) : undefined;
        if (e)
          void notifier.notice({
            agent: j.agent ?? j.target,
            terminalId: j.terminalId,
            task: j.task,
            windowId: e.pane.windowId,
            state: 'turn-failed',
            reason: j.reason,
          });
      }
    },
  });

  // Items for agents on other hosts: forwarded to each host's supervisor, followed there, their end copied here.
  const remote = new RemoteWork({
    journal,
    store,
    hub,
    dirs,
    reach: (name) => hosts.reach(name),
    clock: realClock,
    log,
    teamAgent: async (name) => (await project().catch(() => null))?.agents.some((a) => a.name === name) ?? false,
  });
  const runner = new Runner({
    data: () => store.data,
    pane: (terminalId) => table.find(terminalId),
    status: (paneId) => watcher.status(paneId),
    limit: (paneId) => watcher.snapshot(paneId)?.context.limit,
    limited: (terminalId, agent, why) =>
      moveToFallback(
        {
          store,
          journal,
          agents,
          fallbackOf: async (name) => {
            const team = (await project())?.agents ?? [];
            const to = team.find((a) => a.name === name)?.fallback;
            if (!to || team.some((a) => a.name === to)) return to;
            // Not an agent of the team: a profile (docs/limits.md), if one loads by that name.
            return profile(to).then(
              () => ({ profile: to }),
              (e: Error) => void log.warn({ agent: name, fallback: to, err: e.message }, 'the fallback is neither an agent nor a profile'),
            );
          },
          workers: { pump: () => workers.pump() },
          kick: (t) => runner.kick(t),
          log,
        },
        terminalId,
        agent,
        why,
      ),
    run: (item, e, signal) => {
      if (item.kind === 'message' && item.m.host) return remote.deliver(item.m, signal);
      if (item.kind === 'message')
        return runMessage({ env: turnEnv, store, hub, agents, limit: (paneId) => watcher.snapshot(paneId)?.context.limit }, item.m, e, signal);
      const j = item.j;
      if (j.host) return remote.run(j, signal);
      if (j.work === 'send' || j.work === 'compact') return runSend({ env: turnEnv, journal, agents, outcomes }, j, e, signal);
      if (j.headless)
        return runHeadless(
          {
            env: turnEnv,
            journal,
            outcomes,
            profile,
            launch: (terminalId, task) => launcher.headlessLaunch(terminalId, task),
            pane: (entry, target) => launcher.headlessPane(entry, target),
            usage,
            limit: (paneId) => watcher.snapshot(paneId)?.context.limit,
          },
          j,
          e,
          signal,
        );
      return runPaneTurn(
        {
          env: turnEnv,
          journal,
          agents,
          outcomes,
          worktreeResult: (x) =>
            isolation.jobResult(x).catch((err: Error) => (log.warn({ job: x.id, err: err.message }, "could not record the job's worktree"), null)),
          usage,
          limit: (paneId) => watcher.snapshot(paneId)?.context.limit,
        },
        j,
        e,
        signal,
      );
    },
    lost: async (j, why) => {
      const when = j.state === 'starting' ? 'before it took the prompt' : 'during its turn';
      await journal.change(j.id, 'failed', `the agent's pane died ${when} (${why.replace(/: run .*$/, '')})`, { cause: 'agent-lost', code: 'E_PANE_GONE' });
    },
    broken: async (j, err) => void (await journal.change(j.id, 'failed', `internal error: ${err.message}`, { code: 'E_INTERNAL' })),
    remote: (host) => remote.blocked(host),
    hold: (item) => budgets.hold(item),
    held: (item) => budgets.held(item),
    log,
  });
  /** Budgets (docs/usage.md): the next item of a reached budget waits `over_budget`; a raise lets it go on. */
  const budgets = new Budgets({
    store,
    hub,
    log,
    settings: async () => {
      const p = await project();
      return { config: budgetConfig(p), prices: priceTable(p?.prices) };
    },
    notify: (item, o) => {
      const terminalId = item.kind === 'job' ? item.j.terminalId : item.m.to;
      const e = terminalId ? table.find(terminalId) : undefined;
      void notifier.notice({
        agent: item.kind === 'job' ? (item.j.agent ?? item.j.target) : item.m.toAgent,
        terminalId,
        task: item.kind === 'job' ? item.j.task : null,
        windowId: e?.pane.windowId ?? '',
        state: 'over_budget',
        reason: `${item.id} waits: ${o.text.replace(/^over_budget: /, '')}`,
      });
    },
    kickAll: () => runner.kickAll(),
  });
  /** Context use per agent after each turn; past `compactAt` an event, and with `autoCompact` the CLI's compaction queued (docs/usage.md). */
  const context = new ContextWatch({
    data: () => store.data,
    hub,
    log,
    settings: async () => {
      const p = await project();
      const spec = (agent: string) => p?.agents.find((a) => a.name === agent);
      return {
        windows: contextWindows(p?.contextWindows),
        compactAt: (agent) => spec(agent)?.compactAt ?? p?.compactAt,
        autoCompact: (agent) => spec(agent)?.autoCompact ?? p?.autoCompact ?? false,
      };
    },
    compactCommand: (terminalId) => table.find(terminalId)?.profile?.compactCommand,
    compact: (terminalId, _agent, text) => jobs.create({ target: terminalId, text, work: 'compact', name: 'compact' }),
  });
  // Items held by a failing disk go on once it takes writes again.
  d.disk.onChange((f) => f === null && runner.kickAll());

  const workers = new Workers({
    store,
    journal,
    log,
    maxWorkers: async (name) => maxWorkersOf(await project().catch(() => null), name),
    loadProfile: profile,
    open: (j, p) => launcher.openWorker(j, p),
    hasPane: (terminalId) => table.find(terminalId) !== undefined,
    kick: (terminalId) => runner.kick(terminalId),
  });

  const checkProfile = async (name: string) => void (await loadProfile(name, ctx.jaggersDir));
  /** On a host's supervisor: the team's agents elsewhere (jaggers.json's `home`), whose messages and work wait in the outbox (docs/hosts.md). */
  const homeAgents = async () => (await project().catch(() => null))?.home?.agents ?? [];
  /** The host a team agent runs on (jaggers.json's `host`), or null: this machine. */
  const hostOfAgent = async (agent: string) => (await project().catch(() => null))?.agents.find((a) => a.name === agent)?.host ?? null;
  const hostWorktrees = new HostWorktrees({ local: () => isolation.list(), hosts: () => hosts.sources(), hostOf: hostOfAgent });
  const jobs = new Jobs({
    store,
    journal,
    agents,
    hub,
    log,
    dirs,
    runner,
    workers,
    checkProfile,
    interrupt: (e) => sendKeys(commands, e.pane.paneId, e.profile!.delivery.interruptKeys),
    untilEvent,
    overBudget: (j) => (j.terminalId ? budgets.verdict({ kind: 'job', id: j.id, seq: j.seq, created: j.created, j }) : null),
    hostOf: hostOfAgent,
    remote,
    homeAgents,
  });
  const inbox = new Inbox({
    store,
    agents,
    hub,
    log,
    dirs,
    runner,
    hostOf: hostOfAgent,
    homeAgents,
  });
  const handoffs = new Handoffs({
    jobs,
    store,
    agents,
    hub,
    outcomes,
    runner,
    clock: realClock,
    dirs,
    log,
    stopping: stopping.signal,
    hostOf: hostOfAgent,
    homeAgents,
  });
  // On a host's supervisor: what its agents asked of agents of home (messages, jobs, handoffs), until taken home.
  const outbox = new Outbox({ inbox, journal, jobs, dirs });
  // Messages and work from the hosts' agents to agents here: taken from each host's outbox while its connection is up.
  const outboxHome = new OutboxHome({
    reach: (name) => hosts.reach(name),
    inbox,
    work: {
      create: async (req) => {
        const v = await jobs.create(req);
        if (v.work === 'handoff') handoffs.deadline(v.id);
        return v;
      },
      get: (id) => (Object.hasOwn(store.data.jobs, id) ? store.data.jobs[id] : undefined),
      reply: async (id) => (await jobs.result(id)).reply,
      cancel: (id, by) => jobs.cancel(id, by),
    },
    hub,
    log,
    clock: realClock,
  });
  const views = new AgentViews({
    table,
    watcher,
    data: () => store.data,
    io,
    stopping: stopping.signal,
    queue: (terminalId) =>
      queueOf(store.data, terminalId).map((i) => ({
        id: i.id,
        work: i.kind === 'job' ? i.j.work : 'message',
        state: i.kind === 'job' ? (i.j.state === 'queued' && budgets.verdict(i) ? 'over_budget' : i.j.state) : i.m.state,
        waiting: runner.waiting(terminalId, i.id),
      })),
    stuck: (paneId) => watchdog.finding(paneId),
    context: (terminalId) => context.of(terminalId),
  });
  const answers = new Answers({
    table,
    watcher,
    io,
    keys: { literal: (paneId, text) => sendLiteral(commands, paneId, text), send: (paneId, keys) => sendKeys(commands, paneId, keys) },
    log,
  });
  const tasks = new Tasks({
    store,
    hub,
    log,
    dirs,
    agents,
    jobs,
    launcher,
    waitFor: (terminalId, states, ms) => views.waitFor(terminalId, states, ms),
    untilEvent,
    project,
    checkProfile,
    profileNames: () => listProfileNames(ctx.jaggersDir),
    hostOf: hostOfAgent,
    stopping: stopping.signal,
  });
  const flows = new Flows({
    store,
    hub,
    log,
    dirs,
    project,
    profileNames: () => listProfileNames(ctx.jaggersDir),
    workflowNames: async () => (await listWorkflows(ctx.jaggersDir)).filter((w) => !w.error).map((w) => w.name),
    jobs,
    tasks,
    stopping: stopping.signal,
  });

  const publishStatus = statusLine(commands);
  /** A state change: on the event stream, to its agent's queue, on the status line, and a notice when the agent waits for a person. */
  const onStatus = (c: Parameters<Parameters<PaneWatcher['onChange']>[0]>[0]) => {
    const e = table.byPane(c.pane.paneId);
    const data: StateEventData = {
      agent: c.pane.agent,
      terminalId: c.pane.terminalId ?? null,
      task: e?.pane.task ?? null,
      pane: c.pane.paneId,
      state: c.status,
      rule: c.rule,
      turns: c.turns,
      since: new Date(c.since).toISOString(),
      ...(c.status === 'limited' && c.limit
        ? { resetAt: c.limit.resetAt === null ? null : new Date(c.limit.resetAt).toISOString(), retryAt: new Date(c.limit.until).toISOString() }
        : {}),
      ...(c.hookFiredAt !== undefined ? { hookLagMs: Math.round((c.since - c.hookFiredAt) * 10) / 10 } : {}),
    };
    hub.publish('state', { ...data });
    if (data.terminalId) runner.kick(data.terminalId);
    // The watchdog's settings are read again as turns start (at most every 2 s): jaggers.json may have changed.
    if (c.status === 'busy') rereadStuckSettings();
    watchdog.status(c.pane.paneId, data.agent, c.status);
    log.debug({ agent: data.agent, terminal: data.terminalId, task: data.task, state: data.state, rule: data.rule, hookLagMs: data.hookLagMs }, 'state');
    void publishStatus(c).catch(() => {});
    if (c.status === 'limited' && c.limit) {
      const l = c.limit;
      const reason = l.resetAt
        ? `hit a usage limit (${l.said ?? c.lines[0] ?? 'on screen'}); its queue waits for the reset at ${new Date(l.resetAt).toISOString()}`
        : `hit a usage or rate limit (${c.lines[0] ?? 'on screen'}); its queue is tried again at ${new Date(l.until).toISOString()}`;
      void notifier.notice({ agent: data.agent, terminalId: data.terminalId, task: data.task, windowId: c.pane.windowId, state: 'limited', reason });
    }
    if (c.status === 'waiting_input') {
      const q = readQuestion(watcher.lastScreen(c.pane.paneId) ?? '');
      const reason = q
        ? `${describeQuestion(q)}${q.choices.length ? `; \`jaggers answer ${data.agent} <number or label>\`` : ''}`
        : (c.lines[0] ?? 'a menu on screen');
      void notifier.notice({ agent: data.agent, terminalId: data.terminalId, task: data.task, windowId: c.pane.windowId, state: 'waiting_input', reason });
      watchdog.question(c.pane.paneId, data.agent, q ? describeQuestion(q) : (c.lines[0] ?? 'a menu on screen'));
    }
  };

  /** The CLI's state file named a new session: the pin follows it (a `/clear` forks the conversation). */
  const followSession = async (terminalId: string | null, agent: string, sessionId: string) => {
    if (!terminalId) return;
    try {
      const ev = await store.update((data) => {
        const t = data.terminals[terminalId];
        if (!t || t.sessionId === sessionId) return { events: [], result: null };
        const events: NewJournalEvent[] = t.sessionId
          ? [{ type: 'session-forked', terminalId, from: t.sessionId, to: sessionId, reason: 'the CLI reported a new session (its hook or state file)' }]
          : [{ type: 'session-pinned', terminalId, sessionId, how: 'discovered' }];
        return { events, result: events[0]! };
      });
      if (ev?.type === 'session-forked') hub.publish('fork', { agent, terminalId, from: ev.from, to: ev.to });
      if (ev?.type === 'session-pinned') hub.publish('pin', { agent, terminalId, sessionId, how: ev.how });
      if (ev)
        log.info({ agent, terminal: terminalId, session: sessionId }, ev.type === 'session-forked' ? 'session forked: the pin follows it' : 'session pinned');
    } catch (e) {
      log.warn({ agent, terminal: terminalId, err: (e as Error).message }, 'could not record the session the CLI reported');
    }
  };

  // The dashboard's live terminals: a connection of their own, opened while one is open (src/web/pane-taps.ts).
  const taps = new PaneTaps({ connect: () => openControl(ctx.server, ctx.session) });

  const s = {
    watcher,
    table,
    taps,
    /** Bytes into a pane as a person types them (the dashboard's terminal): not a work item. */
    typeKeys: (paneId: string, bytes: Uint8Array) => sendBytes(commands, paneId, bytes),
    dirs,
    views,
    answers,
    launcher,
    /** The hosts' supervisors (docs/hosts.md): their connections are closed when this supervisor stops (they go on). */
    hosts,
    /** Agents' and jobs' git worktrees (issue 28): list, diff, merge, discard, gc. */
    // (An agent on another host: its worktree is there, asked of that host's supervisor.)
    worktrees: {
      list: () => hostWorktrees.list(),
      diff: async (x: string, o: { patch?: boolean; uncommitted?: boolean }) =>
        (await hostWorktrees.onHost(x, 'GET', (n) => `/v1/worktrees/${n}/diff?patch=${o.patch ? 1 : 0}&uncommitted=${o.uncommitted ? 1 : 0}`)) ??
        isolation.diff(x, o),
      merge: async (x: string, o: { mode?: 'merge' | 'squash' | 'rebase'; into?: string; message?: string }) =>
        (await hostWorktrees.onHost(x, 'POST', (n) => `/v1/worktrees/${n}/merge`, o)) ?? isolation.merge(x, o),
      discard: async (x: string, force: boolean) =>
        (await hostWorktrees.onHost(x, 'POST', (n) => `/v1/worktrees/${n}/discard`, { force })) ?? isolation.discard(x, force),
      gc: async (force: boolean) => hostWorktrees.gc(async () => isolation.gc(force, await project().catch(() => null)), force),
    },
    runner,
    jobs,
    inbox,
    outbox,
    handoffs,
    /** Tokens and cost by agent, job, task, session, day or model (docs/usage.md); jaggers.json's prices over the shipped ones. */
    usage: async (by: UsageBy) => usageReport(store.data, priceTable((await project())?.prices), by),
    budgets,
    tasks,
    flows,
    store,
    stopping: stopping.signal,
    tcp: null as string | null,
    /** The web dashboard's address (src/web/listener.ts sets it). */
    web: null as string | null,
    warnings,
    disk: d.disk,

    health(): HealthView {
      return {
        pid: process.pid,
        version: d.version,
        startedAt: new Date(started).toISOString(),
        uptimeMs: Date.now() - started,
        session: ctx.session,
        tmux: describeSocket(ctx.server),
        project: ctx.projectRoot,
        socket: d.socket,
        tcp: s.tcp,
        web: s.web,
        terminals: table.list().length,
        log: d.logFile,
        warnings: [...warnings],
        disk: d.disk.failing,
        hosts: hosts.views(),
      };
    },

    /** The windows tmux has changed (made, closed, tagged by another client): read them again; their queues may go on now. */
    async refreshTable(): Promise<void> {
      await table.refresh();
      runner.kickAll();
    },

    /** Watch every agent pane tmux knows, record terminals the registry lost, and pick up the work left in flight. */
    async start(): Promise<void> {
      await watcher.start();
      watcher.onChange(onStatus);
      watcher.onSession((pane, sessionId) => void followSession(pane.terminalId ?? null, pane.agent, sessionId));
      watcher.onHookWarning((pane, warning) => log.warn({ agent: pane.agent, terminal: pane.terminalId }, warning));
      watcher.onHooksBack((pane) =>
        log.info({ agent: pane.agent, terminal: pane.terminalId }, `${pane.agent}'s hooks called again: they decide its state again (they were late, not off)`),
      );
      await readStuckSettings();
      watcher.onScreen((paneId, screen) => {
        const rules = watcher.pane(paneId)?.profile.detect.rules ?? [];
        watchdog.screen(
          paneId,
          screen,
          rules.filter((r) => r.status === 'busy').map((r) => regexOf(r.pattern)),
        );
      });
      watcher.onTool((pane, tool, input) => watchdog.tool(pane.paneId, pane.agent, tool, input));
      await table.refresh();
      await budgets.refresh();
      await context.refresh();
      // After the panes are watched: calls left from before this start give their sessions.
      try {
        await ensurePrivateFolder(hookSpoolDir(ctx.jaggersDir));
        spool.start();
        // The bash 5 the bridge may run as (fewer processes per call); meanwhile it runs as plain sh.
        void writeBridgeShell(hookSpoolDir(ctx.jaggersDir)).catch((e: Error) => log.warn({ err: e.message }, 'the hook bridge runs as plain sh'));
      } catch (e) {
        log.warn({ err: (e as Error).message }, 'the hook spool cannot be watched: states come from state files and screens');
      }
      await launcher.recordTags();
      // The hosts the last supervisor started agents on: their connections made again (in the background).
      void project()
        .catch(() => null)
        .then((p) => hosts.resumeAll(p));
      // Items left by an earlier supervisor: lost workers reopened, in-flight items followed, queues run.
      await workers.pumpNow();
      handoffs.start();
      runner.kickAll();
      // Workflow tasks: detached ones go on from their stored snapshots.
      await tasks.startAll();
      // Scheduled flows: a run the downtime missed goes once now.
      await flows.start();
      void cleanWorkDirs(ctx.jaggersDir, store.data.jobs);
    },

    stop(): void {
      // Items in flight are left as the journal says: the next supervisor follows them.
      stopping.abort();
      handoffs.stop();
      runner.stop();
      outboxHome.stop();
      tasks.stop();
      flows.stop();
      spool.stop();
      watchdog.stop();
      watcher.stop();
      void taps.close();
    },
  };
  return s;
}

/** Headless runs' output folders (`.jaggers/work/<id>/`) of items that ended: no longer needed. */
async function cleanWorkDirs(jaggersDir: string, jobs: Record<string, JobRecord>): Promise<void> {
  const { rm } = await import('node:fs/promises');
  let names: string[] = [];
  try {
    names = readdirSync(path.join(jaggersDir, 'work'));
  } catch {
    return;
  }
  for (const id of names) {
    const j = Object.hasOwn(jobs, id) ? jobs[id] : undefined;
    if (!j || isFinal(j.state)) await rm(path.join(jaggersDir, 'work', id), { recursive: true, force: true }).catch(() => {});
  }
}
