// `capture` and `send`: an agent's screen, and text typed into its pane through the supervisor's queue.
import { withAgentApi } from '../api/hosts.js';
import type { AnswerResult, InputResult, ScreenView, TerminalDetail } from '../api/types.js';
import type { Context } from '../context.js';
import { JaggersError } from '../errors.js';
import { givenAgent, newJobId } from '../ids.js';

export async function capture(ctx: Context, agent: string, opts: { ansi?: boolean; history?: number }): Promise<ScreenView> {
  const q = new URLSearchParams();
  if (opts.ansi) q.set('ansi', '1');
  if (opts.history) q.set('history', String(opts.history));
  const qs = q.size ? `?${q}` : '';
  return withAgentApi(ctx, agent, (api) => api.call<ScreenView>('GET', `/v1/terminals/${encodeURIComponent(agent)}/screen${qs}`), { readOnly: true });
}

/**
 * Answer the menu an agent waits on. The question is read first and sent along, so the supervisor
 * refuses if the screen shows another one by the time it acts.
 */
export async function answer(ctx: Context, agent: string, choice: string): Promise<AnswerResult> {
  const at = `/v1/terminals/${encodeURIComponent(agent)}`;
  const seen = await withAgentApi(ctx, agent, (api) => api.call<TerminalDetail>('GET', at), { readOnly: true });
  const expect = seen.question && seen.question.choices.length ? seen.question : undefined;
  return withAgentApi(ctx, agent, (api) => api.call<AnswerResult>('POST', `${at}/answer`, { choice, ...(expect ? { expect } : {}) }));
}

/**
 * Type text and press Enter after what the agent's queue holds; resolves once the screen shows the agent
 * took it (busy, an echo, or the text gone from the input box). The send is a work item with an id
 * chosen here: sent again after a dropped connection, it is typed once.
 */
export async function send(ctx: Context, agent: string, text: string): Promise<InputResult> {
  givenAgent('send', 'agent', agent);
  if (text.trim() === '')
    throw new JaggersError('E_USAGE', `send: the text to type is empty (${JSON.stringify(text)}); e.g. \`jaggers send <agent> "explain src/cli.ts"\``);
  const body = { id: newJobId(), text };
  return withAgentApi(ctx, agent, (api) => api.call<InputResult>('POST', `/v1/terminals/${encodeURIComponent(agent)}/input`, body), { readOnly: true });
}
