import { execa } from 'execa';
import path from 'node:path';
import type { Context } from '../context.js';
import { makeNonce, sanitizeText } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { nextTurn, writeArtifact, type HandoverMeta } from '../handover/artifact.js';
import { loadProfile } from '../profiles/load.js';
import { binDir } from '../package-root.js';
import { findTerminal, Registry } from '../sessions/registry.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { fillTemplate } from '../terminals/plan.js';

export interface HeadlessResult {
  task: string;
  turn: number;
  agent: string;
  sessionId: string;
  artifact: string;
  reply: { text: string; artifact: string };
  ms: number;
}

/**
 * A turn run headless in the agent's pinned conversation (`claude --resume <id> -p ...`,
 * `gemini -r <id> -p ...`, `codex exec resume <id> ...`): the same handover file and pointer prompt,
 * the CLI's printed answer as the reply artifact. No pane is involved.
 */
export async function headlessHandoff(ctx: Context, agent: string, payload: string, o: { task: string; from?: string; timeoutS?: number }): Promise<HeadlessResult> {
  const t0 = performance.now();
  const registry = new Registry(ctx.jaggersDir);
  const data = await registry.read();
  const terminal = findTerminal(data, { agent, task: o.task }) ?? findTerminal(data, { agent, task: null });
  if (!terminal) throw new JaggersError('E_AGENT_UNKNOWN', `handoff --headless: no terminal for agent ${JSON.stringify(agent)} in ${ctx.jaggersDir}/sessions.json: run \`jaggers up\` once so its session is pinned`);
  if (!terminal.sessionId) throw new JaggersError('E_NOT_PINNED', `handoff --headless: agent ${agent} (${terminal.terminalId}) has no pinned session yet`);
  const { profile } = await loadProfile(terminal.profile, ctx.jaggersDir);
  if (!profile.session.headlessArgs) throw new JaggersError('E_USAGE', `handoff --headless: profile ${profile.name} has no session.headlessArgs`);
  const spec = ctx.projectFile?.agents.find((a) => a.name === agent);
  const sessionId = terminal.sessionId;
  const { turn, artifact, meta } = await registry.update(async (d) => {
    const turn = await nextTurn(ctx.jaggersDir, o.task);
    const meta: HandoverMeta = {
      task: o.task, workflow: 'headless', turn, sourceAgent: o.from ?? null, sourceSession: null,
      targetAgent: agent, targetSession: sessionId, created: new Date().toISOString(),
    };
    const artifact = await writeArtifact(ctx.jaggersDir, meta, payload);
    const events: NewJournalEvent[] = d.tasks[o.task] ? [] : [{ type: 'task-created', taskId: o.task, workflow: 'headless' }];
    events.push({ type: 'turn', taskId: o.task, agent, terminalId: terminal.terminalId, sessionId, turn, handoverFile: path.relative(ctx.projectRoot, artifact), direction: 'prompt' });
    return { events, result: { turn, artifact, meta } };
  });
  const cwd = path.resolve(ctx.projectRoot, spec?.cwd ?? '.');
  const pointer = sanitizeText(fillTemplate([profile.delivery.pointer], { file: path.relative(cwd, artifact), nonce: makeNonce() })[0]!);
  const args = [...profile.args, ...(spec?.args ?? []), ...fillTemplate(profile.session.headlessArgs, { sessionId, prompt: pointer })];
  const env: NodeJS.ProcessEnv = { ...ctx.env, ...profile.env, ...(spec?.env ?? {}), JAGGERS_TASK_ID: o.task, JAGGERS_AGENT: agent, JAGGERS_TERMINAL_ID: terminal.terminalId };
  env.PATH = `${binDir}${path.delimiter}${spec?.env.PATH ?? profile.env.PATH ?? ctx.env.PATH ?? ''}`;
  const r = await execa(profile.command, args, {
    cwd, env, extendEnv: false, reject: false, stdin: 'ignore',
    timeout: (o.timeoutS ?? 600) * 1000,
  });
  if (r.exitCode !== 0) {
    throw new JaggersError('E_TIMEOUT', `handoff --headless: ${profile.command} exited ${r.exitCode ?? r.signal}: ${String(r.stderr).trim().slice(0, 500)}; the handover file stays at ${artifact}`);
  }
  const text = String(r.stdout).trim();
  const replyArtifact = await registry.update(async () => {
    const replyTurn = await nextTurn(ctx.jaggersDir, o.task);
    const file = await writeArtifact(ctx.jaggersDir, { ...meta, turn: replyTurn, sourceAgent: agent, sourceSession: sessionId, targetAgent: o.from ?? 'user', targetSession: null, created: new Date().toISOString(), replyTo: path.basename(artifact) }, text);
    return { events: [{ type: 'turn' as const, taskId: o.task, agent, terminalId: terminal.terminalId, sessionId, turn: replyTurn, handoverFile: path.relative(ctx.projectRoot, file), direction: 'reply' as const }], result: file };
  });
  return { task: o.task, turn, agent, sessionId, artifact, reply: { text, artifact: replyArtifact }, ms: performance.now() - t0 };
}
