// The files behind jobs and messages: a job's prompt (`.jaggers/jobs/<id>.md`, the text exactly as
// given) and a message (`.jaggers/inbox/<id>.md`, front matter naming the sender and how to reply,
// then the text exactly). Both are written and fsynced before the journal records them.
import path from 'node:path';
import { errCode, writeFileAtomic } from '../fs/durable.js';
import { ensurePrivateFolder } from '../fs/private-dir.js';
import type { NewJournalEvent } from '../sessions/events.js';

export { JOB_ID, MESSAGE_ID, newJobId, newMessageId } from '../ids.js';
import { newMessageId } from '../ids.js';

export function jobPromptFile(jaggersDir: string, id: string): string {
  return path.join(jaggersDir, 'jobs', `${id}.md`);
}

export function messageFile(jaggersDir: string, id: string): string {
  return path.join(jaggersDir, 'inbox', `${id}.md`);
}

/** Folders this process made (or found): not made again for every file (a mkdir per message showed in profiles). */
const made = new Set<string>();

export async function writeDurable(file: string, text: string): Promise<void> {
  const dir = path.dirname(file);
  if (made.has(dir)) {
    try {
      return await writeFileAtomic(file, text, { sync: true });
    } catch (e) {
      // Its folder removed since (by hand, or a test): made again below.
      if (!(e instanceof Error && errCode(e.cause) === 'ENOENT')) throw e;
    }
  }
  await ensurePrivateFolder(dir);
  made.add(dir);
  await writeFileAtomic(file, text, { sync: true });
}

export interface MessageHeader {
  id: string;
  fromAgent: string;
  from: string | null;
  toAgent: string;
  to: string;
  sent: string;
  job: string | null;
  /** The workflow task whose final answer this is. */
  task?: string | null;
}

/** Write a message that brings a result home (durably) and give the event that records it, inside the registry lock. */
export async function homeMessage(
  dirs: { projectRoot: string; jaggersDir: string },
  h: Omit<MessageHeader, 'id' | 'sent'>,
  text: string,
): Promise<NewJournalEvent> {
  const id = newMessageId();
  const file = messageFile(dirs.jaggersDir, id);
  await writeDurable(file, renderMessage({ ...h, id, sent: new Date().toISOString() }, text));
  return {
    type: 'message-created',
    messageId: id,
    to: h.to,
    toAgent: h.toAgent,
    from: h.from,
    fromAgent: h.fromAgent,
    file: path.relative(dirs.projectRoot, file),
    bytes: Buffer.byteLength(text),
    job: h.job,
  };
}

/** How the receiver answers: a message back to an agent, or nothing to answer (a person, a job's result). */
export function replyHint(h: Pick<MessageHeader, 'fromAgent' | 'from' | 'task'>): string {
  if (h.task) return `none needed (the end of task ${h.task}, which you started; jaggers show ${h.task})`;
  return h.from ? `jaggers message ${h.fromAgent} -m "..." (or -f FILE)` : 'none needed (sent by a person from the command line)';
}

/** Front matter a person and an agent can read, then the text exactly as it was sent. */
export function renderMessage(h: MessageHeader, text: string): string {
  const q = (v: string) => (/^[\w@.:+/-]+$/.test(v) ? v : JSON.stringify(v));
  const lines = [
    '---',
    `message: ${h.id}`,
    `from: ${q(h.fromAgent)}${h.from ? ` (${h.from})` : ''}`,
    `to: ${q(h.toAgent)} (${h.to})`,
    `sent: ${h.sent}`,
    ...(h.job ? [`job: ${h.job}`] : []),
    ...(h.task ? [`task: ${h.task}`] : []),
    `reply: ${q(replyHint(h))}`,
    '---',
  ];
  return `${lines.join('\n')}\n${text}`;
}

/** The text of a job's result, as it goes to the inbox of whoever assigned the job. */
export function renderJobResult(
  j: {
    id: string;
    name: string | null;
    agent: string | null;
    state: string;
    reason: string;
    reply: string | null;
    worktree?: { result: { branch: string; commits: number; files: number; added: number; removed: number } | null } | null;
  },
  replyText: string | null,
): string {
  const what = `Job ${j.id}${j.name ? ` (${j.name})` : ''} that you assigned to ${j.agent ?? 'a worker'}`;
  const w = j.worktree?.result;
  const branch = w
    ? `It worked in its own git worktree: branch ${w.branch}, ${w.commits} commit${w.commits === 1 ? '' : 's'}, ${w.files} file${w.files === 1 ? '' : 's'} changed (+${w.added} -${w.removed}); see \`jaggers diff ${j.id}\`, bring it in with \`jaggers merge ${j.id}\`.\n`
    : '';
  if (j.state === 'done') return `${what} is done. ${branch}Its reply is in ${j.reply}:\n\n${replyText ?? ''}\n`;
  return `${what} ended ${j.state}: ${j.reason}\n`;
}
