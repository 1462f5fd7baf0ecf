// The inbox: messages stored durably (file fsynced, then journaled) before `message` returns, and
// delivered by the dispatcher as pointer prompts, one at a time, exactly once. Each try is claimed in
// the journal with a fresh nonce before anything is typed; a claim left by a supervisor that died is
// settled first by looking for its nonce in the receiver's transcript and on its screen.
import path from 'node:path';
import type { InboxView, MessageView } from '../api/types.js';
import { deliverNow } from '../delivery/deliver.js';
import { makeNonce } from '../delivery/sanitize.js';
import { JaggersError } from '../errors.js';
import { findTerminal, type MessageRecord, type RegistryData } from '../sessions/registry.js';
import { fillTemplate } from '../terminals/plan.js';
import { paneIO } from '../tmux/pane-io.js';
import { promptWentIn, turnEnd } from '../turns/turn.js';
import type { Supervisor } from './core.js';
import type { TerminalEntry } from '../agents/table.js';
import { messageFile, MESSAGE_ID, newMessageId, renderMessage, writeDurable } from '../work/files.js';

export interface MessageRequest {
  id?: string;
  to: string;
  text: string;
  /** The sender by agent name, or by terminal id (the caller's JAGGERS_TERMINAL_ID). */
  from?: string;
  fromTerminal?: string;
  task?: string;
}

/** How long the dispatcher holds a receiver's pane after a message went in, waiting for that turn's end. */
const MESSAGE_TURN_MS = 600_000;

export interface Party {
  terminalId: string;
  agent: string;
}

/** An agent (by name, in `task` or the default team) or a terminal id, live in tmux or known to the registry. */
export function resolveParty(s: Supervisor, data: RegistryData, nameOrId: string, task: string | null): Party | null {
  const live = s.table.find(nameOrId, task);
  if (live?.pane.terminalId) return { terminalId: live.pane.terminalId, agent: live.pane.agent! };
  const byId = data.terminals[nameOrId];
  if (byId) return { terminalId: byId.terminalId, agent: byId.agent };
  const rec = findTerminal(data, { agent: nameOrId, task }) ?? (task ? findTerminal(data, { agent: nameOrId, task: null }) : null);
  return rec ? { terminalId: rec.terminalId, agent: rec.agent } : null;
}

/** Who sends (a message) or assigns (a job): `from` by name, else the caller's terminal id, else a person (null). */
export function resolveSender(s: Supervisor, data: RegistryData, req: { from?: string; fromTerminal?: string }, task: string | null, op: string): Party | null {
  if (req.from !== undefined) {
    const p = resolveParty(s, data, req.from, task);
    if (!p) throw new JaggersError('E_AGENT_UNKNOWN', `${op} --from: unknown agent ${JSON.stringify(req.from)}: agents are ${knownAgents(s, data)}`);
    return p;
  }
  if (req.fromTerminal === undefined) return null;
  const t = data.terminals[req.fromTerminal];
  if (!t)
    throw new JaggersError('E_AGENT_UNKNOWN', `${op}: the caller's JAGGERS_TERMINAL_ID ${JSON.stringify(req.fromTerminal)} is not a terminal of this project`);
  return { terminalId: t.terminalId, agent: t.agent };
}

export function knownAgents(s: Supervisor, data: RegistryData): string {
  const names = new Set([...s.table.list().map((e) => e.pane.agent!), ...Object.values(data.terminals).map((t) => t.agent)]);
  return [...names].sort().join(', ') || 'none';
}

export class Inbox {
  constructor(
    private readonly s: Supervisor,
    private readonly kick: (terminalId: string) => void,
    private readonly waiting: (terminalId: string) => string | null,
  ) {}

  /** Store a message for `to`; returns once it is on disk and in the journal. The same `id` twice stores it once. */
  async send(req: MessageRequest): Promise<MessageView> {
    const s = this.s;
    if (req.id !== undefined && !MESSAGE_ID.test(req.id))
      throw new JaggersError('E_USAGE', `message id must look like m-0123abcd, got ${JSON.stringify(req.id)}`);
    if (req.text.trim() === '') throw new JaggersError('E_USAGE', 'message: the text is empty');
    const data = await s.cache.get();
    const known = req.id ? data.messages[req.id] : undefined;
    if (known) return known;
    const task = req.task ?? null;
    const to = resolveParty(s, data, req.to, task);
    if (!to) throw new JaggersError('E_AGENT_UNKNOWN', `message: unknown agent ${JSON.stringify(req.to)}: agents are ${knownAgents(s, data)}`);
    const from = resolveSender(s, data, req, task, 'message');
    const id = req.id ?? newMessageId();
    const file = messageFile(s.d.ctx.jaggersDir, id);
    const sent = new Date().toISOString();
    await writeDurable(
      file,
      renderMessage({ id, fromAgent: from?.agent ?? 'user', from: from?.terminalId ?? null, toAgent: to.agent, to: to.terminalId, sent, job: null }, req.text),
    );
    const m = await s.registry.update((d) => {
      if (d.messages[id]) return { events: [], result: d.messages[id] };
      return {
        events: [
          {
            type: 'message-created',
            messageId: id,
            to: to.terminalId,
            toAgent: to.agent,
            from: from?.terminalId ?? null,
            fromAgent: from?.agent ?? 'user',
            file: path.relative(s.d.ctx.projectRoot, file),
            bytes: Buffer.byteLength(req.text),
            job: null,
          },
        ],
        result: null,
      };
    });
    const rec = m ?? (await s.cache.get()).messages[id]!;
    if (!m) this.published(rec, 'queued');
    this.kick(to.terminalId);
    return rec;
  }

  published(m: MessageRecord, state: string): void {
    this.s.d.hub.publish('message', { id: m.id, state, to: m.to, toAgent: m.toAgent, from: m.from, fromAgent: m.fromAgent, job: m.job, file: m.file });
  }

  async list(agent: string, task?: string | null): Promise<InboxView> {
    const data = await this.s.cache.get();
    const p = resolveParty(this.s, data, agent, task ?? null);
    if (!p) throw new JaggersError('E_AGENT_UNKNOWN', `inbox: unknown agent ${JSON.stringify(agent)}: agents are ${knownAgents(this.s, data)}`);
    const messages = Object.values(data.messages).filter((m) => m.to === p.terminalId);
    const pending = messages.filter((m) => m.state !== 'delivered').length;
    return { agent: p.agent, terminalId: p.terminalId, waiting: pending ? (this.waiting(p.terminalId) ?? 'about to be delivered') : null, pending, messages };
  }

  /** One try at delivering `m` (the dispatcher holds the receiver's pane); throws to be tried again later. */
  async deliverMessage(given: MessageRecord, e: TerminalEntry): Promise<void> {
    const s = this.s;
    const env = s.turnEnv();
    const target = s.target(e, `message ${given.id}`);
    const data = await s.cache.get();
    const m = data.messages[given.id] ?? given;
    if (m.state === 'delivered') return;
    const term = data.terminals[m.to];
    const cwd = term?.cwd ?? s.d.ctx.projectRoot;
    const ref = (nonce: string) => ({ nonce, cwd, sessionId: term?.sessionId ?? null, artifact: path.resolve(s.d.ctx.projectRoot, m.file) });
    if (m.state === 'claimed' && m.nonce) {
      const found = await promptWentIn(env, target, ref(m.nonce));
      if (found) {
        await this.delivered(m, found);
        return;
      }
    }
    const nonce = makeNonce();
    const claimed = await s.registry.update((d) => {
      const cur = d.messages[m.id];
      if (!cur || cur.state === 'delivered') return { events: [], result: false };
      return { events: [{ type: 'message-claimed', messageId: m.id, nonce }], result: true };
    });
    if (!claimed) return;
    const file = path.resolve(s.d.ctx.projectRoot, m.file);
    const pointer = fillTemplate([target.profile.delivery.pointer], { file: path.relative(cwd, file) || file, nonce })[0]!;
    const turnsBefore = s.watcher.turns(target.paneId);
    const d = await deliverNow(paneIO(s.d.commands), s.watcher, target, pointer, { nonce, readyTimeoutMs: 30_000 });
    if (d.kind !== 'delivered') {
      const why = d.kind === 'not-ready' ? `not ready (${d.status})` : d.kind === 'timeout' ? 'the prompt was not seen taken' : `pane gone: ${d.error}`;
      throw new JaggersError('E_TIMEOUT', `message ${m.id} to ${m.toAgent}: ${why}`);
    }
    await this.delivered(m, d.evidence === 'unverified' ? 'unverified' : 'verified');
    // The receiver's turn on it runs to its end before the next message or job goes in.
    await turnEnd(env, target, ref(nonce), { timeoutMs: MESSAGE_TURN_MS, label: `message ${m.id}`, signal: s.stopping.signal }, turnsBefore).catch(
      (err: Error) => s.d.log.warn({ agent: m.toAgent, message: m.id, err: err.message }, 'did not see the end of the turn a message started'),
    );
  }

  private async delivered(m: MessageRecord, how: NonNullable<MessageRecord['how']>): Promise<void> {
    const rec = await this.s.registry.update((d) => {
      const cur = d.messages[m.id];
      if (!cur || cur.state === 'delivered') return { events: [], result: null };
      return { events: [{ type: 'message-delivered', messageId: m.id, how }], result: cur };
    });
    if (!rec) return;
    this.s.d.log.info({ message: m.id, agent: m.toAgent, from: m.fromAgent, how }, 'message delivered');
    this.published({ ...rec, state: 'delivered', how }, 'delivered');
  }
}
