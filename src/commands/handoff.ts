// `handoff`: hand work to an agent through the supervisor (a work item in the agent's queue: it writes
// the handover file, types the pointer, waits for the turn and captures the reply), showing progress on
// stderr meanwhile.
import path from 'node:path';
import { withApi } from '../api/connect.js';
import type { HandoffResult } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { readGivenFile } from '../fs/given-file.js';
import { DEFAULT_WINDOW_SIZE, givenAgent, newJobId, newTaskId } from '../ids.js';
import type { Terminal } from '../output.js';
import { Progress } from './progress.js';

export interface HandoffOptions {
  message?: string;
  file?: string;
  from?: string;
  task?: string;
  timeoutS?: number;
  wait: boolean;
  headless?: boolean;
  workflow?: string;
}

export { newTaskId };

/** The front matter of a handover artifact: handing one on passes its body, not its old header. */
function artifactBody(text: string): string {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  return m && /^task: /m.test(m[1]!) && /^turn: /m.test(m[1]!) ? m[2]! : text;
}

export async function payloadOf(ctx: Context, o: Pick<HandoffOptions, 'message' | 'file'>, what = 'handoff', raw = false): Promise<string> {
  if ((o.message === undefined) === (o.file === undefined)) throw new JaggersError('E_USAGE', `${what}: give exactly one of --message TEXT or --file PATH`);
  if (o.message !== undefined) {
    if (o.message.trim() === '') throw new JaggersError('E_USAGE', `${what} --message: the message is empty`);
    return o.message;
  }
  const text = await readGivenFile(ctx.cwd, o.file!, `${what} --file`);
  if (text.trim() === '') throw new JaggersError('E_USAGE', `${what} --file ${o.file}: ${path.resolve(ctx.cwd, o.file!)} is empty`);
  return raw ? text : artifactBody(text);
}

/**
 * One turn through the supervisor, as a work item this command follows (progress, when `progress` is
 * given, goes to its stderr). The item has an id chosen here: a supervisor restarted meanwhile is asked
 * again by that id (nothing is recorded twice), and `signal` (Ctrl-C) stops only the following: the
 * handoff goes on, and the error says how to follow it.
 */
export async function handoff(ctx: Context, agent: string, o: HandoffOptions, progress?: Terminal, signal?: AbortSignal): Promise<HandoffResult> {
  givenAgent('handoff', 'agent', agent);
  const message = await payloadOf(ctx, o);
  const id = newJobId();
  const body = {
    id,
    agent,
    message,
    task: o.task ?? ctx.env.JAGGERS_TASK_ID ?? newTaskId(),
    wait: o.wait,
    headless: o.headless ?? false,
    // The sender: --from, else the agent whose pane runs this command (a person's elsewhere).
    ...(o.from ? { from: o.from } : ctx.env.JAGGERS_TERMINAL_ID ? { fromTerminal: ctx.env.JAGGERS_TERMINAL_ID } : {}),
    ...(o.timeoutS ? { timeout: o.timeoutS } : {}),
    ...(o.workflow ? { workflow: o.workflow } : {}),
  };
  // A headless turn needs no agent window: with no session running, one is started for the supervisor alone.
  if (body.headless) {
    const { ensureSession } = await import('../api/session.js');
    await ensureSession(ctx, DEFAULT_WINDOW_SIZE);
  }
  const goesOn = () =>
    new JaggersError('E_INTERRUPTED', `handoff ${id} goes on in the supervisor; follow it with \`jaggers wait ${id}\`, then \`jaggers result ${id}\``);
  const shown = progress && !body.headless ? new Progress(progress, agent) : null;
  const events = new AbortController();
  const stopEvents = () => events.abort();
  signal?.addEventListener('abort', stopEvents, { once: true });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withApi(
          ctx,
          async (api) => {
            if (shown)
              void api
                .events(`/v1/events?agent=${encodeURIComponent(agent)}&types=state,turn`, (e) => shown.event(e), { signal: events.signal })
                .catch(() => {});
            return api.call<HandoffResult>('POST', '/v1/handoffs', body, signal ? { signal } : {});
          },
          // Sent again when the supervisor dropped it: the id makes that safe.
          { readOnly: true },
        );
      } catch (e) {
        if (signal?.aborted) throw goesOn();
        const dropped = e instanceof JaggersError && e.code === 'E_SUPERVISOR_DOWN';
        if (!dropped || attempt >= 3) throw e;
      }
    }
  } finally {
    signal?.removeEventListener('abort', stopEvents);
    events.abort();
    shown?.stop();
  }
}
