// `handoff` and `send` as work items that their caller follows: the item is recorded, joins the agent's
// queue like any other (a handoff and an `assign` to one agent run one after the other), and the request
// waits for it (for a handoff: its reply, or only its delivery). The item does not depend on the caller:
// a caller that goes away (Ctrl-C, a dropped connection) leaves it running, and follows it again by id.
// A handoff or send that has not started by its timeout is cancelled, so it never goes in long after
// its caller gave up.
import path from 'node:path';
import type { HandoffResult, InputResult, JobView } from '../api/types.js';
import { describeQuestion, readQuestion } from '../detect/question.js';
import { JaggersError, isErrorCode } from '../errors.js';
import { readConfinedText } from '../fs/confine.js';
import { parseArtifact } from '../handover/artifact.js';
import { newTaskId } from '../ids.js';
import type { Log } from '../logger.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import type { JobRequest, Jobs } from './jobs.js';
import type { Outcomes } from './outcomes.js';
import { resolveParty } from './parties.js';
import type { Agents, Clock, Dirs, Store, Subscribe } from './ports.js';
import { queueOf } from './queue.js';
import { placeCarried, type CarriedFile } from './carry.js';

export interface HandoffRequest {
  /** Chosen by the caller, so it can follow the item again after a dropped connection. */
  id?: string;
  agent: string;
  message: string;
  from?: string;
  fromTerminal?: string;
  task?: string;
  /** Seconds the handoff may wait for the agent and run (default 600). */
  timeout?: number;
  wait: boolean;
  headless: boolean;
  workflow: string;
  /** Files of the sender's project the message names (src/work/carry.ts): written here, the message pointed at them. */
  files?: CarriedFile[];
}

export const DEFAULT_TURN_TIMEOUT_S = 600;
/** A `send` that has not gone in after this long is cancelled. */
export const SEND_TIMEOUT_S = 600;

export interface HandoffsPorts {
  jobs: Pick<Jobs, 'create' | 'cancel' | 'record'>;
  store: Store;
  agents: Pick<Agents, 'get' | 'find' | 'list' | 'target' | 'status' | 'lastScreen'>;
  hub: Subscribe;
  outcomes: Outcomes;
  runner: { waiting(terminalId: string, itemId?: string): string | null };
  clock: Clock;
  dirs: Dirs;
  log: Log;
  /** Resolves when the supervisor stops: a follower then gives up (the item goes on in the next one). */
  stopping: AbortSignal;
  /** The host a team agent runs on (jaggers.json's `host`, docs/hosts.md), or null: this machine. */
  hostOf?(agent: string): Promise<string | null>;
  /** On a host's supervisor: the team's agents elsewhere (jaggers.json's `home`): a handoff to one goes through the outbox. */
  homeAgents?(): Promise<readonly string[]>;
}

export class Handoffs {
  private readonly deadlines = new Map<string, unknown>();

  constructor(private readonly p: HandoffsPorts) {}

  /** After a restart: queued handoffs and sends get their deadlines again (one already past is cancelled now). */
  start(): void {
    for (const j of Object.values(this.p.store.data.jobs)) if ((j.work === 'handoff' || j.work === 'send') && j.state === 'queued') this.arm(j);
  }

  stop(): void {
    for (const t of this.deadlines.values()) this.p.clock.clearTimeout(t);
    this.deadlines.clear();
  }

  /** One turn: waits for the reply unless `wait` is false (then for the delivery; the turn still runs to its end). */
  async handoff(given: HandoffRequest): Promise<HandoffResult> {
    const task = given.task ?? newTaskId();
    const data = this.p.store.data;
    const req = this.knownCaller(given.files?.length ? await this.carried(given) : given);
    // An agent on another host: the handoff is forwarded to that host's supervisor (src/work/remote-work.ts).
    // On a host's supervisor, one for an agent of home waits in the outbox, is taken home and runs there
    // (src/work/outbox-home.ts); either way this request follows the item here to its end.
    if (!resolveParty(this.p.agents, data, req.agent, task)) {
      const host = (await this.p.hostOf?.(req.agent)) ?? null;
      if (host || (await this.p.homeAgents?.())?.includes(req.agent)) return this.remote(req, task);
    }
    // A headless turn needs no pane: the agent's terminal in the registry is enough.
    const party = req.headless ? resolveParty(this.p.agents, data, req.agent, task) : null;
    const e = req.headless && party ? this.p.agents.find(party.terminalId) : await this.p.agents.get(req.agent, task, 'agent', 'handoff');
    if (req.from) await this.p.agents.get(req.from, task, 'agent', 'handoff --from');
    const terminalId = party?.terminalId ?? e?.pane.terminalId;
    if (!terminalId) throw new JaggersError('E_NOT_PINNED', `handoff: agent ${req.agent} has no terminal id (its window has no @jaggers_terminal_id tag)`);
    // A request sent again (its connection dropped) follows the item it recorded the first time.
    const known = req.id !== undefined && Object.hasOwn(data.jobs, req.id);
    if (e && !req.headless && !known) {
      this.p.agents.target(e, 'handoff');
      this.refuseWaiting(e.pane.paneId, e.pane.agent!, terminalId, 'handoff');
    }
    const timeout = req.timeout ?? DEFAULT_TURN_TIMEOUT_S;
    const item: JobRequest = {
      target: terminalId,
      text: req.message,
      task,
      workflow: req.workflow,
      work: 'handoff',
      headless: req.headless,
      timeout,
      ...(req.id ? { id: req.id } : {}),
      ...(req.from ? { from: req.from } : {}),
      ...(req.fromTerminal && !req.from ? { fromTerminal: req.fromTerminal } : {}),
    };
    const j = await this.p.jobs.create(item);
    this.arm(this.p.jobs.record(j.id));
    return this.follow(j.id, req.wait ? 'end' : 'delivered');
  }

  /**
   * The caller's terminal (the `handoff` command run in an agent's pane sends its JAGGERS_TERMINAL_ID)
   * is recorded as the sender when it is a terminal of this project; another's (a pane of another
   * project's session) makes the handoff a person's. Unlike an `assign`, whose result goes to the
   * asker's inbox, a handoff's reply goes back to the command itself: nobody here needs the caller.
   */
  private knownCaller(req: HandoffRequest): HandoffRequest {
    if (req.fromTerminal === undefined || req.from !== undefined || Object.hasOwn(this.p.store.data.terminals, req.fromTerminal)) return req;
    this.p.log.info({ fromTerminal: req.fromTerminal }, "handoff: the caller's JAGGERS_TERMINAL_ID is not a terminal of this project; recorded as a person's");
    const { fromTerminal: _, ...rest } = req;
    return rest;
  }

  /** A handoff that carries files (a turn forwarded from another host): they are written here once, its message pointed at them. */
  private async carried(req: HandoffRequest): Promise<HandoffRequest> {
    if (req.id === undefined) throw new JaggersError('E_USAGE', 'handoff: a handoff that carries files needs its id');
    if (Object.hasOwn(this.p.store.data.jobs, req.id)) return req;
    return { ...req, message: await placeCarried(this.p.dirs.jaggersDir, req.id, req.files!, req.message) };
  }

  /** A handoff or send recorded elsewhere (one taken home from a host's outbox): cancelled if it has not started by its deadline. */
  deadline(id: string): void {
    this.arm(this.p.jobs.record(id));
  }

  /** A handoff to an agent on another host (or, on a host, of home): recorded here, run there under the same id, followed here. */
  private async remote(req: HandoffRequest, task: string): Promise<HandoffResult> {
    if (req.from) await this.p.agents.get(req.from, task, 'agent', 'handoff --from');
    const j = await this.p.jobs.create({
      target: req.agent,
      text: req.message,
      task,
      workflow: req.workflow,
      work: 'handoff',
      timeout: req.timeout ?? DEFAULT_TURN_TIMEOUT_S,
      // Headless there: the host's supervisor runs it in far's conversation pinned there.
      ...(req.headless ? { headless: true } : {}),
      ...(req.id ? { id: req.id } : {}),
      ...(req.from ? { from: req.from } : {}),
      ...(req.fromTerminal && !req.from ? { fromTerminal: req.fromTerminal } : {}),
    });
    this.arm(this.p.jobs.record(j.id));
    return this.follow(j.id, req.wait ? 'end' : 'delivered');
  }

  /** Follow a handoff by its id: its result once it ended (or, `delivered`, once its prompt went in). */
  async follow(id: string, until: 'end' | 'delivered'): Promise<HandoffResult> {
    const j = await this.settle(id, (x) => isFinal(x.state) || (until === 'delivered' && x.state !== 'queued' && x.state !== 'starting'));
    if (j.state === 'failed' || j.state === 'cancelled') throw failure(j);
    return this.result(j);
  }

  /** `send`: type text into the agent's pane after what its queue holds, and see it taken. */
  async input(agent: string, text: string, task?: string | null, id?: string): Promise<InputResult> {
    const e = await this.p.agents.get(agent, task, 'agent', 'send');
    const target = this.p.agents.target(e, 'send');
    const terminalId = e.pane.terminalId;
    if (!terminalId) throw new JaggersError('E_NOT_PINNED', `send: agent ${agent} has no terminal id (its window has no @jaggers_terminal_id tag)`);
    const known = id !== undefined && Object.hasOwn(this.p.store.data.jobs, id);
    if (!known) this.refuseWaiting(target.paneId, target.agent, terminalId, 'send');
    const v = await this.p.jobs.create({ target: terminalId, text, work: 'send', timeout: SEND_TIMEOUT_S, ...(task ? { task } : {}), ...(id ? { id } : {}) });
    this.arm(this.p.jobs.record(v.id));
    const j = await this.settle(v.id, (x) => isFinal(x.state));
    if (j.state !== 'done') throw failure(j);
    const o = this.p.outcomes.get(j.id);
    return {
      agent: target.agent,
      pane: target.paneId,
      bytes: o?.bytes ?? j.bytes,
      submits: o?.delivery?.submits ?? 0,
      evidence: o?.delivery?.evidence ?? 'unverified',
      ms: o?.delivery?.ms ?? 0,
      job: j.id,
    };
  }

  /** An agent that waits for a person takes nothing new: said at once, when nothing else is queued for it. */
  private refuseWaiting(paneId: string, agent: string, terminalId: string, op: string): void {
    if (this.p.agents.status(paneId) !== 'waiting_input' || queueOf(this.p.store.data, terminalId).length > 0) return;
    const q = readQuestion(this.p.agents.lastScreen(paneId) ?? '');
    const what = q ? `asks ${describeQuestion(q)}` : 'is waiting for a person to answer on its screen';
    const how = q?.choices.length ? `jaggers answer ${agent} <number or label>` : `jaggers attach ${agent}`;
    throw new JaggersError('E_AGENT_WAITING', `${op}: ${agent} never became ready (waiting_input: ${agent} ${what}; answer it with \`${how}\`)`);
  }

  /** A queued handoff or send is cancelled at its deadline (its creation plus its timeout). */
  private arm(j: JobRecord): void {
    // One a usage limit cut had started in time: it waits for the limit's reset, not for a deadline (docs/limits.md).
    if (this.deadlines.has(j.id) || j.state !== 'queued' || j.limited) return;
    const ms = (j.timeoutMs ?? DEFAULT_TURN_TIMEOUT_S * 1000) - (this.p.clock.now() - Date.parse(j.created));
    const t = this.p.clock.setTimeout(() => void this.expire(j.id), Math.max(0, ms));
    this.deadlines.set(j.id, t);
  }

  private async expire(id: string): Promise<void> {
    this.deadlines.delete(id);
    const j = this.p.store.data.jobs[id];
    if (!j || j.state !== 'queued' || j.limited) return;
    const why = (j.terminalId && this.p.runner.waiting(j.terminalId, id)) || 'it did not get its turn';
    this.p.log.info({ job: id, work: j.work, why }, 'not started by its deadline: cancelled');
    await this.p.jobs.cancel(id, `its deadline (${Math.round((j.timeoutMs ?? 0) / 1000)} s): it never went in (${why})`);
  }

  /** Resolves with the item once `done(record)` holds (at once when it does), or when the supervisor stops (E_SUPERVISOR_DOWN). */
  private settle(id: string, done: (j: JobRecord) => boolean): Promise<JobRecord> {
    const now = this.p.jobs.record(id);
    if (done(now)) return Promise.resolve(now);
    if (this.p.stopping.aborted)
      return Promise.reject(new JaggersError('E_SUPERVISOR_DOWN', `the supervisor is stopping; ${id} goes on when it is back (follow it: jaggers wait ${id})`));
    return new Promise<JobRecord>((resolve, reject) => {
      const stopping = this.p.stopping;
      const finish = () => {
        off();
        stopping.removeEventListener('abort', stopped);
      };
      const stopped = () => {
        finish();
        reject(new JaggersError('E_SUPERVISOR_DOWN', `the supervisor is stopping; ${id} goes on when it is back (follow it: jaggers wait ${id})`));
      };
      stopping.addEventListener('abort', stopped, { once: true });
      const off = this.p.hub.subscribe((e) => {
        if (e.type !== 'job' || e.data.id !== id) return;
        const j = this.p.store.data.jobs[id];
        if (j && done(j)) {
          finish();
          resolve(j);
        }
      });
    });
  }

  private async result(j: JobRecord): Promise<HandoffResult> {
    const o = this.p.outcomes.get(j.id);
    const root = this.p.dirs.projectRoot;
    const reply = j.reply ? parseArtifact(await readConfinedText(this.p.dirs, j.reply, `${j.work} ${j.id}: its reply`)).body.replace(/\n$/, '') : null;
    const total = o ? performance.now() - o.t0 : 0;
    return {
      job: j.id,
      task: j.task ?? j.id,
      turn: j.turn ?? 0,
      agent: j.agent ?? j.target,
      terminalId: j.terminalId,
      artifact: j.artifact ? path.resolve(root, j.artifact) : '',
      pointer: o?.pointer ?? '',
      delivery: o?.delivery ?? { kind: j.headless ? 'headless' : 'delivered', submits: 0, evidence: null, ms: 0 },
      reply: reply === null ? null : { text: reply, from: o?.replyFrom ?? (j.headless ? 'headless' : 'transcript'), artifact: path.resolve(root, j.reply!) },
      timings: { deliverMs: o?.deliverMs ?? 0, replyMs: o?.replyMs ?? null, totalMs: total },
      states: o ? [...o.states] : [],
      confirmedBy: reply === null ? null : (o?.confirmedBy ?? null),
    };
  }
}

/** A failed or cancelled item as its caller's error: its code and its reason. */
export function failure(j: Pick<JobView, 'id' | 'code' | 'reason' | 'state' | 'work'>): JaggersError {
  const code = isErrorCode(j.code) ? j.code : j.state === 'cancelled' ? 'E_CANCELLED' : 'E_TURN_FAILED';
  return new JaggersError(code, j.reason.startsWith(`${j.work}`) || j.reason.startsWith('send:') ? j.reason : `${j.work} ${j.id}: ${j.reason}`);
}
