// A work item that is a turn in the agent's pane (an assigned job, a handoff, a workflow's turn, a flow
// run), run by its phases, each journaled before the next begins:
//   prepare  queued -> starting   the handover file is written and the nonce chosen (one journal entry)
//   deliver  starting -> running  the pointer is typed and seen taken
//   await    running              the turn's end, confirmed by the transcript or the screen
//   record   running -> done      the reply artifact, the item's end and its result message (one entry)
// After a crash the item goes on from where the journal says it was: a `starting` item whose nonce is in
// the transcript or on screen had gone in; one whose nonce is nowhere is typed again, with a new nonce.
import path from 'node:path';
import type { DeliveryEvidence, TurnEventData } from '../api/types.js';
import { describeQuestion, readQuestion } from '../detect/question.js';
import { makeNonce } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { readConfinedText, type ConfineDirs } from '../fs/confine.js';
import { parseArtifact, type HandoverMeta } from '../handover/artifact.js';
import { isFinal, type JobRecord } from '../sessions/registry.js';
import type { PromptArtifact } from '../turns/artifacts.js';
import {
  awaitReply,
  deliverPointer,
  pointerFor,
  prepareTurn,
  PromptLeftNoTrace,
  promptWentIn,
  type PreparedTurn,
  type TurnEnv,
  type TurnTarget,
} from '../turns/turn.js';
import type { Delivered } from '../delivery/deliver.js';
import type { WorkJournal } from './journal.js';
import type { Outcomes } from './outcomes.js';
import type { Agents, TerminalEntry } from './ports.js';
import { cutByLimit, type LimitNow } from './limit-wait.js';
import { turnUsageEvents, usageSettled, warmUsage, type UsageSource } from './usage.js';

/** A job's turn may run this long unless `--timeout` says otherwise. */
export const DEFAULT_JOB_TIMEOUT_S = 3600;

export interface TurnRunPorts {
  env: TurnEnv;
  journal: WorkJournal;
  agents: Pick<Agents, 'target' | 'lastScreen'>;
  outcomes: Outcomes;
  /** A `--worktree` job's end: its work committed on its branch, and what the branch holds (recorded with the end). */
  worktreeResult?(j: JobRecord): Promise<NonNullable<JobRecord['worktree']>['result']>;
  /** The tokens a session spent, from its CLI's records: the turn's usage is recorded with its end (docs/usage.md). */
  usage?: UsageSource;
  /** The usage limit the pane's machine read (state `limited`): a turn it cut waits for its reset (docs/limits.md). */
  limit?(paneId: string): LimitNow | null | undefined;
}

const rel = (root: string, file: string) => path.relative(root, file);

/** The label errors and logs give the item: `handoff` and `send` as their commands say it, `job j-…` for the others. */
export const labelOf = (j: JobRecord) => (j.work === 'handoff' || j.work === 'send' ? j.work : `${j.work} ${j.id}`);

/** The party that handed the work over, for the handover file's header. */
export const fromOf = (j: JobRecord) =>
  j.from ? { agent: j.fromAgent ?? 'user', terminalId: j.from } : j.fromAgent ? { agent: j.fromAgent, terminalId: null } : null;

/** The handover file of an item's turn, read back (after a restart, or to type it again). */
export async function preparedOf(dirs: ConfineDirs, j: JobRecord, target: TurnTarget, cwd: string): Promise<PreparedTurn> {
  const artifact = path.resolve(dirs.projectRoot, j.artifact!);
  const { meta: m } = parseArtifact(await readConfinedText(dirs, artifact, `${labelOf(j)}: its handover file`));
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const meta: HandoverMeta = {
    task: str(m.task) ?? j.task ?? j.id,
    workflow: str(m.workflow) ?? j.workflow ?? 'job',
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

export async function runPaneTurn(p: TurnRunPorts, given: JobRecord, e: TerminalEntry | undefined, signal: AbortSignal): Promise<void> {
  const { env, journal } = p;
  const root = env.projectRoot;
  let j = journal.data.jobs[given.id] ?? given;
  if (isFinal(j.state)) return;
  const label = labelOf(j);
  const from = fromOf(j);
  const outcome = p.outcomes.get(j.id) ?? p.outcomes.start(j.id);
  let artifact = j.artifact ? path.resolve(root, j.artifact) : '';
  const event = (phase: TurnEventData['phase'], more: Partial<TurnEventData> = {}) =>
    env.emit({ phase, agent: j.agent ?? j.target, terminalId: j.terminalId, task: j.task ?? j.id, turn: j.turn ?? 0, artifact, job: j.id, ...more });
  let offStates = () => {};
  try {
    if (!e) throw new JaggersError('E_PANE_GONE', `${label}: ${j.agent ?? j.target} has no window open`);
    const target = p.agents.target(e, label);
    offStates = env.watch.onChange((c) => {
      if (c.pane.paneId === target.paneId) outcome.states.push(c.status);
    });
    const cwd = journal.data.terminals[target.terminalId ?? '']?.cwd ?? root;
    const timeoutMs = j.timeoutMs ?? DEFAULT_JOB_TIMEOUT_S * 1000;
    let prepared: PreparedTurn;
    let turnsBefore = env.watch.turns(target.paneId);
    /** The answers the session's records counted before the prompt went in (null: unknown). */
    let warm: Promise<number | null> = Promise.resolve(null);
    /** When the warm read began: the turn's record is written at that time or later. */
    let warmAt: number | undefined;
    /** This turn, as the usage readers take it (src/work/usage.ts). */
    const turnOf = (job: JobRecord, terminalId: string) => ({
      job,
      terminalId,
      agent: target.agent,
      profile: target.profile,
      pid: target.pid,
      sessionId: prepared.prompt.meta.targetSession,
    });
    /** Where the prompt of `prepared` went in, if anywhere: the CLI's transcript or the screen. */
    const wentIn = () =>
      promptWentIn(env, target, { nonce: prepared.nonce, cwd, sessionId: prepared.prompt.meta.targetSession, artifact: prepared.prompt.artifact });
    /** A prompt that went nowhere is typed again under a new nonce, recorded first; false when the item ended meanwhile. */
    const newNonce = async (reason: string): Promise<boolean> => {
      const nonce = makeNonce();
      prepared = { ...prepared, nonce, pointer: pointerFor(target, prepared.prompt, nonce) };
      const again = await journal.change(j.id, 'starting', reason, { nonce });
      if (!again) return false;
      j = again;
      return true;
    };
    /**
     * Type the pointer. One that left no trace (not taken and not in the input box: gemini 0.61 still
     * loading its conversation under load swallowed it) and is in neither the transcript nor on screen is
     * typed once more, under a new nonce recorded first, as after a crash.
     */
    const deliverOrRetype = async (): Promise<
      | { kind: 'delivered'; d: Extract<Delivered, { kind: 'delivered' }> }
      | { kind: 'found'; found: 'found-in-transcript' | 'found-on-screen' }
      | { kind: 'ended' }
    > => {
      for (let tries = 1; ; tries++) {
        try {
          return { kind: 'delivered', d: await deliverPointer(env, target, prepared, { timeoutMs: 60_000, label }) };
        } catch (err) {
          if (!(err instanceof PromptLeftNoTrace) || tries > 1) throw err;
          const found = await wentIn();
          if (found) return { kind: 'found', found };
          env.log.warn({ job: j.id, agent: target.agent, nonce: prepared.nonce }, 'the prompt left no trace; typing it again');
          if (!(await newNonce(`typing the prompt into ${target.agent} again (the last try left no trace: ${err.why})`))) return { kind: 'ended' };
          outcome.pointer = prepared.pointer;
          turnsBefore = env.watch.turns(target.paneId);
        }
      }
    };
    if (j.state === 'running' || j.state === 'waiting_input') {
      if (j.pid && target.pid && j.pid !== target.pid) {
        await journal.change(
          j.id,
          'failed',
          `${target.agent} was restarted during the ${j.work}'s turn (pid ${j.pid}, now ${target.pid}): the turn was lost; assign it again`,
          {
            cause: 'agent-lost',
            code: 'E_PANE_GONE',
          },
        );
        return;
      }
      // Its turn may have ended while no supervisor watched: the transcript or the screen says so.
      prepared = await preparedOf(env, j, target, cwd);
    } else {
      let found: string | null = null;
      if (j.state === 'starting' && j.nonce && j.artifact) {
        prepared = await preparedOf(env, j, target, cwd);
        found = await wentIn();
        // Nowhere: it never went in. Typed again, under a new nonce recorded first.
        if (!found && !(await newNonce(`typing the prompt into ${target.agent} again (the last try left no trace)`))) return;
      } else {
        const payload = await readConfinedText(env, j.prompt, `${label}: its prompt`);
        const id = j.id;
        prepared = await prepareTurn(env, target, { task: j.task ?? j.id, workflow: j.workflow ?? 'job', payload, from }, (pr, d) => {
          const cur = d.jobs[id];
          if (!cur || isFinal(cur.state)) return [];
          return [
            {
              type: 'job-state',
              jobId: id,
              state: 'starting',
              reason: `typing the prompt into ${target.agent}`,
              terminalId: target.terminalId ?? undefined,
              agent: target.agent,
              nonce: pr.nonce,
              artifact: rel(root, pr.prompt.artifact),
              turn: pr.prompt.turn,
            },
          ];
        });
        const now = await journal.after(j.id);
        if (!now || now.state !== 'starting') return;
        j = now;
      }
      artifact = prepared.prompt.artifact;
      outcome.pointer = prepared.pointer;
      if (found) {
        j = (await journal.change(j.id, 'running', `${target.agent} had taken the prompt before the supervisor restarted (${found})`)) ?? j;
      } else {
        event('written');
        turnsBefore = env.watch.turns(target.paneId);
        warmAt = Date.now();
        if (target.terminalId) warm = warmUsage(p.usage, journal.data, turnOf(j, target.terminalId));
        const typed = await deliverOrRetype();
        if (typed.kind === 'ended') return;
        if (typed.kind === 'found') {
          outcome.delivery = { kind: 'delivered', submits: 1, evidence: typed.found === 'found-on-screen' ? 'echo' : null, ms: performance.now() - outcome.t0 };
          outcome.deliverMs = performance.now() - outcome.t0;
          j = (await journal.change(j.id, 'running', `${target.agent} took the prompt after all (${typed.found})`, target.pid ? { pid: target.pid } : {})) ?? j;
        } else {
          const d = typed.d;
          outcome.delivery = { kind: 'delivered', submits: d.submits, evidence: d.evidence as DeliveryEvidence, ms: d.ms };
          outcome.deliverMs = performance.now() - outcome.t0;
          const log = env.log.child({
            task: j.task ?? j.id,
            terminal: target.terminalId,
            agent: target.agent,
            turn: prepared.prompt.turn,
            session: prepared.prompt.meta.targetSession,
          });
          log.info({ submits: d.submits, evidence: d.evidence, ms: Math.round(d.ms), job: j.id }, 'prompt delivered');
          j = (await journal.change(j.id, 'running', `${target.agent} took the prompt (${d.evidence})`, target.pid ? { pid: target.pid } : {})) ?? j;
        }
        event('delivered');
      }
    }
    if (isFinal(j.state) || signal.aborted) return;
    artifact = prepared.prompt.artifact;
    const since = Date.parse(j.history.findLast((h) => h.state === 'running')?.at ?? new Date().toISOString());
    const left = Math.max(1000, timeoutMs - (Date.now() - since));
    const offAsking = followAsking(p, j, target);
    const replyStart = performance.now();
    try {
      const id = j.id;
      // The CLI's record of the answer, for the turn's tokens and its context share (a moment late on claude's Stop hook).
      const settle = async () => {
        const before = await warm;
        if (before !== null && target.terminalId) await usageSettled(p.usage, () => journal.data, turnOf(j, target.terminalId), before, { since: warmAt });
      };
      const r = await awaitReply(
        env,
        target,
        prepared,
        { timeoutMs: left, label, from, signal, cutByLimit: true, settle },
        turnsBefore,
        async (file, text, d) => {
          const cur = d.jobs[id];
          if (!cur || isFinal(cur.state)) return [];
          const done = { ...cur, state: 'done' as const, reason: 'the agent finished its turn', reply: rel(root, file) };
          // A --worktree job: its branch's commits and diff stat go with its end, and with its result home.
          const worktree = cur.worktree && p.worktreeResult ? await p.worktreeResult(done) : null;
          if (worktree && done.worktree) done.worktree = { ...done.worktree, result: worktree };
          const usage = target.terminalId ? await turnUsageEvents(p.usage, d, turnOf(cur, target.terminalId)) : [];
          return [
            ...usage,
            { type: 'job-state', jobId: id, state: 'done', reason: done.reason, reply: done.reply, ...(worktree ? { worktree } : {}) },
            ...(await journal.resultEvents(d, done, text)),
          ];
        },
      );
      if (r.cut) {
        // The CLI showed its limit instead of a reply: the item waits for the reset and runs again.
        env.log.info({ job: j.id, agent: target.agent, by: r.by, limit: r.limit }, 'turn cut by a usage limit; the item waits for the reset');
        await cutByLimit(journal, j, target.agent, r.limit, p.limit?.(target.paneId) ?? null);
        return;
      }
      outcome.replyMs = performance.now() - replyStart;
      outcome.confirmedBy = r.by;
      outcome.replyFrom = r.from;
      env.log
        .child({
          task: j.task ?? j.id,
          terminal: target.terminalId,
          agent: target.agent,
          turn: prepared.prompt.turn,
          session: prepared.prompt.meta.targetSession,
        })
        .info({ by: r.by, from: r.from, ms: Math.round(performance.now() - outcome.t0), job: j.id }, 'turn finished');
      await journal.after(j.id);
      event('done', { reply: r.artifact });
    } finally {
      offAsking();
    }
  } catch (err) {
    if (signal.aborted) return;
    const x = err as JaggersError;
    const code = typeof x.code === 'string' && /^E_[A-Z_]+$/.test(x.code) ? x.code : 'E_TURN_FAILED';
    event('failed', { error: x.message });
    await journal.change(j.id, 'failed', x.message, { code, ...(code === 'E_PANE_GONE' ? { cause: 'agent-lost' as const } : {}) });
  } finally {
    offStates();
  }
}

/** While the item runs: its agent asking a person makes it waiting_input, and its answer running again. */
function followAsking(p: TurnRunPorts, j: JobRecord, target: TurnTarget): () => void {
  let asking = j.state === 'waiting_input';
  let chain = Promise.resolve();
  const seen = (status: string) => {
    if (status === 'waiting_input' && !asking) {
      asking = true;
      const q = readQuestion(p.agents.lastScreen(target.paneId) ?? '');
      const what = q ? describeQuestion(q) : 'a question on its screen';
      const how = q?.choices.length ? `jaggers answer ${target.agent} <number or label>` : `jaggers attach ${target.agent}`;
      chain = chain.then(async () => void (await p.journal.change(j.id, 'waiting_input', `${target.agent} asks: ${what}; answer it with \`${how}\``)));
    } else if (asking && status === 'busy') {
      asking = false;
      chain = chain.then(async () => void (await p.journal.change(j.id, 'running', `${target.agent} was answered and works on`)));
    }
  };
  const off = p.env.watch.onChange((c) => {
    if (c.pane.paneId === target.paneId) seen(c.status);
  });
  // It may have asked already, between the prompt going in and this watch.
  const now = p.env.watch.status(target.paneId);
  if (now) seen(now);
  return off;
}
