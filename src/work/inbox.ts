// The inbox: a message is stored durably (its file fsynced, then journaled) before `message` returns,
// and joins its receiver's queue like any other work item (src/work/run-message.ts delivers it).
import path from 'node:path';
import type { InboxView, MessageView } from '../api/types.js';
import { JaggersError } from '../errors.js';
import { MESSAGE_ID, newMessageId } from '../ids.js';
import type { Log } from '../logger.js';
import { messageFile, renderMessage, writeDurable } from './files.js';
import { knownAgents, resolveParty, resolveSender } from './parties.js';
import type { Agents, Dirs, Publish, Store } from './ports.js';
import { remoteKey } from './remote-work.js';
import { publishMessage } from './run-message.js';

export interface MessageRequest {
  id?: string;
  to: string;
  text: string;
  /** The sender by agent name, or by terminal id (the caller's JAGGERS_TERMINAL_ID). */
  from?: string;
  fromTerminal?: string;
  task?: string;
}

export interface InboxPorts {
  store: Store;
  agents: Pick<Agents, 'find' | 'list'>;
  hub: Publish;
  log: Log;
  dirs: Dirs;
  runner: { kick(terminalId: string): void; waiting(terminalId: string, itemId?: string): string | null };
  /** The host a team agent runs on (jaggers.json's `host`, docs/hosts.md), or null: this machine. */
  hostOf?(agent: string): Promise<string | null>;
}

/** An agent on another host (`far`, on host `box`): its messages here are keyed `far@box`. */
type Party = { agent: string; terminalId: string; host?: string };

export class Inbox {
  constructor(private readonly p: InboxPorts) {}

  /** Store a message for `to`; returns once it is on disk and in the journal. The same `id` twice stores it once. */
  async send(req: MessageRequest): Promise<MessageView> {
    const { store, dirs } = this.p;
    if (req.id !== undefined && !MESSAGE_ID.test(req.id))
      throw new JaggersError('E_USAGE', `message id must look like m-0123abcd, got ${JSON.stringify(req.id)}`);
    if (req.text.trim() === '') throw new JaggersError('E_USAGE', 'message: the text is empty');
    const data = store.data;
    const known = req.id && Object.hasOwn(data.messages, req.id) ? data.messages[req.id] : undefined;
    if (known) return known;
    const task = req.task ?? null;
    const to: Party | null = resolveParty(this.p.agents, data, req.to, task) ?? (await this.remoteParty(req.to, task));
    if (!to) throw new JaggersError('E_AGENT_UNKNOWN', `message: unknown agent ${JSON.stringify(req.to)}: agents are ${knownAgents(this.p.agents, data)}`);
    const from = resolveSender(this.p.agents, data, req, task, 'message');
    const id = req.id ?? newMessageId();
    const file = messageFile(dirs.jaggersDir, id);
    const sent = new Date().toISOString();
    await writeDurable(
      file,
      renderMessage({ id, fromAgent: from?.agent ?? 'user', from: from?.terminalId ?? null, toAgent: to.agent, to: to.terminalId, sent, job: null }, req.text),
    );
    const fresh = await store.update((d) => {
      if (Object.hasOwn(d.messages, id)) return { events: [], result: false };
      return {
        events: [
          {
            type: 'message-created',
            messageId: id,
            to: to.terminalId,
            toAgent: to.agent,
            from: from?.terminalId ?? null,
            fromAgent: from?.agent ?? 'user',
            file: path.relative(dirs.projectRoot, file),
            bytes: Buffer.byteLength(req.text),
            job: null,
            ...(to.host ? { host: to.host } : {}),
          },
        ],
        result: true,
      };
    });
    const rec = store.data.messages[id]!;
    if (fresh) publishMessage(this.p.hub, rec, 'queued');
    this.p.runner.kick(to.terminalId);
    return rec;
  }

  /** An agent of the team on another host: its messages are forwarded there (src/work/remote-work.ts). */
  private async remoteParty(agent: string, task: string | null): Promise<Party | null> {
    const host = task ? null : ((await this.p.hostOf?.(agent)) ?? null);
    return host ? { agent, terminalId: remoteKey(agent, host), host } : null;
  }

  async list(agent: string, task?: string | null): Promise<InboxView> {
    const data = this.p.store.data;
    const p = resolveParty(this.p.agents, data, agent, task ?? null) ?? (await this.remoteParty(agent, task ?? null));
    if (!p) throw new JaggersError('E_AGENT_UNKNOWN', `inbox: unknown agent ${JSON.stringify(agent)}: agents are ${knownAgents(this.p.agents, data)}`);
    const messages = Object.values(data.messages).filter((m) => m.to === p.terminalId);
    const pending = messages.filter((m) => m.state !== 'delivered');
    const first = pending.sort((a, b) => a.seq - b.seq)[0];
    const waiting = first ? (this.p.runner.waiting(p.terminalId, first.id) ?? 'being delivered now') : null;
    return { agent: p.agent, terminalId: p.terminalId, waiting, pending: pending.length, messages };
  }
}
