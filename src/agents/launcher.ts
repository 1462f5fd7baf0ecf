// The one launcher: every way an agent's CLI is started, restarted or stopped goes through here. It
// opens the team's windows (`up`), restarts a dead pane in its pinned conversation, opens a task's
// window again and a worker window for a profile job, swaps the TUI out and back for a headless turn,
// and closes windows. Each start is planned by `planLaunch` (one place that knows a launch: command,
// environment, folder, size, pinned session, MCP registration) and recorded in the registry here.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { JaggersError } from '../errors.js';
import { DEFAULT_WINDOW_SIZE, newTerminalId, own } from '../ids.js';
import type { Log } from '../logger.js';
import { writeLaunchFiles } from './launch-files.js';
import { parseSize, type AgentSpec, type ProjectFile } from '../project/project-file.js';
import type { Profile } from '../profiles/schema.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { isFinal, newSessionId, tmuxTagEvents, type JobRecord, type RegistryData, type RegistryStore } from '../sessions/registry.js';
import { killWindow, listPanes, newWindow, paneField, respawnPane, setWindowOptions } from '../tmux/commands.js';
import type { ControlClient } from '../tmux/control-client.js';
import type { AgentLaunch, HeadlessPane } from '../turns/headless.js';
import type { TurnTarget } from '../turns/turn.js';
import { applyPlan, configureServer, fixWindowSize, windowTags, type AppliedWindow } from './apply.js';
import { findCommand } from './find-command.js';
import { hooksOff } from './hooks-install.js';
import { waitGroupGone } from './proc.js';
import { nicedCommand, planLaunch, planWindows, type Launch, type LaunchInput, type WindowAction } from './plan.js';
import type { TerminalEntry } from './table.js';
import { assertLocalTeam, namedTeam, teamSpecs } from './team.js';
import type { RemoteOpened, RemoteWindow } from '../hosts/remote-host.js';

export interface LauncherPorts {
  /** The supervisor's command connection. */
  tmux: ControlClient;
  store: RegistryStore & { readonly data: RegistryData };
  table: {
    refresh(): Promise<void>;
    find(nameOrId: string, task?: string | null): TerminalEntry | undefined;
    byPane(paneId: string): TerminalEntry | undefined;
  };
  /** The watcher: a headless turn holds the pane (its placeholder says nothing), then lets it go. */
  watcher: {
    hold(paneId: string, reason: string): void;
    release(paneId: string, pid: number | null): void;
    pane(paneId: string): { pid: number | null } | undefined;
  };
  log: Log;
  where: { projectRoot: string; jaggersDir: string; session: string; socket: string; binDir: string; basePath: string; env: Record<string, string> };
  /** jaggers.json as it is now (read again each time: it may change while the supervisor runs). */
  project(): Promise<ProjectFile | null>;
  loadProfile(name: string): Promise<Profile>;
  /** The spec as it starts: an isolated agent's folder is its git worktree, made when missing (isolation.ts). */
  place(spec: AgentSpec, project: ProjectFile | null, task: string | null): Promise<AgentSpec>;
  /** A `--worktree` job's worktree (made when missing): the folder its worker starts in. */
  jobFolder(j: JobRecord, project: ProjectFile | null): Promise<string>;
  /** Agents on other hosts (docs/hosts.md): started by each host's supervisor; none: refused. */
  hosts?: { up(specs: readonly AgentSpec[], project: ProjectFile): Promise<RemoteOpened> };
  /** Gives an agent pane's session group the agent's nice (session-nice.ts); absent: only `nice` in its command. */
  sessionNice?: { set(pid: number, nice: number): void };
}

export interface UpRequest {
  agents?: string;
  size?: string;
  task?: string | null;
  /** The built-in demo team. */
  demo?: boolean;
  /** Reopen a task's agents: those its terminals name. */
  resume?: boolean;
  /** Agents by name: each as jaggers.json or an earlier `up` knows it, else the profile of that name. */
  names?: string[];
  /** With `task`: the task's agents all work in one git worktree of its own, made from `base`. */
  worktree?: boolean;
  base?: string;
}

export interface Opened {
  windows: AppliedWindow[];
  /** The windows hosts' supervisors opened for agents on other hosts. */
  remote: RemoteWindow[];
  /** Agents not started: their command is not found on the PATH their pane would get. */
  missing: { agent: string; command: string; path: string; install: string | null }[];
}

export class Launcher {
  /** `up`s one at a time: two at once give each agent one window. */
  private chain: Promise<unknown> = Promise.resolve();
  /** The `nice` program, looked for once on the supervisor's PATH (null: not found). */
  private niceBin: string | null | undefined;

  constructor(private readonly p: LauncherPorts) {}

  /** The size agent windows get: the profile's, else the one asked for, else jaggers.json's, else the default. */
  async sizeFor(profile: Profile | null, asked?: string): Promise<{ width: number; height: number }> {
    if (profile?.size) return profile.size;
    if (asked) return parseSize(asked, '--size');
    const project = await this.p.project().catch(() => null);
    return project?.size ? parseSize(project.size, `${this.p.where.projectRoot}/jaggers.json size`) : DEFAULT_WINDOW_SIZE;
  }

  private input(
    size: { width: number; height: number },
    task: string | null,
    newSessionId: () => string,
    settings: { hooksOff: string | null; nice: number | undefined },
  ): LaunchInput {
    const w = this.p.where;
    this.niceBin ??= findCommand('nice', w.basePath, w.projectRoot);
    return {
      projectRoot: w.projectRoot,
      session: w.session,
      socket: w.socket,
      binDir: w.binDir,
      basePath: w.basePath,
      baseEnv: w.env,
      size,
      task,
      newSessionId,
      hooksOff: settings.hooksOff,
      ...(settings.nice !== undefined ? { nice: settings.nice } : {}),
      niceBin: this.niceBin,
    };
  }

  /**
   * What holds for every launch now: why the CLIs' hooks are off (JAGGERS_HOOKS=0, jaggers.json
   * `"hooks": false`; null: on), and jaggers.json's `nice` for the agents.
   */
  private async settings(): Promise<{ hooksOff: string | null; nice: number | undefined }> {
    const project = await this.p.project().catch(() => null);
    return { hooksOff: hooksOff(this.p.where.env, project, null), nice: project?.nice };
  }

  /** The pane's session group gets the launch's nice (Linux with autogroup; see session-nice.ts). */
  private async niceSession(paneId: string, launch: Launch, pid?: number | string | null): Promise<void> {
    if (!this.p.sessionNice || launch.nice <= 0) return;
    // A new window's pid came with it; a respawned pane's is asked for.
    const p = Number(pid ?? (await paneField(this.p.tmux, paneId, '#{pane_pid}').catch(() => null)));
    if (p > 0) this.p.sessionNice.set(p, launch.nice);
  }

  /** The agent's entry in jaggers.json, else what the registry knows of it (an `up` or `demo` without one). */
  private async specOf(agent: string, profile: string, terminalId: string | null, task: string | null): Promise<AgentSpec> {
    const project = await this.p.project().catch(() => null);
    const spec = project?.agents.find((a) => a.name === agent);
    if (spec) return this.p.place(spec, project, task);
    const t = terminalId ? this.p.store.data.terminals[terminalId] : undefined;
    const root = this.p.where.projectRoot;
    const cwd = t?.cwd && path.resolve(t.cwd) !== root ? path.relative(root, t.cwd) : undefined;
    return { name: agent, profile, args: [], env: {}, ...(cwd ? { cwd } : {}) };
  }

  /** How the terminal's agent starts: resuming its pinned conversation when it has one (`conversation`), else starting under that id. */
  async launchOf(terminalId: string, profile: Profile, o: { agent: string; task: string | null; conversation: boolean }): Promise<Launch> {
    const pinned = this.p.store.data.terminals[terminalId]?.sessionId ?? null;
    const input = this.input(await this.sizeFor(profile), o.task, () => pinned ?? randomUUID(), await this.settings());
    return planLaunch(input, await this.specOf(o.agent, profile.name, terminalId, o.task), profile, terminalId, o.conversation ? pinned : null);
  }

  /** `up`: open the team's windows (keep live ones, restart dead ones in their pinned conversations, create missing ones) and record them. */
  up(req: UpRequest): Promise<Opened> {
    const run = this.chain.then(() => this.openTeam(req));
    this.chain = run.catch(() => {});
    return run;
  }

  private async openTeam(req: UpRequest): Promise<Opened> {
    const { tmux, store, where } = this.p;
    const task = req.task ?? null;
    const project = await this.p.project();
    const given = req.resume
      ? this.taskTeam(task, project)
      : req.names
        ? namedTeam(req.names, project, store.data, where.projectRoot)
        : teamSpecs(req, project, store.data, where.projectRoot);
    const remote = given.filter((s) => s.host !== undefined);
    const hosts = this.p.hosts;
    if (!hosts || !project) assertLocalTeam(given, task ? 'for a task' : 'this way');
    // A task's agent on another host works in its window there (its team's): a worktree here is not there.
    if (req.worktree && remote.length) assertLocalTeam(remote, 'in a task of its own worktree (--worktree)');
    const local = given.filter((s) => s.host === undefined);
    // Every profile first, so a bad one stops `up` before anything starts.
    const profiles = await Promise.all(local.map((spec) => this.p.loadProfile(spec.profile)));
    if (req.worktree || req.base) {
      if (!task) throw new JaggersError('E_USAGE', 'up: --worktree opens a task in a git worktree of its own: give --task too');
      if (!req.worktree) throw new JaggersError('E_USAGE', "up: --base is the base of a task's worktree: add --worktree");
      // Recorded before its windows open: each of them starts in the task's worktree.
      await store.update((d) => ({
        events: own(d.tasks, task) ? [] : [{ type: 'task-created', taskId: task, workflow: 'up', worktree: { base: req.base ?? null } }],
        result: null,
      }));
    }
    // Then the isolated agents' worktrees, one at a time (git locks its worktree list).
    const team: { spec: AgentSpec; profile: Profile }[] = [];
    for (const [i, spec] of local.entries()) team.push({ spec: await this.p.place(spec, project, task), profile: profiles[i]! });
    const size = await this.sizeFor(null, req.size);
    const missing: Opened['missing'] = [];
    const runnable = team.filter((m) => {
      const p = `${where.binDir}${path.delimiter}${m.spec.env.PATH ?? m.profile.env.PATH ?? where.basePath}`;
      if (findCommand(m.profile.command, p, path.resolve(where.projectRoot, m.spec.cwd ?? '.'))) return true;
      missing.push({ agent: m.spec.name, command: m.profile.command, path: p, install: m.profile.install ?? null });
      return false;
    });
    await configureServer(tmux, size);
    const panes = await listPanes(tmux, where.session);
    await this.recordTags(panes);
    const home = panes.find((p) => p.windowIndex === 0 && p.agent === null);
    if (home) await fixWindowSize(tmux, home.windowId, size);
    const terminals = Object.values(store.data.terminals)
      .filter((t) => t.task === task)
      .sort((a, b) => a.created.localeCompare(b.created));
    const plan = planWindows({
      ...this.input(size, task, newSessionId, await this.settings()),
      team: runnable,
      panes,
      terminals: terminals.map((t) => ({ terminalId: t.terminalId, agent: t.agent, sessionId: t.sessionId })),
      newTerminalId,
    });
    const windows = await applyPlan(tmux, where.session, plan, task);
    for (const w of windows) if (w.launch) await this.niceSession(w.paneId, w.launch, w.pid);
    await store.update((d) => {
      const events = journalFor(windows, plan, task);
      if (task) {
        if (!own(d.tasks, task)) events.unshift({ type: 'task-created', taskId: task, workflow: 'up' });
        for (const w of windows)
          if (own(own(d.tasks, task)?.agents, w.agent)?.terminalId !== w.terminalId)
            events.push({ type: 'task-agent', taskId: task, agent: w.agent, terminalId: w.terminalId });
      }
      return { events, result: null };
    });
    await this.p.table.refresh();
    // Then the agents on other hosts, each host's supervisor opening its own (after the local ones, so a
    // host that cannot be reached leaves the local team running and says why).
    const far = remote.length && hosts && project ? await hosts.up(remote, project) : { windows: [], missing: [] };
    missing.push(...far.missing);
    this.p.log.info({ task, windows: [...windows, ...far.windows].map((w) => `${w.agent}:${w.action}`), missing: missing.map((m) => m.agent) }, 'up');
    return { windows, remote: far.windows, missing };
  }

  /** A task's agents, those its terminals name (`resume`), each with its entry in jaggers.json where it has one. */
  private taskTeam(task: string | null, project: ProjectFile | null): AgentSpec[] {
    const data = this.p.store.data;
    const terminals = Object.values(data.terminals).filter((t) => task !== null && t.task === task);
    if (task === null || (!own(data.tasks, task) && terminals.length === 0)) {
      const known = Object.keys(data.tasks).join(', ') || 'none';
      throw new JaggersError('E_USAGE', `resume: no task ${JSON.stringify(task)} in ${this.p.where.jaggersDir}/sessions.json: tasks are ${known}`);
    }
    const agents = new Map<string, string>();
    for (const t of terminals) agents.set(t.agent, t.profile);
    const fromProject = new Map((project?.agents ?? []).map((a) => [a.name, a]));
    // Its roles on other hosts have no terminal here: their hosts' supervisors are started again with them.
    for (const a of Object.values(own(data.tasks, task)?.roles ?? {})) {
      const spec = fromProject.get(a);
      if (spec?.host !== undefined && !agents.has(a)) agents.set(a, spec.profile);
    }
    return [...agents].map(([name, profile]) => ({ args: [], env: {}, ...fromProject.get(name), name, profile }));
  }

  /** Terminals that only tmux still knows (a registry rebuilt after a crash) are recorded again. */
  async recordTags(panes?: Awaited<ReturnType<typeof listPanes>>): Promise<void> {
    const list = panes ?? (await listPanes(this.p.tmux, this.p.where.session));
    const tagged = list
      .filter((p) => p.terminalId && p.agent && p.profile)
      .map((p) => ({ terminalId: p.terminalId!, agent: p.agent!, profile: p.profile!, window: p.windowId, cwd: this.p.where.projectRoot, task: p.task }));
    await this.p.store.update((data) => ({
      events: tmuxTagEvents(data, tagged, new Date().toISOString()).filter((e) => e.type === 'terminal-created'),
      result: null,
    }));
  }

  /** A dead pane started again in place, resuming its pinned conversation (as `up` restarts it). */
  async restart(e: TerminalEntry): Promise<void> {
    if (!e.profile) throw new JaggersError('E_PROFILE_INVALID', `${e.pane.agent}'s profile cannot be loaded: ${e.problem}`);
    const terminalId = e.pane.terminalId!;
    const pinned = this.p.store.data.terminals[terminalId]?.sessionId ?? null;
    const launch = await this.launchOf(terminalId, e.profile, { agent: e.pane.agent!, task: e.pane.task, conversation: pinned !== null });
    await writeLaunchFiles(launch);
    await respawnPane(this.p.tmux, e.pane.paneId, launch);
    await this.niceSession(e.pane.paneId, launch);
    await this.p.table.refresh();
    this.p.log.info({ agent: e.pane.agent, terminal: terminalId, session: pinned }, 'agent restarted in its pinned conversation');
  }

  /** A task's window of an agent, gone with its tmux server (a reboot): opened again as `up --task` would, resuming its conversation. */
  async openTaskWindow(terminalId: string, task: string): Promise<void> {
    const t = this.p.store.data.terminals[terminalId];
    if (!t) throw new JaggersError('E_AGENT_UNKNOWN', `task ${task}: no terminal ${terminalId}`);
    const profile = await this.p.loadProfile(t.profile);
    const launch = await this.launchOf(terminalId, profile, { agent: t.agent, task, conversation: t.sessionId !== null });
    if (!findCommand(profile.command, launch.env.PATH ?? '', launch.cwd))
      throw new JaggersError('E_COMMAND_NOT_FOUND', `${t.agent}'s command ${JSON.stringify(profile.command)} is not installed (not found on PATH)`);
    const w = await this.openWindow(`${t.agent}+${task}`, launch, windowTags(t.agent, t.profile, terminalId, task));
    const events: NewJournalEvent[] = [{ type: 'terminal-window', terminalId, window: w.windowId }];
    if (launch.sessionId && launch.pin && launch.sessionId !== t.sessionId)
      events.push({ type: 'session-pinned', terminalId, sessionId: launch.sessionId, how: launch.pin });
    await this.p.store.update(() => ({ events, result: null }));
    await this.p.table.refresh();
    this.p.log.info(
      { task, agent: t.agent, terminal: terminalId, session: launch.sessionId },
      "the task's window of the agent was gone: opened again in its pinned conversation",
    );
  }

  /**
   * A worker window for a profile job: a terminal of its own, recorded with the job's `starting` in one
   * journal entry (a job cancelled meanwhile gets no window: it is closed again). False when the job
   * ended meanwhile; throws when the CLI is missing or tmux refuses.
   */
  async openWorker(j: JobRecord, profile: Profile): Promise<boolean> {
    const terminalId = j.terminalId ?? newTerminalId();
    const agent = `${j.target}-${j.id}`;
    const pinned = this.p.store.data.terminals[terminalId]?.sessionId ?? null;
    const folder = j.worktree ? path.relative(this.p.where.projectRoot, await this.p.jobFolder(j, await this.p.project().catch(() => null))) : null;
    const launch = planLaunch(
      this.input(await this.sizeFor(profile), j.id, () => randomUUID(), await this.settings()),
      { name: agent, profile: j.target, args: [], env: {}, ...(folder ? { cwd: folder } : {}) },
      profile,
      terminalId,
      pinned,
    );
    if (!findCommand(profile.command, launch.env.PATH ?? '', launch.cwd))
      throw new JaggersError('E_COMMAND_NOT_FOUND', `profile ${j.target}'s command ${JSON.stringify(profile.command)} is not installed (not found on PATH)`);
    const w = await this.openWindow(agent, launch, windowTags(agent, j.target, terminalId, j.id));
    const ok = await this.p.store.update((d) => {
      const cur = d.jobs[j.id];
      if (!cur || isFinal(cur.state)) return { events: [], result: false };
      const events: NewJournalEvent[] = [];
      if (!d.terminals[terminalId]) events.push({ type: 'terminal-created', terminalId, agent, profile: j.target, cwd: launch.cwd, task: j.id });
      events.push({ type: 'terminal-window', terminalId, window: w.windowId });
      if (launch.sessionId && launch.pin) events.push({ type: 'session-pinned', terminalId, sessionId: launch.sessionId, how: launch.pin });
      events.push({
        type: 'job-state',
        jobId: j.id,
        state: 'starting',
        reason: `worker window ${agent} opened; the prompt goes in when it is ready`,
        terminalId,
        agent,
        window: w.windowId,
      });
      return { events, result: true };
    });
    if (!ok) {
      await this.close(w.windowId);
      return false;
    }
    await this.p.table.refresh();
    return true;
  }

  private async openWindow(name: string, launch: Launch, tags: Record<string, string>): Promise<{ windowId: string; paneId: string }> {
    await writeLaunchFiles(launch);
    const w = await newWindow(this.p.tmux, { session: this.p.where.session, name, cwd: launch.cwd, env: launch.env, command: launch.command });
    await this.niceSession(w.paneId, launch, w.pid);
    await setWindowOptions(this.p.tmux, w.windowId, tags);
    await fixWindowSize(this.p.tmux, w.windowId, launch);
    return w;
  }

  async close(windowId: string): Promise<void> {
    await killWindow(this.p.tmux, windowId).catch(() => {});
  }

  /**
   * A task's windows, closed when the task ends, as a worker's window is when its job ends: their
   * conversations stay pinned, and `jaggers resume <task>` opens them again. Returns the agents closed.
   */
  async closeTask(task: string): Promise<string[]> {
    await this.p.table.refresh();
    const panes = (await listPanes(this.p.tmux, this.p.where.session)).filter((p) => p.task === task && p.agent !== null);
    for (const p of panes) await this.close(p.windowId);
    await this.p.table.refresh();
    if (panes.length) this.p.log.info({ task, agents: panes.map((p) => p.agent) }, 'the task ended: its windows closed (`jaggers resume` opens them again)');
    return panes.map((p) => p.agent!);
  }

  /** The CLI's environment for a headless run: the supervisor's own (outside tmux) plus what the agent's launch sets. */
  async headlessLaunch(terminalId: string, task: string): Promise<AgentLaunch> {
    const t = this.p.store.data.terminals[terminalId];
    if (!t) throw new JaggersError('E_AGENT_UNKNOWN', `no terminal ${terminalId} in the registry`);
    const profile = await this.p.loadProfile(t.profile);
    const launch = await this.launchOf(terminalId, profile, { agent: t.agent, task: t.task, conversation: false });
    const env: Record<string, string> = { ...this.p.where.env, ...launch.env, JAGGERS_TASK_ID: task };
    delete env.TMUX;
    delete env.TMUX_PANE;
    await writeLaunchFiles(launch);
    const spec = await this.specOf(t.agent, t.profile, terminalId, t.task);
    const sessionNice = this.p.sessionNice;
    return {
      env,
      args: [...spec.args, ...(launch.mcp?.args ?? []), ...(launch.folders?.args ?? [])],
      cwd: launch.cwd,
      // At the agent's nice, as in its pane: the run is a session of its own too (started detached).
      before: nicedCommand([], launch.nice, this.niceBin ?? null),
      ...(sessionNice && launch.nice > 0 ? { started: (pid: number) => sessionNice.set(pid, launch.nice) } : {}),
    };
  }

  /** Stop the agent's TUI for a headless turn (a placeholder holds the pane) and start it again afterwards. */
  headlessPane(e: TerminalEntry, t: TurnTarget): HeadlessPane {
    const { tmux, watcher, where } = this.p;
    return {
      stop: async () => {
        const pid = watcher.pane(t.paneId)?.pid ?? t.pid;
        watcher.hold(t.paneId, 'headless-turn');
        const note = `jaggers: ${t.agent} is running a headless turn in its pinned conversation; it comes back here when that ends`;
        await respawnPane(tmux, t.paneId, { cwd: where.projectRoot, env: {}, command: ['sh', '-c', `printf '%s\\n' "$0"; exec sleep 2147483647`, note] });
        if (pid) await waitGroupGone(pid);
      },
      hold: () => watcher.hold(t.paneId, 'headless-turn'),
      resume: async (sessionId, conversation) => {
        const terminalId = e.pane.terminalId!;
        const pinned = sessionId ?? this.p.store.data.terminals[terminalId]?.sessionId ?? null;
        const input = this.input(await this.sizeFor(t.profile), e.pane.task, () => pinned ?? randomUUID(), await this.settings());
        const launch = planLaunch(
          input,
          await this.specOf(t.agent, t.profile.name, terminalId, e.pane.task),
          t.profile,
          terminalId,
          conversation ? pinned : null,
        );
        await writeLaunchFiles(launch);
        await respawnPane(tmux, t.paneId, { cwd: launch.cwd, env: launch.env, command: launch.command });
        const pid = await paneField(tmux, t.paneId, '#{pane_pid}');
        await this.niceSession(t.paneId, launch, pid);
        watcher.release(t.paneId, pid ? Number(pid) : null);
        this.p.log.info(
          { agent: t.agent, terminal: terminalId, session: pinned, resumed: conversation },
          'agent started again in its pane after a headless turn',
        );
      },
    };
  }
}

function journalFor(windows: AppliedWindow[], plan: WindowAction[], task: string | null): NewJournalEvent[] {
  const events: NewJournalEvent[] = [];
  for (const [i, w] of windows.entries()) {
    const a = plan[i]!;
    if (a.kind === 'create' && a.newTerminal)
      events.push({ type: 'terminal-created', terminalId: w.terminalId, agent: w.agent, profile: a.profile, cwd: a.launch.cwd, task });
    if (a.kind !== 'keep') events.push({ type: 'terminal-window', terminalId: w.terminalId, window: w.windowId });
    if (w.launch?.sessionId && w.launch.pin)
      events.push({ type: 'session-pinned', terminalId: w.terminalId, sessionId: w.launch.sessionId, how: w.launch.pin });
  }
  return events;
}
