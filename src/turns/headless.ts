// A turn run headless in the agent's pinned conversation (`claude --resume <id> -p ...`): the same
// handover file and pointer prompt as a pane turn, the CLI's printed answer as the reply artifact.
// The conversation's first turn uses the profile's first-turn arguments (the TUI writes no conversation
// before its first turn); a CLI that cannot take a session id (codex) tells the one it made. When the
// agent has a live pane, its TUI is stopped first and resumed after, so it sees the headless turn and
// never writes beside it (seen with all four real CLIs; see the README).
import { execa } from 'execa';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HandoffResult } from '../api/types.js';
import { HEADLESS_IDS, HEADLESS_REPLIES } from '../clis/kinds.js';
import { makeNonce, sanitizeText } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import type { Profile } from '../profiles/schema.js';
import { fillTemplate } from '../terminals/plan.js';
import { writePrompt, writeReply, type TurnParty } from './artifacts.js';
import type { TurnEnv, TurnRequest, TurnTarget } from './turn.js';

/** How the agent's CLI runs outside its pane: its environment, extra arguments and folder. */
export interface AgentLaunch {
  env: Record<string, string>;
  args: string[];
  cwd: string;
}

/** The agent's live pane, when it has one: stopped before the headless turn, started again after. */
export interface HeadlessPane {
  stop(): Promise<void>;
  /** Start the TUI again: resuming `sessionId` when the conversation exists, else starting it under that id. */
  resume(sessionId: string | null, conversation: boolean): Promise<void>;
}

export interface HeadlessEnv extends Pick<TurnEnv, 'registry' | 'queue' | 'projectRoot' | 'jaggersDir' | 'log' | 'emit'> {
  launch(target: TurnTarget): Promise<AgentLaunch>;
  pane: HeadlessPane | null;
}

const IN_USE = /already (?:in use|exists)/i;

interface Ran {
  text: string;
  sessionId: string | null;
}

async function runCli(profile: Profile, launch: AgentLaunch, args: string[], timeoutMs: number) {
  return execa(profile.command, [...profile.args, ...launch.args, ...args], {
    cwd: launch.cwd,
    env: launch.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: timeoutMs,
  });
}

/** One headless run; a first turn whose session turns out to exist (someone talked in the pane) goes on as a later one. */
async function runHeadless(
  profile: Profile,
  launch: AgentLaunch,
  o: { sessionId: string | null; first: boolean; prompt: string; timeoutMs: number; label: string },
): Promise<Ran> {
  const s = profile.session;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'jaggers-headless-'));
  const replyFile = path.join(tmp, 'reply.txt');
  try {
    const attempt = async (template: string[]) => {
      // `{promptWords}`, a whole argument: the prompt as one argument a word (opencode run quotes an
      // argument with a space in it before the model sees it, `"Read ..."`; words are joined as they are).
      const words = template.flatMap((a) => (a === '{promptWords}' ? o.prompt.split(/\s+/u).filter((w) => w !== '') : [a]));
      const args = fillTemplate(words, { sessionId: o.sessionId ?? '', prompt: o.prompt, replyFile });
      return { r: await runCli(profile, launch, args, o.timeoutMs), usesFile: template.some((a) => a.includes('{replyFile}')) };
    };
    const useFirst = o.first && s.headlessFirstArgs !== undefined;
    if (!useFirst && !o.sessionId)
      throw new JaggersError('E_NOT_PINNED', `${o.label}: no session is pinned yet and profile ${profile.name} has no session.headlessFirstArgs to start one`);
    let run = await attempt(useFirst ? s.headlessFirstArgs! : s.headlessArgs!);
    if (useFirst && run.r.exitCode !== 0 && o.sessionId && IN_USE.test(String(run.r.stderr))) run = await attempt(s.headlessArgs!);
    const { r } = run;
    if (r.exitCode !== 0) {
      const why = r.timedOut ? `did not finish within ${o.timeoutMs / 1000} s` : `exited ${r.exitCode ?? r.signal}: ${String(r.stderr).trim().slice(-500)}`;
      throw new JaggersError(r.timedOut ? 'E_TIMEOUT' : 'E_FILE', `${o.label}: ${profile.command} ${why}`);
    }
    const stdout = String(r.stdout);
    const text = (run.usesFile ? await readFile(replyFile, 'utf8').catch(() => null) : null) ?? HEADLESS_REPLIES[s.headlessReply](stdout);
    const made = s.headlessIdFrom ? HEADLESS_IDS[s.headlessIdFrom](stdout) : null;
    return { text: text.trim(), sessionId: o.sessionId ?? made };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

export async function headlessTurn(env: HeadlessEnv, target: TurnTarget, req: TurnRequest): Promise<HandoffResult> {
  const { profile } = target;
  if (!profile.session.headlessArgs) throw new JaggersError('E_USAGE', `${req.label}: profile ${profile.name} has no session.headlessArgs`);
  if (!target.terminalId)
    throw new JaggersError('E_NOT_PINNED', `${req.label}: agent ${target.agent} has no terminal id (its window has no @jaggers_terminal_id tag)`);
  const terminalId = target.terminalId;
  return env.queue.run(target.paneId, async () => {
    const t0 = performance.now();
    const terminal = (await env.registry.read()).terminals[terminalId];
    const pinned = terminal?.sessionId ?? null;
    if (!pinned && !profile.session.headlessIdFrom)
      throw new JaggersError('E_NOT_PINNED', `${req.label}: agent ${target.agent} (${terminalId}) has no pinned session yet`);
    const first = !pinned || (terminal?.turns ?? 0) === 0;
    const dirs = { jaggersDir: env.jaggersDir, projectRoot: env.projectRoot };
    const party: TurnParty = { agent: target.agent, terminalId };
    const prompt = await writePrompt(env.registry, dirs, {
      task: req.task,
      workflow: req.workflow === 'handoff' ? 'headless' : req.workflow,
      target: party,
      from: req.from,
      payload: req.payload,
    });
    const log = env.log.child({ task: req.task, terminal: terminalId, agent: target.agent, turn: prompt.turn, session: pinned });
    const event = (phase: 'written' | 'delivered' | 'done' | 'failed', more: { reply?: string; error?: string } = {}) =>
      env.emit({ phase, agent: target.agent, terminalId, task: req.task, turn: prompt.turn, artifact: prompt.artifact, ...more });
    event('written');
    const pointer = sanitizeText(
      fillTemplate([profile.delivery.pointer], { file: path.relative(prompt.cwd, prompt.artifact) || prompt.artifact, nonce: makeNonce() })[0]!,
    );
    const launch = await env.launch(target);
    let sessionId = pinned;
    let conversation = !first;
    await env.pane?.stop();
    try {
      const ran = await runHeadless(profile, launch, { sessionId: pinned, first, prompt: pointer, timeoutMs: req.timeoutMs, label: req.label });
      conversation = true;
      if (!pinned && ran.sessionId) {
        sessionId = ran.sessionId;
        const id = ran.sessionId;
        await env.registry.update((d) => ({
          events: d.terminals[terminalId]?.sessionId ? [] : [{ type: 'session-pinned' as const, terminalId, sessionId: id, how: 'discovered' as const }],
          result: null,
        }));
        log.info({ session: id }, 'pinned the session the first headless turn made');
      }
      event('delivered');
      const replyArtifact = await writeReply(env.registry, dirs, { prompt, target: party, from: req.from, text: ran.text, sessionId });
      event('done', { reply: replyArtifact });
      const ms = performance.now() - t0;
      log.info({ first, ms: Math.round(ms) }, 'headless turn finished');
      return {
        task: req.task,
        turn: prompt.turn,
        agent: target.agent,
        terminalId,
        artifact: prompt.artifact,
        pointer,
        delivery: { kind: 'headless', submits: 0, evidence: null, ms },
        reply: { text: ran.text, from: 'headless', artifact: replyArtifact },
        timings: { deliverMs: 0, replyMs: ms, totalMs: ms },
        states: [],
        confirmedBy: 'headless',
      };
    } catch (e) {
      const message = `${(e as Error).message}; the handover file stays at ${prompt.artifact}`;
      log.warn({ err: message }, 'headless turn failed');
      event('failed', { error: message });
      throw e instanceof JaggersError ? new JaggersError(e.code, message) : e;
    } finally {
      await env.pane
        ?.resume(sessionId, conversation)
        .catch((err: Error) => log.error({ err: err.message }, 'could not start the agent again in its pane after a headless turn'));
    }
  });
}
