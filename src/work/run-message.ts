// An inbox message, delivered as a pointer prompt to its file, exactly once: each try is claimed in the
// journal with a fresh nonce before anything is typed; a claim left by a supervisor that died is settled
// first by looking for its nonce in the receiver's transcript and on its screen. After it went in, the
// receiver's turn on it runs to its end before the next item of its queue goes in.
import path from 'node:path';
import { deliverNow } from '../delivery/deliver.js';
import { makeNonce } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import type { MessageRecord } from '../sessions/registry.js';
import { fillTemplate } from '../agents/plan.js';
import { promptWentIn, turnEnd, type TurnEnv } from '../turns/turn.js';
import { cutMessage, MAX_LIMIT_CUTS, type LimitNow } from './limit-wait.js';
import type { Agents, Publish, Store, TerminalEntry } from './ports.js';

/** How long the runner holds the receiver after a message went in, waiting for that turn's end. */
const MESSAGE_TURN_MS = 600_000;

export interface MessageRunPorts {
  env: TurnEnv;
  store: Store;
  hub: Publish;
  agents: Pick<Agents, 'target'>;
  /** The usage limit the pane's machine read (state `limited`): a message whose turn it cut is delivered again after its reset. */
  limit?(paneId: string): LimitNow | null | undefined;
}

export function publishMessage(hub: Publish, m: MessageRecord, state: string): void {
  hub.publish('message', { id: m.id, state, to: m.to, toAgent: m.toAgent, from: m.from, fromAgent: m.fromAgent, job: m.job, file: m.file });
}

/** One try at delivering `m`; throws to be tried again (the claim stays, and is settled first next time). */
export async function runMessage(p: MessageRunPorts, given: MessageRecord, e: TerminalEntry | undefined, signal: AbortSignal): Promise<void> {
  const { env, store } = p;
  if (!e) throw new JaggersError('E_PANE_GONE', `message ${given.id}: ${given.toAgent} has no window open`);
  const target = p.agents.target(e, `message ${given.id}`);
  const data = store.data;
  const m = data.messages[given.id] ?? given;
  if (m.state === 'delivered') return;
  const term = data.terminals[m.to];
  const cwd = term?.cwd ?? env.projectRoot;
  const ref = (nonce: string) => ({ nonce, cwd, sessionId: term?.sessionId ?? null, artifact: path.resolve(env.projectRoot, m.file) });
  if (m.state === 'claimed' && m.nonce) {
    const found = await promptWentIn(env, target, ref(m.nonce));
    if (found) return void (await delivered(p, m, found));
  }
  const nonce = makeNonce();
  const claimed = await store.update((d) => {
    const cur = d.messages[m.id];
    if (!cur || cur.state === 'delivered') return { events: [], result: false };
    return { events: [{ type: 'message-claimed', messageId: m.id, nonce }], result: true };
  });
  if (!claimed || signal.aborted) return;
  const file = path.resolve(env.projectRoot, m.file);
  const pointer = fillTemplate([target.profile.delivery.pointer], { file: path.relative(cwd, file) || file, nonce })[0]!;
  const turnsBefore = env.watch.turns(target.paneId);
  const d = await deliverNow(env.io, env.watch, target, pointer, { nonce, readyTimeoutMs: 30_000 });
  if (d.kind !== 'delivered') {
    const why = d.kind === 'not-ready' ? `not ready (${d.status})` : d.kind === 'timeout' ? 'the prompt was not seen taken' : `pane gone: ${d.error}`;
    throw new JaggersError('E_TIMEOUT', `message ${m.id} to ${m.toAgent}: ${why}`);
  }
  await delivered(p, m, d.evidence === 'unverified' ? 'unverified' : 'verified');
  // The receiver's turn on it runs to its end before the next message or job goes in.
  const end = await turnEnd(env, target, ref(nonce), { timeoutMs: MESSAGE_TURN_MS, label: `message ${m.id}`, signal }, turnsBefore).catch((err: Error) => {
    if (!signal.aborted) env.log.warn({ agent: m.toAgent, message: m.id, err: err.message }, 'did not see the end of the turn a message started');
    return null;
  });
  // The CLI showed its usage limit instead of an answer: the message waits and goes in again after the reset.
  if (end?.limit) {
    const cut = await cutMessage(p.store, m, target.agent, end.limit, p.limit?.(target.paneId) ?? null);
    if (cut) {
      env.log.info({ agent: m.toAgent, message: m.id, limit: end.limit }, 'a message turn cut by a usage limit; the message waits for the reset');
      publishMessage(p.hub, { ...cut, state: 'pending' }, 'pending');
    } else
      env.log.warn(
        { agent: m.toAgent, message: m.id, limit: end.limit },
        `a message turn cut by a usage limit: it stays delivered (cut ${MAX_LIMIT_CUTS} times, or gone from the registry)`,
      );
  }
}

async function delivered(p: MessageRunPorts, m: MessageRecord, how: NonNullable<MessageRecord['how']>): Promise<void> {
  const rec = await p.store.update((d) => {
    const cur = d.messages[m.id];
    if (!cur || cur.state === 'delivered') return { events: [], result: null };
    return { events: [{ type: 'message-delivered', messageId: m.id, how }], result: cur };
  });
  if (!rec) return;
  p.env.log.info({ message: m.id, agent: m.toAgent, from: m.fromAgent, how }, 'message delivered');
  publishMessage(p.hub, { ...rec, state: 'delivered', how }, 'delivered');
}
