// The turn engine: the phases of one turn of one agent, from the handover file to the reply artifact:
// prepare (write the handover file, choose the nonce), deliver (type the pointer, see it taken), await
// (the turn's end, confirmed) and the reply. Its dependencies are handed in (pane I/O, the live status,
// the registry, a logger); the work runner (src/work/) runs the phases and journals each one.

import path from 'node:path';
import type { TurnEventData } from '../api/types.js';
import { deliverNow, type Delivered } from '../delivery/deliver.js';
import type { PaneIO } from '../delivery/ports.js';
import { inputAreaLines, sightPrompt } from '../delivery/evidence.js';
import { makeNonce } from '../delivery/sanitize.js';
import { limitInReply } from '../detect/classify.js';
import { JaggersError } from '../errors.js';
import { readTranscriptReply } from '../clis/transcript.js';
import type { Log } from '../logger.js';
import type { Profile } from '../profiles/schema.js';
import type { NewJournalEvent } from '../sessions/events.js';
import type { RegistryData, RegistryStore } from '../sessions/registry.js';
import { fillTemplate } from '../agents/plan.js';
import { writePrompt, writeReply, type PromptArtifact, type TurnParty } from './artifacts.js';
import type { TurnWatch } from './ports.js';
import { waitForTurnEnd, type TurnEnd } from './wait-end.js';

export interface TurnEnv {
  io: PaneIO;
  watch: TurnWatch;
  registry: RegistryStore;
  projectRoot: string;
  jaggersDir: string;
  log: Log;
  /** Progress for the event stream. */
  emit(data: TurnEventData): void;
  /** The HOME a pane's process runs with (where CLIs keep transcripts). */
  homeOf(pid: number | null): Promise<string>;
  /** After the first finished turn of a CLI that cannot take a session id up front: pin the one it made. */
  /** `tag`: the first prompt's nonce tag, where several new sessions must be told apart. */
  discoverPin?(target: TurnTarget, home: string, tag: string): Promise<void>;
}

export interface TurnTarget {
  paneId: string;
  agent: string;
  terminalId: string | null;
  profile: Profile;
  pid: number | null;
}

export interface TurnRequest {
  task: string;
  workflow: string;
  payload: string;
  from: TurnParty | null;
  /** Bound on waiting for the agent to be ready, and on its turn after the prompt went in. */
  timeoutMs: number;
  /** What the turn is part of, as errors name it: `handoff`, a job, a workflow step. */
  label: string;
  /** Stops waiting for the turn's end (a cancelled job). */
  signal?: AbortSignal;
}

/** A turn's handover file written and its pointer made, before anything is typed. */
export interface PreparedTurn {
  prompt: PromptArtifact;
  nonce: string;
  pointer: string;
}

export function pointerFor(target: TurnTarget, prompt: { artifact: string; cwd: string }, nonce: string): string {
  // The path as the agent sees it from its own folder.
  return fillTemplate([target.profile.delivery.pointer], { file: path.relative(prompt.cwd, prompt.artifact) || prompt.artifact, nonce })[0]!;
}

/**
 * Write the turn's handover file and choose its nonce; `extra` adds events to the journal entry that
 * records the file (the work item's `starting`, with the nonce), so both are recorded or neither.
 */
export async function prepareTurn(
  env: TurnEnv,
  target: TurnTarget,
  req: Pick<TurnRequest, 'task' | 'workflow' | 'payload' | 'from'>,
  extra?: (p: PreparedTurn, data: RegistryData) => NewJournalEvent[],
): Promise<PreparedTurn> {
  const dirs = { jaggersDir: env.jaggersDir, projectRoot: env.projectRoot };
  const party: TurnParty = { agent: target.agent, terminalId: target.terminalId };
  const nonce = makeNonce();
  const prompt = await writePrompt(env.registry, dirs, {
    task: req.task,
    workflow: req.workflow,
    target: party,
    from: req.from,
    payload: req.payload,
    ...(extra ? { extra: (pr: PromptArtifact, d: RegistryData) => extra({ prompt: pr, nonce, pointer: pointerFor(target, pr, nonce) }, d) } : {}),
  });
  return { prompt, nonce, pointer: pointerFor(target, prompt, nonce) };
}

/**
 * The pointer was typed and nothing shows that the agent took it: no busy screen, no echo, and it is not
 * in the input box either (a CLI still loading swallowed it: gemini 0.61 resuming under load).
 */
export class PromptLeftNoTrace extends JaggersError {
  constructor(
    message: string,
    /** What was seen, for the item's history: `nothing within 30000 ms`. */
    readonly why: string,
  ) {
    super('E_TIMEOUT', message);
  }
}

/**
 * Type the pointer and verify the agent took it; throws with the reason when it did not (a
 * `PromptLeftNoTrace` when the pointer is nowhere on screen, for the caller to look further and type it again).
 */
export async function deliverPointer(
  env: TurnEnv,
  target: TurnTarget,
  p: PreparedTurn,
  req: Pick<TurnRequest, 'timeoutMs' | 'label'>,
): Promise<Extract<Delivered, { kind: 'delivered' }>> {
  const d = await deliverNow(env.io, env.watch, target, p.pointer, { nonce: p.nonce, readyTimeoutMs: req.timeoutMs });
  if (d.kind === 'delivered') return d;
  const why =
    d.kind === 'not-ready'
      ? `${target.agent} never became ready (${d.status})`
      : d.kind === 'timeout'
        ? `${target.agent} did not take the prompt within ${target.profile.delivery.verifyTimeoutMs} ms${d.stillInInput ? ' (it is still in the input box)' : ''}`
        : `${target.agent}'s pane went away: ${d.error}`;
  const code = d.kind === 'pane-gone' ? 'E_PANE_GONE' : d.kind === 'not-ready' && d.status.startsWith('waiting_input') ? 'E_AGENT_WAITING' : 'E_TIMEOUT';
  const message = `${req.label}: ${why}; the handover file stays at ${p.prompt.artifact}`;
  throw d.kind === 'timeout' && !d.stillInInput
    ? new PromptLeftNoTrace(message, `no sign of it within ${target.profile.delivery.verifyTimeoutMs} ms`)
    : new JaggersError(code, message);
}

export interface TurnReply {
  text: string;
  from: 'transcript' | 'screen' | 'hook';
  artifact: string;
  by: 'transcript' | 'screen' | 'hook';
}

/** A turn a usage limit cut (docs/limits.md): no reply was written; `text` is what the CLI printed instead, `limit` the lines that said so. */
export interface CutTurn {
  cut: true;
  limit: string[];
  text: string;
  by: 'transcript' | 'screen' | 'hook';
}

/**
 * Wait for the end of the turn the pointer started, capture the reply and write it as the next
 * artifact. `extra` adds events to the journal entry of the reply (a job's end), so both are recorded
 * together or not at all. With `req.cutByLimit`, a turn cut by a usage limit writes no reply: it
 * resolves as a `CutTurn`, for the item to wait for the reset and run again.
 */
export async function awaitReply(
  env: TurnEnv,
  target: TurnTarget,
  p: PreparedTurn,
  req: Pick<TurnRequest, 'timeoutMs' | 'label' | 'from' | 'signal'> & {
    cutByLimit?: boolean;
    /** Awaited after the turn's end is seen and before it is recorded (the CLI's record of the answer, src/work/usage.ts). */
    settle?: () => Promise<void>;
  },
  turnsBefore: number,
  extra?: (replyFile: string, reply: string, data: RegistryData) => Promise<NewJournalEvent[]>,
): Promise<(TurnReply & { cut?: undefined }) | CutTurn> {
  const dirs = { jaggersDir: env.jaggersDir, projectRoot: env.projectRoot };
  const { prompt, nonce } = p;
  const home = await env.homeOf(target.pid);
  const sessionId = prompt.meta.targetSession;
  const end = await turnEnd(env, target, { nonce, cwd: prompt.cwd, sessionId, artifact: prompt.artifact, home }, req, turnsBefore);
  const reply = { text: end.reply, from: end.by };
  if (!sessionId && env.discoverPin && end.limit && req.cutByLimit)
    await env
      .discoverPin(target, home, `[jg:${nonce}]`)
      .catch((e: Error) => env.log.warn({ agent: target.agent, err: e.message }, 'could not pin the session the CLI made'));
  if (end.limit && req.cutByLimit) return { cut: true, limit: end.limit, text: reply.text, by: end.by };
  await req.settle?.();
  const party: TurnParty = { agent: target.agent, terminalId: target.terminalId };
  const artifact = await writeReply(env.registry, dirs, {
    prompt,
    target: party,
    from: req.from,
    text: reply.text,
    ...(extra ? { extra: (file: string, d: RegistryData) => extra(file, reply.text, d) } : {}),
  });
  if (!sessionId && env.discoverPin)
    await env
      .discoverPin(target, home, `[jg:${nonce}]`)
      .catch((e: Error) => env.log.warn({ agent: target.agent, err: e.message }, 'could not pin the session the CLI made'));
  return { ...reply, artifact, by: end.by };
}

export interface PromptRef {
  nonce: string;
  /** The target's folder, where its CLI keeps the transcript of this project. */
  cwd: string;
  sessionId: string | null;
  /** The file the prompt points to, for messages. */
  artifact: string;
  home?: string;
}

/** The end of the turn the prompt with `nonce` started (see wait-end.ts), confirmed to the pane's machine. */
export async function turnEnd(
  env: TurnEnv,
  target: TurnTarget,
  p: PromptRef,
  req: Pick<TurnRequest, 'timeoutMs' | 'label' | 'signal'>,
  turnsBefore: number,
): Promise<TurnEnd> {
  const home = p.home ?? (await env.homeOf(target.pid));
  const kind = target.profile.session.transcript;
  const { sessionId, nonce, cwd } = p;
  const readTranscript = kind && sessionId ? () => readTranscriptReply(kind, home, cwd, sessionId, nonce) : null;
  const end = await waitForTurnEnd(env.watch, env.io, {
    paneId: target.paneId,
    agent: target.agent,
    profile: target.profile,
    nonce,
    turnsBefore,
    timeoutMs: req.timeoutMs,
    artifact: p.artifact,
    readTranscript,
    label: req.label,
    ...(req.signal ? { signal: req.signal } : {}),
  });
  env.watch.confirmTurn(target.paneId, end.by);
  // A turn that ended at a usage limit the screen did not show (a reply read from the transcript or a hook).
  if (end.by !== 'screen') {
    const lines = limitInReply(end.reply, target.profile.detect.rules);
    if (lines) {
      env.watch.limitSeen?.(target.paneId, lines, end.by);
      return { ...end, limit: lines };
    }
  }
  return end;
}

/**
 * Whether the prompt that carried `nonce` went in, for a supervisor that was killed between claiming a
 * delivery and recording it: the CLI's transcript has it, or the visible screen shows its echo above
 * the input box (a copy still in the input box is not an echo: it was never submitted).
 */
export async function promptWentIn(env: TurnEnv, target: TurnTarget, p: PromptRef): Promise<'found-in-transcript' | 'found-on-screen' | null> {
  const kind = target.profile.session.transcript;
  if (kind && p.sessionId) {
    const home = p.home ?? (await env.homeOf(target.pid));
    if (await readTranscriptReply(kind, home, p.cwd, p.sessionId, p.nonce).catch(() => null)) return 'found-in-transcript';
  }
  const screen = await env.io.capture(target.paneId).catch(() => null);
  if (screen !== null && sightPrompt(screen, `[jg:${p.nonce}]`, inputAreaLines(target.profile) || 6).echoes > 0) return 'found-on-screen';
  return null;
}
