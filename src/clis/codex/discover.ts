// Finding the session codex started, which cannot be given an id up front: its rollout files.
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isNotFound } from '../../fs/durable.js';
import { cwdForms } from '../shared/cwd-forms.js';
import { pickSession, type DiscoveryResult, type RolloutHead } from '../shared/pick-session.js';
import { dayFolders, parseRolloutHead } from './rollout.js';

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
