// `message` and `inbox`: agents (and people) write to an agent's inbox; the supervisor delivers each
// message once, in order, when the receiver is ready.
import { withApi } from '../api/connect.js';
import type { InboxView, MessageView } from '../api/types.js';
import type { Context } from '../context.js';
import { givenAgent, newMessageId } from '../ids.js';
import { payloadOf } from './handoff.js';
import { caller } from './jobs.js';
import { clock, renderTable } from './render.js';

export async function message(ctx: Context, to: string, o: { message?: string; file?: string; from?: string }): Promise<MessageView> {
  givenAgent('message', 'agent', to);
  const text = await payloadOf(ctx, o, 'message', true);
  const body = { id: newMessageId(), to, text, ...caller(ctx), ...(o.from ? { from: o.from } : {}) };
  return withApi(ctx, (api) => api.call<MessageView>('POST', '/v1/messages', body), { readOnly: true });
}

export function renderSent(m: MessageView): string {
  return `${m.id} for ${m.toAgent} (${m.to}): stored in ${m.file}; it is delivered when ${m.toAgent} is idle\n`;
}

export async function inbox(ctx: Context, agent: string): Promise<InboxView> {
  const task = ctx.env.JAGGERS_TASK_ID;
  return withApi(
    ctx,
    (api) => api.call<InboxView>('GET', `/v1/terminals/${encodeURIComponent(agent)}/inbox${task ? `?task=${encodeURIComponent(task)}` : ''}`),
    {
      readOnly: true,
    },
  );
}

export function renderInbox(v: InboxView): string {
  const head = `${v.agent} (${v.terminalId}): ${v.pending} pending${v.waiting ? ` - ${v.waiting}` : ''}\n`;
  if (v.messages.length === 0) return head;
  return (
    head +
    renderTable(
      ['MESSAGE', 'FROM', 'STATE', 'SENT', 'DELIVERED', 'FILE'],
      v.messages.map((m) => [m.id, m.fromAgent, m.state === 'delivered' ? `delivered (${m.how})` : m.state, clock(m.created), clock(m.delivered), m.file]),
    )
  );
}
