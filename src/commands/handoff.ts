import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { coalesced } from '../coalesced.js';
import type { Context } from '../context.js';
import { deliverNow, withPaneLock, type Delivered } from '../delivery/deliver.js';
import { makeNonce } from '../delivery/sanitize.js';
import { PaneWatcher } from '../detect/pane-watcher.js';
import { homeOfPid } from '../detect/state-file.js';
import { JaggersError } from '../errors.js';
import { nextTurn, parseArtifact, writeArtifact, type HandoverMeta } from '../handover/artifact.js';
import { captureReply, turnConfirmed } from '../handover/reply.js';
import { loadProfile } from '../profiles/load.js';
import { fillTemplate } from '../terminals/plan.js';
import { discoverPin } from '../terminals/discover-pin.js';
import { Registry, type RegistryData } from '../sessions/registry.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { listPanes, type PaneInfo } from '../tmux/commands.js';
import { openCommandControl, openControl } from '../tmux/connect.js';
import { checkTmux } from '../tmux/version.js';

export interface HandoffOptions {
  message?: string;
  file?: string;
  from?: string;
  task?: string;
  timeoutS?: number;
  wait: boolean;
  workflow?: string;
}

export interface HandoffResult {
  task: string;
  turn: number;
  agent: string;
  artifact: string;
  pointer: string;
  delivery: Delivered;
  reply: { text: string; from: 'transcript' | 'screen'; artifact: string } | null;
  timings: { deliverMs: number; replyMs: number | null; totalMs: number };
  states: string[];
}

export async function payloadOf(ctx: Context, o: Pick<HandoffOptions, 'message' | 'file'>): Promise<string> {
  if ((o.message === undefined) === (o.file === undefined)) throw new JaggersError('E_USAGE', 'handoff: give exactly one of --message TEXT or --file PATH');
  if (o.message !== undefined) return o.message;
  const file = path.resolve(ctx.projectRoot, o.file!);
  try {
    const text = await readFile(file, 'utf8');
    // Handing on an earlier artifact (a reply): its body is the work; its header stays with it.
    const parsed = parseArtifact(text);
    return 'task' in parsed.meta && 'turn' in parsed.meta ? parsed.body : text;
  } catch (e) {
    throw new JaggersError('E_FILE', `handoff --file ${o.file}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function sessionOf(data: RegistryData, pane: PaneInfo | undefined): string | null {
  return (pane?.terminalId && data.terminals[pane.terminalId]?.sessionId) || null;
}

export function newTaskId(): string {
  return `t-${randomBytes(4).toString('hex')}`;
}

/**
 * Write the payload to a handover file, type a one-line pointer to it into the target's pane, verify
 * the agent took it, then (unless --no-wait) wait for the finished turn and write its reply as the
 * next turn's artifact.
 */
export async function handoff(ctx: Context, agent: string, o: HandoffOptions): Promise<HandoffResult> {
  const t0 = performance.now();
  const payload = await payloadOf(ctx, o);
  await checkTmux(ctx.server.bin, ctx.server.env);
  const events = await openControl(ctx.server, ctx.session);
  const client = await openCommandControl(ctx.server, ctx.session);
  const watcher = new PaneWatcher(events, { commands: client });
  const states: string[] = [];
  try {
    const panes = await listPanes(client, ctx.session);
    const task = o.task ?? ctx.env.JAGGERS_TASK_ID ?? newTaskId();
    // Work routed to a task goes to the agent's window of that task when it has one.
    const byAgent = (name: string) => panes.find((p) => p.agent === name && p.task === task) ?? panes.find((p) => p.agent === name && p.task === null) ?? panes.find((p) => p.agent === name);
    const target = byAgent(agent);
    if (!target) {
      const known = panes.map((p) => p.agent).filter(Boolean).join(', ') || 'none';
      throw new JaggersError('E_AGENT_UNKNOWN', `handoff: unknown agent ${JSON.stringify(agent)} in session ${ctx.session}: agents are ${known}`);
    }
    const source = o.from ? byAgent(o.from) : undefined;
    if (o.from && !source) throw new JaggersError('E_AGENT_UNKNOWN', `handoff --from: unknown agent ${JSON.stringify(o.from)} in session ${ctx.session}`);
    if (target.dead) throw new JaggersError('E_PANE_GONE', `handoff: agent ${agent}'s pane ${target.paneId} is dead (exit status ${target.deadStatus}); run \`jaggers up\` to restart it`);
    const { profile } = await loadProfile(target.profile ?? '', ctx.jaggersDir);
    const registry = new Registry(ctx.jaggersDir);
    await watcher.start();
    watcher.onChange((c) => {
      if (c.pane.paneId === target.paneId) states.push(c.status);
    });
    watcher.watch({ paneId: target.paneId, windowId: target.windowId, agent, profile, pid: target.panePid });
    // Hold the pane from turn allocation on, so turns reach a pane in turn order.
    const lockDir = path.join(ctx.jaggersDir, 'locks');
    // A waiting handoff keeps the pane until its reply is captured: one turn at a time per pane.
    return await withPaneLock(target.paneId, lockDir, async (): Promise<HandoffResult> => {
      // Turn numbers and artifacts are allocated under the registry's lock, so concurrent handoffs in
      // one task never take the same turn.
      const { turn, artifact, meta, cwd } = await registry.update(async (d) => {
        const turn = await nextTurn(ctx.jaggersDir, task);
        const meta: HandoverMeta = {
          task,
          workflow: o.workflow ?? 'handoff',
          turn,
          sourceAgent: o.from ?? null,
          sourceSession: sessionOf(d, source),
          targetAgent: agent,
          targetSession: sessionOf(d, target),
          created: new Date().toISOString(),
        };
        const artifact = await writeArtifact(ctx.jaggersDir, meta, payload);
        const events: NewJournalEvent[] = [];
        if (!d.tasks[task]) events.push({ type: 'task-created', taskId: task, workflow: meta.workflow });
        if (target.terminalId) {
          if (d.tasks[task]?.agents[agent]?.terminalId !== target.terminalId) events.push({ type: 'task-agent', taskId: task, agent, terminalId: target.terminalId });
          events.push({ type: 'turn', taskId: task, agent, terminalId: target.terminalId, sessionId: meta.targetSession, turn, handoverFile: path.relative(ctx.projectRoot, artifact), direction: 'prompt' });
        }
        // The folder the agent runs in: where CLIs such as claude file its transcript.
        const cwd = (target.terminalId && d.terminals[target.terminalId]?.cwd) || ctx.projectRoot;
        return { events, result: { turn, artifact, meta, cwd } };
      });

      const nonce = makeNonce();
      // The path as the agent sees it from its own folder.
      const pointer = fillTemplate([profile.delivery.pointer], { file: path.relative(cwd, artifact) || artifact, nonce })[0]!;
      const turnsBefore = watcher.turns(target.paneId);
      const delivery = await deliverNow(client, watcher, { paneId: target.paneId, agent, profile }, pointer, {
        lockDir,
        nonce,
        ...(o.timeoutS ? { readyTimeoutMs: o.timeoutS * 1000 } : {}),
      });
      const deliverMs = performance.now() - t0;
      if (delivery.kind !== 'delivered') {
        const why =
          delivery.kind === 'not-ready' ? `${agent} never became ready (${delivery.status})`
          : delivery.kind === 'timeout' ? `${agent} did not take the prompt within ${profile.delivery.verifyTimeoutMs} ms${delivery.stillInInput ? ' (it is still in the input box)' : ''}`
          : `${agent}'s pane went away: ${delivery.error}`;
        throw new JaggersError(delivery.kind === 'pane-gone' ? 'E_PANE_GONE' : 'E_TIMEOUT', `handoff: ${why}; the handover file stays at ${artifact}`);
      }
      const result: HandoffResult = { task, turn, agent, artifact, pointer, delivery, reply: null, timings: { deliverMs, replyMs: null, totalMs: deliverMs }, states };
      if (!o.wait) return result;

      const timeoutMs = (o.timeoutS ?? 600) * 1000;
      const home = target.panePid ? await homeOfPid(target.panePid, os.homedir()) : os.homedir();
      const replySource = { client, paneId: target.paneId, profile, nonce, sessionId: meta.targetSession, home, cwd };
      await waitForTurn(watcher, target.paneId, turnsBefore, timeoutMs, agent, artifact, () => turnConfirmed(replySource));
      const replyStart = performance.now();
      const reply = await captureReply(replySource);
      const replyArtifact = await registry.update(async () => {
        const replyTurn = await nextTurn(ctx.jaggersDir, task);
        const file = await writeArtifact(
          ctx.jaggersDir,
          { ...meta, turn: replyTurn, sourceAgent: agent, sourceSession: meta.targetSession, targetAgent: o.from ?? 'user', targetSession: meta.sourceSession, created: new Date().toISOString(), replyTo: path.basename(artifact) },
          reply.text,
        );
        const events: NewJournalEvent[] = target.terminalId
          ? [{ type: 'turn', taskId: task, agent, terminalId: target.terminalId, sessionId: meta.targetSession, turn: replyTurn, handoverFile: path.relative(ctx.projectRoot, file), direction: 'reply' }]
          : [];
        return { events, result: file };
      });
      // A CLI that could not be given a session id up front has made one by now: pin it.
      if (target.terminalId && !meta.targetSession) await discoverPin(registry, target.terminalId, profile, target.panePid, home);
      const now = performance.now();
      return { ...result, reply: { ...reply, artifact: replyArtifact }, timings: { deliverMs, replyMs: now - replyStart, totalMs: now - t0 } };
    });
  } finally {
    watcher.stop();
    await client.close();
    await events.close();
  }
}

/**
 * Until the pane's turn is done and `confirmed` says it was our prompt's turn (not an old summary).
 * Asked again on every status change and new screen of the pane, and, while the pane is done but the
 * answer is no (a transcript written a moment after the screen settled), after a growing pause.
 */
function waitForTurn(
  watcher: PaneWatcher,
  paneId: string,
  turnsBefore: number,
  timeoutMs: number,
  agent: string,
  artifact: string,
  confirmed: () => Promise<boolean>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let pause = 100;
    let retry: NodeJS.Timeout | undefined;
    let finished = false;
    const check = coalesced(async () => {
      if (finished) return;
      const status = watcher.status(paneId);
      if (status === 'exited') return finish(new JaggersError('E_PANE_GONE', `handoff: ${agent}'s pane died before replying; the handover file stays at ${artifact}`));
      if (status !== 'done' || watcher.turns(paneId) <= turnsBefore) return;
      clearTimeout(retry);
      if (await confirmed().catch(() => false)) return finish(null);
      retry = setTimeout(() => void check(), pause);
      pause = Math.min(pause * 2, 2000);
    });
    const timer = setTimeout(
      () => finish(new JaggersError('E_TIMEOUT', `handoff: ${agent} did not finish its turn within ${timeoutMs / 1000} s (now ${watcher.status(paneId)}); the handover file stays at ${artifact}`)),
      timeoutMs,
    );
    const offChange = watcher.onChange((c) => void (c.pane.paneId === paneId && check()));
    const offScreen = watcher.onScreen((id) => void (id === paneId && check()));
    function finish(e: Error | null): void {
      finished = true;
      clearTimeout(timer);
      clearTimeout(retry);
      offChange();
      offScreen();
      if (e) reject(e);
      else resolve();
    }
    void check();
  });
}
