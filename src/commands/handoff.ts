// `handoff`: hand work to an agent through the supervisor (which writes the handover file, types the
// pointer, waits for the turn and captures the reply), showing progress on stderr meanwhile.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { withApi } from '../api/connect.js';
import type { HandoffResult } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { newTaskId } from '../ids.js';
import type { Output } from '../output.js';
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
  const file = path.resolve(ctx.cwd, o.file!);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new JaggersError('E_FILE', `${what} --file ${o.file}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (text.trim() === '') throw new JaggersError('E_USAGE', `${what} --file ${o.file}: ${file} is empty`);
  return raw ? text : artifactBody(text);
}

/** One turn through the supervisor; progress (when `progress` is given) goes to its stderr. */
export async function handoff(ctx: Context, agent: string, o: HandoffOptions, progress?: Output): Promise<HandoffResult> {
  const message = await payloadOf(ctx, o);
  const body = {
    agent,
    message,
    task: o.task ?? ctx.env.JAGGERS_TASK_ID ?? newTaskId(),
    wait: o.wait,
    headless: o.headless ?? false,
    ...(o.from ? { from: o.from } : {}),
    ...(o.timeoutS ? { timeout: o.timeoutS } : {}),
    ...(o.workflow ? { workflow: o.workflow } : {}),
  };
  if (body.headless) {
    try {
      return await withApi(ctx, (api) => api.call<HandoffResult>('POST', '/v1/handoffs', body));
    } catch (e) {
      if (!(e instanceof JaggersError && e.code === 'E_SESSION_MISSING')) throw e;
      // The session is down: nothing live to coordinate with, so the turn runs here.
      const { headlessLocally } = await import('./headless-local.js');
      return headlessLocally(ctx, body);
    }
  }
  return withApi(ctx, async (api) => {
    if (!progress) return api.call<HandoffResult>('POST', '/v1/handoffs', body);
    const shown = new Progress(progress, agent);
    const stop = new AbortController();
    const events = api.events(`/v1/events?agent=${encodeURIComponent(agent)}&types=state,turn`, (e) => shown.event(e), { signal: stop.signal }).catch(() => {});
    try {
      return await api.call<HandoffResult>('POST', '/v1/handoffs', body);
    } finally {
      stop.abort();
      await events;
      shown.stop();
    }
  });
}
