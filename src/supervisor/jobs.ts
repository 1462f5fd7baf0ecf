// Background jobs (`jaggers assign`): recorded before `assign` returns, then seen through here. A job
// for a team agent waits its turn for that agent (the dispatcher); a job for a profile gets a worker
// window of its own, at most `maxWorkers` per profile at once. Every state change is journaled with
// its reason, and the result goes to the inbox of whoever assigned the job, by terminal id.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { JobResultView, JobView } from '../api/types.js';
import { makeNonce } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { describeQuestion, readQuestion } from '../detect/question.js';
import { parseArtifact, type HandoverMeta } from '../handover/artifact.js';
import { loadProfile } from '../profiles/load.js';
import { maxWorkersOf } from '../project/project-file.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { isFinal, KEEP_FINISHED, newTerminalId, type JobRecord, type JobState, type RegistryData } from '../sessions/registry.js';
import { windowTags } from '../terminals/apply.js';
import { findCommand } from '../terminals/find-command.js';
import { planLaunch } from '../terminals/plan.js';
import { fixWindowSize, killWindow, newWindow, setWindowOptions, sendKeys } from '../tmux/commands.js';
import type { PromptArtifact } from '../turns/artifacts.js';
import { awaitReply, deliverPointer, pointerFor, prepareTurn, promptWentIn, type PreparedTurn, type TurnTarget } from '../turns/turn.js';
import type { Supervisor } from './core.js';
import { knownAgents, resolveParty, resolveSender } from './inbox.js';
import type { TerminalEntry } from '../agents/table.js';
import { JOB_ID, jobPromptFile, homeMessage, newJobId, renderJobResult, writeDurable } from '../work/files.js';
import { writeLaunchFiles } from '../mcp/register.js';

export interface JobRequest {
  id?: string;
  target: string;
  text: string;
  name?: string;
  /** Seconds the job's turn may run. */
  timeout?: number;
  from?: string;
  fromTerminal?: string;
  keep?: boolean;
  task?: string;
  /** A workflow's turn: the workflow's name (its handover files are the task's). */
  workflow?: string;
}

/** A job's turn may run this long unless `--timeout` says otherwise. */
export const DEFAULT_JOB_TIMEOUT_S = 3600;

const rel = (root: string, file: string) => path.relative(root, file);

export class Jobs {
  /** Jobs being run now, with what stops them. */
  readonly active = new Map<string, AbortController>();
  private readonly opening = new Set<string>();

  constructor(
    private readonly s: Supervisor,
    private readonly kick: (terminalId: string) => void,
    private readonly waiting: (terminalId: string) => string | null,
  ) {}

  private get root(): string {
    return this.s.d.ctx.projectRoot;
  }

  view(j: JobRecord): JobView {
    let waiting: string | null = null;
    if (j.state === 'queued')
      waiting = j.terminalId ? (this.waiting(j.terminalId) ?? 'next for its agent') : `waiting for a ${j.target} worker slot (maxWorkers)`;
    return { ...j, attach: j.state === 'waiting_input' && j.agent ? `jaggers attach ${j.agent}` : null, waiting };
  }

  async create(req: JobRequest): Promise<JobView> {
    const s = this.s;
    if (req.id !== undefined && !JOB_ID.test(req.id)) throw new JaggersError('E_USAGE', `job id must look like j-0123abcd, got ${JSON.stringify(req.id)}`);
    if (req.text.trim() === '') throw new JaggersError('E_USAGE', 'assign: the prompt is empty');
    const data = await s.cache.get();
    const known = req.id ? data.jobs[req.id] : undefined;
    if (known) return this.view(known);
    const task = req.task ?? null;
    const agent = resolveParty(s, data, req.target, task);
    let kind: JobRecord['kind'] = 'agent';
    if (!agent) {
      await loadProfile(req.target, s.d.ctx.jaggersDir).catch((e: JaggersError) => {
        if (e.code !== 'E_PROFILE_UNKNOWN') throw e;
        throw new JaggersError(
          'E_AGENT_UNKNOWN',
          `assign: ${JSON.stringify(req.target)} is neither an agent (agents are ${knownAgents(s, data)}) nor a profile (${e.message.replace(/^.*: known/, 'known')})`,
        );
      });
      kind = 'worker';
    }
    const from = resolveSender(s, data, req, task, 'assign');
    const id = req.id ?? newJobId();
    const file = jobPromptFile(s.d.ctx.jaggersDir, id);
    await writeDurable(file, req.text);
    const target = agent?.agent ?? req.target;
    const created = await s.registry.update((d) => {
      if (d.jobs[id]) return { events: [], result: false };
      const e: NewJournalEvent = {
        type: 'job-created',
        jobId: id,
        name: req.name ?? null,
        target,
        kind,
        terminalId: agent?.terminalId ?? null,
        from: from?.terminalId ?? null,
        fromAgent: from?.agent ?? null,
        prompt: rel(this.root, file),
        bytes: Buffer.byteLength(req.text),
        timeoutMs: req.timeout ? Math.round(req.timeout * 1000) : null,
        keep: req.keep ?? false,
        ...(req.workflow ? { task, workflow: req.workflow } : {}),
      };
      return { events: [e], result: true };
    });
    const j = (await s.cache.get()).jobs[id]!;
    if (created) {
      this.published(j);
      s.d.log.info({ job: id, target, kind, from: from?.agent ?? null }, 'job recorded');
    }
    if (kind === 'agent') this.kick(agent!.terminalId);
    else void this.pumpWorkers();
    return this.view(j);
  }

  private published(j: JobRecord): void {
    this.s.d.hub.publish('job', {
      id: j.id,
      name: j.name,
      state: j.state,
      reason: j.reason,
      agent: j.agent,
      terminalId: j.terminalId,
      target: j.target,
      kind: j.kind,
      from: j.from,
      reply: j.reply,
    });
  }

  async list(): Promise<JobView[]> {
    return Object.values((await this.s.cache.get()).jobs).map((j) => this.view(j));
  }

  async get(id: string): Promise<JobView> {
    const data = await this.s.cache.get();
    const j = data.jobs[id];
    if (!j)
      throw new JaggersError(
        'E_NOT_FOUND',
        `no job ${JSON.stringify(id)} in this project (see \`jaggers jobs\`; of ended jobs only the newest ${KEEP_FINISHED} are kept there, older ones are in .jaggers/events.jsonl)`,
      );
    return this.view(j);
  }

  /** The job once it ended, or as it is when `timeoutMs` ran out. */
  async wait(id: string, timeoutMs: number): Promise<JobView> {
    const now = await this.get(id);
    if (isFinal(now.state)) return now;
    await this.s.untilEvent((e) => e.type === 'job' && e.data.id === id && isFinal(e.data.state as JobState), timeoutMs);
    return this.get(id);
  }

  async result(id: string): Promise<JobResultView> {
    const job = await this.get(id);
    if (!job.reply) return { job, reply: null, artifact: null };
    const text = await readFile(path.resolve(this.root, job.reply), 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new JaggersError('E_FILE', `job ${id}: cannot read its reply ${job.reply}: ${e.code ?? e.message}`);
    });
    return { job, reply: parseArtifact(text).body.replace(/\n$/, ''), artifact: job.reply };
  }

  /**
   * Record a state change unless the job already ended; a final state also sends the result home.
   * Returns the record after the change, or null when the job had already ended.
   */
  async change(
    id: string,
    state: JobState,
    reason: string,
    more: Partial<NewJournalEvent & { type: 'job-state' }> = {},
    replyText: string | null = null,
  ): Promise<JobRecord | null> {
    const rec = await this.s.registry.update(async (d) => {
      const cur = d.jobs[id];
      if (!cur || isFinal(cur.state)) return { events: [], result: null };
      const events: NewJournalEvent[] = [{ ...more, type: 'job-state', jobId: id, state, reason }];
      if (isFinal(state)) events.push(...(await this.resultMessage(d, { ...cur, ...more, state, reason } as JobRecord, replyText)));
      return { events, result: { ...cur, ...more, state, reason } as JobRecord };
    });
    if (!rec) return null;
    const j = (await this.s.cache.get()).jobs[id] ?? rec;
    this.published(j);
    this.s.d.log.info({ job: id, agent: j.agent, state, reason }, 'job state');
    if (isFinal(state)) await this.ended(j);
    return j;
  }

  /** The message that takes a job's end to the inbox of whoever assigned it (written inside the registry lock). */
  private async resultMessage(d: RegistryData, j: JobRecord, replyText: string | null): Promise<NewJournalEvent[]> {
    const home = j.from ? d.terminals[j.from] : undefined;
    if (!home) return [];
    const header = { fromAgent: j.agent ?? j.target, from: j.terminalId, toAgent: home.agent, to: home.terminalId, job: j.id };
    return [await homeMessage({ projectRoot: this.root, jaggersDir: this.s.d.ctx.jaggersDir }, header, renderJobResult(j, replyText))];
  }

  /** After a job's end: its worker's window closes (unless kept), the freed slot goes to the next, the result goes home. */
  private async ended(j: JobRecord): Promise<void> {
    if (j.kind === 'worker' && !j.keep && j.window) await killWindow(this.s.d.commands, j.window).catch(() => {});
    if (j.kind === 'worker') void this.pumpWorkers();
    if (j.from) this.kick(j.from);
  }

  async cancel(id: string, by = 'the user'): Promise<JobView> {
    const j = await this.get(id);
    if (isFinal(j.state)) return j;
    const stop = this.active.get(id);
    if (j.state !== 'queued' && j.terminalId) {
      const e = this.s.table.find(j.terminalId);
      if (e?.profile && !e.pane.dead) await sendKeys(this.s.d.commands, e.pane.paneId, e.profile.delivery.interruptKeys).catch(() => {});
    }
    await this.change(id, 'cancelled', `cancelled by ${by}${j.state === 'queued' ? ' while queued' : ` while ${j.state}; the agent was interrupted`}`);
    stop?.abort();
    return this.get(id);
  }

  /** Open worker windows for queued profile jobs, within each profile's limit; reopen a worker lost in a crash. */
  async pumpWorkers(): Promise<void> {
    const data = await this.s.cache.get();
    const project = await this.s.d.ctx.project().catch(() => null);
    const running = new Map<string, number>();
    const workers = Object.values(data.jobs).filter((j) => j.kind === 'worker' && !isFinal(j.state));
    // A worker being opened counts, whatever the registry says yet: a second pump running meanwhile (a
    // job ended, another was assigned) would otherwise see it still queued and open one more.
    for (const j of workers) if (j.state !== 'queued' || this.opening.has(j.id)) running.set(j.target, (running.get(j.target) ?? 0) + 1);
    for (const j of workers) {
      if (this.opening.has(j.id)) continue;
      if (j.state === 'queued') {
        const n = running.get(j.target) ?? 0;
        if (n >= maxWorkersOf(project, j.target)) continue;
        running.set(j.target, n + 1);
        void this.openWorker(j);
      } else if (j.state === 'starting' && (!j.terminalId || !this.s.table.find(j.terminalId))) {
        void this.openWorker(j);
      }
    }
  }

  private async openWorker(j: JobRecord): Promise<void> {
    const s = this.s;
    this.opening.add(j.id);
    try {
      const { profile } = await loadProfile(j.target, s.d.ctx.jaggersDir);
      const ctx = s.d.ctx;
      const data = await s.cache.get();
      const terminalId = j.terminalId ?? newTerminalId();
      const agent = `${j.target}-${j.id}`;
      const launch = planLaunch(
        await s.launchInput(profile, j.id, { width: 200, height: 50 }, () => randomUUID()),
        { name: agent, profile: j.target, args: [], env: {} },
        profile,
        terminalId,
        data.terminals[terminalId]?.sessionId ?? null,
      );
      if (!findCommand(profile.command, launch.env.PATH ?? '', launch.cwd)) {
        await this.change(j.id, 'failed', `profile ${j.target}'s command ${JSON.stringify(profile.command)} is not installed (not found on PATH)`);
        return;
      }
      await writeLaunchFiles(launch);
      const w = await newWindow(s.d.commands, { session: ctx.session, name: agent, cwd: launch.cwd, env: launch.env, command: launch.command });
      await setWindowOptions(s.d.commands, w.windowId, windowTags(agent, j.target, terminalId, j.id));
      await fixWindowSize(s.d.commands, w.windowId, launch);
      const ok = await s.registry.update((d) => {
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
        await killWindow(s.d.commands, w.windowId).catch(() => {});
        return;
      }
      this.published((await s.cache.get()).jobs[j.id]!);
      await s.table.refresh();
      this.kick(terminalId);
    } catch (e) {
      await this.change(j.id, 'failed', `could not open a worker window: ${(e as Error).message}`);
    } finally {
      this.opening.delete(j.id);
    }
  }

  async paneLost(j: JobRecord, why: string): Promise<void> {
    const when = j.state === 'starting' ? 'before it took the prompt' : 'during its turn';
    await this.change(j.id, 'failed', `the agent's pane died ${when} (${why.replace(/: run .*$/, '')})`, { cause: 'agent-lost' });
  }

  /** The handover file of a job's turn, read back after a restart. */
  private async prepared(j: JobRecord, target: TurnTarget, cwd: string): Promise<PreparedTurn> {
    const artifact = path.resolve(this.root, j.artifact!);
    const { meta: m } = parseArtifact(await readFile(artifact, 'utf8'));
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    const meta: HandoverMeta = {
      task: str(m.task) ?? j.id,
      workflow: str(m.workflow) ?? 'job',
      turn: typeof m.turn === 'number' ? m.turn : (j.turn ?? 1),
      sourceAgent: str(m.source_agent),
      sourceSession: str(m.source_session),
      targetAgent: str(m.target_agent) ?? target.agent,
      targetSession: str(m.target_session),
      created: str(m.created) ?? j.created,
    };
    const prompt: PromptArtifact = { turn: meta.turn, artifact, meta, cwd };
    return { prompt, nonce: j.nonce!, pointer: pointerFor(target, prompt, j.nonce!) };
  }

  /** Run a job's turn in `e` (the dispatcher holds the pane), or follow it again after a restart. */
  async runJob(given: JobRecord, e: TerminalEntry): Promise<void> {
    const s = this.s;
    let j = (await s.cache.get()).jobs[given.id] ?? given;
    if (isFinal(j.state)) return;
    const stop = new AbortController();
    this.active.set(j.id, stop);
    const label = `job ${j.id}`;
    const from = j.from ? { agent: j.fromAgent ?? 'user', terminalId: j.from } : null;
    try {
      const target = s.target(e, label);
      const env = s.turnEnv();
      const data = await s.cache.get();
      const cwd = data.terminals[target.terminalId ?? '']?.cwd ?? this.root;
      const timeoutMs = j.timeoutMs ?? DEFAULT_JOB_TIMEOUT_S * 1000;
      let p: PreparedTurn;
      let turnsBefore = s.watcher.turns(target.paneId);
      if (j.state === 'running' || j.state === 'waiting_input') {
        if (j.pid && target.pid && j.pid !== target.pid) {
          await this.change(
            j.id,
            'failed',
            `${target.agent} was restarted during the job's turn (pid ${j.pid}, now ${target.pid}): the turn was lost; assign it again`,
            { cause: 'agent-lost' },
          );
          return;
        }
        // Its turn may have ended while no supervisor watched: the transcript or the screen says so.
        p = await this.prepared(j, target, cwd);
      } else {
        let found: string | null = null;
        if (j.state === 'starting' && j.nonce && j.artifact) {
          p = await this.prepared(j, target, cwd);
          found = await promptWentIn(env, target, { nonce: p.nonce, cwd, sessionId: p.prompt.meta.targetSession, artifact: p.prompt.artifact });
          if (!found) {
            const nonce = makeNonce();
            p = { ...p, nonce, pointer: pointerFor(target, p.prompt, nonce) };
          }
        } else {
          const payload = await readFile(path.resolve(this.root, j.prompt), 'utf8');
          p = await prepareTurn(env, target, { task: j.task ?? j.id, workflow: j.workflow ?? 'job', payload, from });
        }
        if (found) {
          j = (await this.change(j.id, 'running', `${target.agent} had taken the prompt before the supervisor restarted (${found})`)) ?? j;
        } else {
          const starting = await this.change(j.id, 'starting', `typing the prompt into ${target.agent}`, {
            terminalId: target.terminalId ?? undefined,
            agent: target.agent,
            nonce: p.nonce,
            artifact: rel(this.root, p.prompt.artifact),
            turn: p.prompt.turn,
          });
          if (!starting) return;
          turnsBefore = s.watcher.turns(target.paneId);
          const d = await deliverPointer(env, target, p, { timeoutMs: 60_000, label });
          j = (await this.change(j.id, 'running', `${target.agent} took the prompt (${d.evidence})`, target.pid ? { pid: target.pid } : {})) ?? j;
        }
      }
      if (isFinal(j.state) || stop.signal.aborted) return;
      const since = Date.parse(j.history.findLast((h) => h.state === 'running')?.at ?? new Date().toISOString());
      const left = Math.max(1000, timeoutMs - (Date.now() - since));
      const offWatch = this.followAsking(j, target);
      try {
        const reply = awaitReply(env, target, p, { timeoutMs: left, label, from, signal: stop.signal }, turnsBefore, async (file, text, d) => {
          const cur = d.jobs[j.id];
          if (!cur || isFinal(cur.state)) return [];
          const done = { ...cur, state: 'done' as const, reason: 'the agent finished its turn', reply: rel(this.root, file) };
          return [{ type: 'job-state', jobId: j.id, state: 'done', reason: done.reason, reply: done.reply }, ...(await this.resultMessage(d, done, text))];
        });
        await reply;
        const done = (await s.cache.get()).jobs[j.id];
        if (done?.state === 'done') {
          this.published(done);
          s.d.log.info({ job: j.id, agent: done.agent, reply: done.reply }, 'job done');
          await this.ended(done);
        }
      } finally {
        offWatch();
      }
    } catch (err) {
      const lost = (err as JaggersError).code === 'E_PANE_GONE';
      if (!stop.signal.aborted) await this.change(j.id, 'failed', (err as Error).message, lost ? { cause: 'agent-lost' } : {});
    } finally {
      this.active.delete(j.id);
    }
  }

  /** While the job runs: its agent asking for permission makes it waiting_input, and its answer running again. */
  private followAsking(j: JobRecord, target: TurnTarget): () => void {
    let asking = j.state === 'waiting_input';
    let chain = Promise.resolve();
    return this.s.watcher.onChange((c) => {
      if (c.pane.paneId !== target.paneId) return;
      if (c.status === 'waiting_input' && !asking) {
        asking = true;
        const q = readQuestion(this.s.watcher.lastScreen(target.paneId) ?? '');
        const what = q ? describeQuestion(q) : c.lines[0]?.trim() || 'a question on its screen';
        const how = q?.choices.length ? `jaggers answer ${target.agent} <number or label>` : `jaggers attach ${target.agent}`;
        chain = chain.then(async () => void (await this.change(j.id, 'waiting_input', `${target.agent} asks: ${what}; answer it with \`${how}\``)));
      } else if (asking && c.status === 'busy') {
        asking = false;
        chain = chain.then(async () => void (await this.change(j.id, 'running', `${target.agent} was answered and works on`)));
      }
    });
  }

  /** Jobs that are not finished, to pick up when the supervisor starts. */
  async start(): Promise<void> {
    await this.pumpWorkers();
  }
}
