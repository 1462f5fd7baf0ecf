// A turn's files: the handover artifact written before the prompt, the reply artifact after it, both
// recorded in the journal under the registry's lock (so turn numbers of a task are never taken twice).
import path from 'node:path';
import { nextTurn, writeArtifact, type HandoverMeta } from '../handover/artifact.js';
import type { NewJournalEvent } from '../sessions/events.js';
import type { RegistryData, RegistryStore } from '../sessions/registry.js';

export interface TurnParty {
  agent: string;
  terminalId: string | null;
}

export interface PromptArtifact {
  turn: number;
  artifact: string;
  meta: HandoverMeta;
  /** The folder the target agent runs in (from the registry): the pointer's path is relative to it. */
  cwd: string;
}

function sessionOf(data: RegistryData, terminalId: string | null): string | null {
  return (terminalId && data.terminals[terminalId]?.sessionId) || null;
}

/** Allocate the task's next turn and write its handover file; journal the task and the turn. */
export function writePrompt(
  registry: RegistryStore,
  dirs: { jaggersDir: string; projectRoot: string },
  o: {
    task: string;
    workflow: string;
    target: TurnParty;
    from: TurnParty | null;
    payload: string;
    /** More events for the same journal entry (the work item's `starting`, naming this file). */
    extra?: (prompt: PromptArtifact, data: RegistryData) => NewJournalEvent[];
  },
): Promise<PromptArtifact> {
  return registry.update(async (d) => {
    const turn = await nextTurn(dirs.jaggersDir, o.task);
    const meta: HandoverMeta = {
      task: o.task,
      workflow: o.workflow,
      turn,
      sourceAgent: o.from?.agent ?? null,
      sourceSession: sessionOf(d, o.from?.terminalId ?? null),
      targetAgent: o.target.agent,
      targetSession: sessionOf(d, o.target.terminalId),
      created: new Date().toISOString(),
    };
    const artifact = await writeArtifact(dirs.jaggersDir, meta, o.payload);
    const events: NewJournalEvent[] = [];
    const task = Object.hasOwn(d.tasks, o.task) ? d.tasks[o.task] : undefined;
    if (!task) events.push({ type: 'task-created', taskId: o.task, workflow: meta.workflow });
    const tid = o.target.terminalId;
    if (tid && d.terminals[tid]) {
      if (!task || !Object.hasOwn(task.agents, o.target.agent) || task.agents[o.target.agent]?.terminalId !== tid)
        events.push({ type: 'task-agent', taskId: o.task, agent: o.target.agent, terminalId: tid });
      events.push({
        type: 'turn',
        taskId: o.task,
        agent: o.target.agent,
        terminalId: tid,
        sessionId: meta.targetSession,
        turn,
        handoverFile: path.relative(dirs.projectRoot, artifact),
        direction: 'prompt',
      });
    }
    const cwd = (tid && d.terminals[tid]?.cwd) || dirs.projectRoot;
    const result = { turn, artifact, meta, cwd };
    if (o.extra) events.push(...o.extra(result, d));
    return { events, result };
  });
}

/** Write the reply as the task's next artifact, addressed back to whoever handed the work over. */
export function writeReply(
  registry: RegistryStore,
  dirs: { jaggersDir: string; projectRoot: string },
  o: {
    prompt: PromptArtifact;
    target: TurnParty;
    from: TurnParty | null;
    text: string;
    sessionId?: string | null;
    /** More events for the same journal entry (a job's end that this reply is the result of). */
    extra?: (file: string, data: RegistryData) => Promise<NewJournalEvent[]>;
  },
): Promise<string> {
  const { meta } = o.prompt;
  const sessionId = o.sessionId === undefined ? meta.targetSession : o.sessionId;
  return registry.update(async (d) => {
    const replyTurn = await nextTurn(dirs.jaggersDir, meta.task);
    const file = await writeArtifact(
      dirs.jaggersDir,
      {
        ...meta,
        turn: replyTurn,
        sourceAgent: o.target.agent,
        sourceSession: sessionId,
        targetAgent: o.from?.agent ?? 'user',
        targetSession: meta.sourceSession,
        created: new Date().toISOString(),
        replyTo: path.basename(o.prompt.artifact),
      },
      o.text,
    );
    const tid = o.target.terminalId;
    const events: NewJournalEvent[] =
      tid && d.terminals[tid]
        ? [
            {
              type: 'turn',
              taskId: meta.task,
              agent: o.target.agent,
              terminalId: tid,
              sessionId,
              turn: replyTurn,
              handoverFile: path.relative(dirs.projectRoot, file),
              direction: 'reply',
            },
          ]
        : [];
    if (o.extra) events.push(...(await o.extra(file, d)));
    return { events, result: file };
  });
}
