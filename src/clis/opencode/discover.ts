// Finding the session opencode started, which cannot be given an id up front: its own session list.
import { cwdForms } from '../shared/cwd-forms.js';
import { pickSession, type DiscoveryResult } from '../shared/pick-session.js';
import { parseOpencodeSessionList } from './session-list.js';

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
