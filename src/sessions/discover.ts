// Finding the session a CLI started when it cannot be given an id up front: codex rollout files,
// opencode's own session list, and the difference between two `--list-sessions` outputs (gemini style).
import { open, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from './files.js';
import { dayFolders, parseOpencodeSessionList, parseRolloutHead, pickSession, type DiscoveryResult, type RolloutHead } from './discover-pure.js';

export { dayFolders, diffListedSessions, parseListedSessions, parseOpencodeSessionList, parseRolloutHead, pickSession } from './discover-pure.js';
export type { DiscoveryResult, ListedSession, RolloutHead } from './discover-pure.js';

export interface CodexDiscoveryQuery {
  /** `CODEX_HOME` of the agent (default `~/.codex`). */
  codexHome: string;
  /** The folder codex was started in; only sessions recorded there count. */
  cwd: string;
  /** When jaggers started the codex process: earlier sessions are not ours. */
  since: Date;
  until?: Date;
  /** Session ids already pinned to other terminals. */
  exclude: ReadonlySet<string>;
}

const MAX_HEAD_BYTES = 4 * 1024 * 1024;

/** Line 1 of a file (session_meta can carry long instructions, so read until the newline). */
async function readFirstLine(file: string): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, total);
      if (bytesRead === 0) break;
      const nl = buf.subarray(0, bytesRead).indexOf(0x0a);
      chunks.push(buf.subarray(0, nl === -1 ? bytesRead : nl));
      total += bytesRead;
      if (nl !== -1 || total >= MAX_HEAD_BYTES) break;
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await fh.close();
  }
}

async function listRollouts(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir);
    return names.filter((n) => n.startsWith('rollout-') && n.endsWith('.jsonl')).map((n) => path.join(dir, n));
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

async function headOf(file: string): Promise<RolloutHead | null> {
  try {
    const head = parseRolloutHead(await readFirstLine(file), file);
    if (!head || head.startedAt) return head;
    const st = await stat(file);
    // No timestamp in the file: when it appeared on disk is the next best thing.
    return { ...head, startedAt: new Date(st.birthtimeMs > 0 ? st.birthtimeMs : st.mtimeMs) };
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

async function cwdForms(cwd: string): Promise<Set<string>> {
  const forms = new Set([path.resolve(cwd)]);
  try {
    forms.add(await realpath(cwd));
  } catch {
    // a folder that no longer exists can still match by name
  }
  return forms;
}

/**
 * The codex session that started in `cwd` between `since` and `until` (default now) and is not in
 * `exclude`. Several candidates give `ambiguous`: guessing could resume another task's conversation.
 */
export async function findNewCodexSession(query: CodexDiscoveryQuery): Promise<DiscoveryResult> {
  const until = query.until ?? new Date();
  const root = path.join(query.codexHome, 'sessions');
  const files = (await Promise.all(dayFolders(query.since, until).map((d) => listRollouts(path.join(root, d))))).flat();
  const heads = (await Promise.all(files.map(headOf))).filter((h): h is RolloutHead => h !== null);
  return pickSession(heads, { cwds: await cwdForms(query.cwd), since: query.since, until, exclude: query.exclude });
}

export interface OpencodeDiscoveryQuery {
  /** Runs the agent's CLI with these arguments, in its folder and with its environment: its stdout. */
  run(args: readonly string[]): Promise<string>;
  /** The profile's `listArgs` (`session list --format json`). */
  listArgs: readonly string[];
  cwd: string;
  since: Date;
  until?: Date;
  exclude: ReadonlySet<string>;
  /** The tag (`[jg:<nonce>]`) of the prompt that made the session: decides between several new ones. */
  tag?: string;
}

/**
 * The opencode session started in `cwd` since `since`, from `opencode session list`. Several new ones
 * (two agents in one folder starting at once) are told apart by `opencode export <id>`: only the one
 * whose conversation carries this turn's tag is ours; otherwise nothing is guessed.
 */
export async function findNewOpencodeSession(q: OpencodeDiscoveryQuery): Promise<DiscoveryResult> {
  const until = q.until ?? new Date();
  const heads = parseOpencodeSessionList(await q.run(q.listArgs));
  const found = pickSession(heads, { cwds: await cwdForms(q.cwd), since: q.since, until, exclude: q.exclude, cli: 'opencode' });
  if (found.kind !== 'ambiguous' || q.tag === undefined) return found;
  const tagged: string[] = [];
  for (const id of found.ids) if ((await q.run(['export', id])).includes(q.tag)) tagged.push(id);
  if (tagged.length === 1) return { kind: 'found', id: tagged[0]!, file: '' };
  return { ...found, reason: `${found.reason} (${tagged.length} of them carry ${q.tag})` };
}
