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
import { HOME, remoteKey } from './remote-work.js';
import { publishMessage } from './run-message.js';
import { parseArtifact } from '../handover/artifact.js';
import { readConfinedText } from '../fs/confine.js';

export interface MessageRequest {
  id?: string;
  to: string;
  text: string;
  /** The sender by agent name, or by terminal id (the caller's JAGGERS_TERMINAL_ID). */
  from?: string;
  fromTerminal?: string;
  task?: string;
  /**
   * Not an API field: the host `from` is an agent of (a message taken from that host's outbox, docs/hosts.md);
   * the sender is then `<from>@<fromHost>`.
   */
  fromHost?: string;
}

/** A message waiting in a host's outbox, with its text (what the supervisor that started this host takes home). */
export type OutboxMessage = MessageView & { text: string };

export interface InboxPorts {
  store: Store;
  agents: Pick<Agents, 'find' | 'list'>;
  hub: Publish;
  log: Log;
  dirs: Dirs;
  runner: { kick(terminalId: string): void; waiting(terminalId: string, itemId?: string): string | null };
  /** The host a team agent runs on (jaggers.json's `host`, docs/hosts.md), or null: this machine. */
  hostOf?(agent: string): Promise<string | null>;
  /** On a host's supervisor: the team's agents elsewhere (jaggers.json's `home`), whose messages go to the outbox. */
  homeAgents?(): Promise<readonly string[]>;
}

/** An agent on another host (`far`, on host `box`): its messages here are keyed `far@box`. */
type Party = { agent: string; terminalId: string; host?: string; outbox?: true };

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
    const to: Party | null = resolveParty(this.p.agents, data, req.to, task) ?? (await this.remoteParty(req.to, task)) ?? (await this.homeParty(req.to, task));
    if (!to) throw new JaggersError('E_AGENT_UNKNOWN', `message: unknown agent ${JSON.stringify(req.to)}: agents are ${await this.known()}`);
    const from = await this.sender(req, task);
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
            ...(to.outbox ? { outbox: true as const } : {}),
          },
        ],
        result: true,
      };
    });
    const rec = store.data.messages[id]!;
    if (fresh) publishMessage(this.p.hub, rec, rec.outbox ? 'outbox' : 'queued');
    if (!rec.outbox) this.p.runner.kick(to.terminalId);
    return rec;
  }

  /** On a host's supervisor: an agent of the team elsewhere (jaggers.json's `home`), keyed `<agent>@home`. */
  private async homeParty(agent: string, task: string | null): Promise<Party | null> {
    if (task || !(await this.p.homeAgents?.())?.includes(agent)) return null;
    return { agent, terminalId: remoteKey(agent, HOME), outbox: true };
  }

  /** The sender: an agent of a host (taken from its outbox), of the team elsewhere (on a host's supervisor), or as resolveSender says. */
  private async sender(req: MessageRequest, task: string | null): Promise<Party | null> {
    if (req.fromHost !== undefined && req.from !== undefined) return { agent: req.from, terminalId: remoteKey(req.from, req.fromHost) };
    const data = this.p.store.data;
    if (req.from !== undefined && !resolveParty(this.p.agents, data, req.from, task)) {
      const home = await this.homeParty(req.from, task);
      if (home) return { agent: home.agent, terminalId: home.terminalId };
    }
    return resolveSender(this.p.agents, data, req, task, 'message');
  }

  private async known(): Promise<string> {
    const here = knownAgents(this.p.agents, this.p.store.data);
    const home = (await this.p.homeAgents?.()) ?? [];
    return home.length ? `${here}; elsewhere in the team: ${home.join(', ')}` : here;
  }

  /** On a host's supervisor: the messages in the outbox (not taken home yet), oldest first, with their texts. */
  async outbox(): Promise<OutboxMessage[]> {
    const waiting = Object.values(this.p.store.data.messages)
      .filter((m) => m.outbox && m.state !== 'delivered')
      .sort((a, b) => a.seq - b.seq);
    return Promise.all(waiting.map(async (m) => ({ ...m, text: parseArtifact(await readConfinedText(this.p.dirs, m.file, `message ${m.id}`)).body })));
  }

  /** An outbox message was taken home (stored there under its id): it leaves the outbox. Taken twice is taken once. */
  async taken(id: string): Promise<MessageView> {
    const rec = await this.p.store.update((d) => {
      const m = Object.hasOwn(d.messages, id) ? d.messages[id] : undefined;
      if (!m || !m.outbox) throw new JaggersError('E_NOT_FOUND', `outbox: no message ${JSON.stringify(id)} in the outbox`);
      if (m.state === 'delivered') return { events: [], result: null };
      return { events: [{ type: 'message-delivered', messageId: id, how: 'sent-home' }], result: m };
    });
    if (rec) publishMessage(this.p.hub, { ...rec, state: 'delivered', how: 'sent-home' }, 'delivered');
    const now = this.p.store.data.messages[id];
    return now ?? { ...(rec as MessageView), state: 'delivered', how: 'sent-home' };
  }

  /** An agent of the team on another host: its messages are forwarded there (src/work/remote-work.ts). */
  private async remoteParty(agent: string, task: string | null): Promise<Party | null> {
    const host = task ? null : ((await this.p.hostOf?.(agent)) ?? null);
    return host ? { agent, terminalId: remoteKey(agent, host), host } : null;
  }

  async list(agent: string, task?: string | null): Promise<InboxView> {
    const data = this.p.store.data;
    const p =
      resolveParty(this.p.agents, data, agent, task ?? null) ?? (await this.remoteParty(agent, task ?? null)) ?? (await this.homeParty(agent, task ?? null));
    if (!p) throw new JaggersError('E_AGENT_UNKNOWN', `inbox: unknown agent ${JSON.stringify(agent)}: agents are ${await this.known()}`);
    const messages = Object.values(data.messages).filter((m) => m.to === p.terminalId);
    const pending = messages.filter((m) => m.state !== 'delivered');
    const first = pending.sort((a, b) => a.seq - b.seq)[0];
    const waiting = first ? (this.p.runner.waiting(p.terminalId, first.id) ?? 'being delivered now') : null;
    return { agent: p.agent, terminalId: p.terminalId, waiting, pending: pending.length, messages };
  }
}
