// Token usage in opencode's database (1.18.33: `$XDG_DATA_HOME/opencode/opencode.db`, else
// `~/.local/share/opencode/opencode.db`; `OPENCODE_DB` names another, absolute or under that folder), read
// in place with ../shared/sqlite-read.ts while opencode runs. As seen in 1.18.33's own code and its files
// (test/fixtures/usage/opencode-1.18.33-two-turns.db):
// - every model step of an answer writes a part `{"type":"step-finish","tokens":{"input","output",
//   "reasoning","cache":{"read","write"}},"cost"}` (table `part`, column `data`); the message's own
//   `tokens` hold only its last step's, so the steps are what is summed;
// - opencode's `input` is the prompt less its cache reads and writes, its `output` leaves reasoning out:
//   jaggers' `input` is that input, `output` is output plus reasoning, `cacheRead` and `cacheWrite` the
//   cache's;
// - the model is the step's message's `modelID` (table `message`, column `data`);
// - a session's subagents are sessions of their own whose `parent_id` is it: their steps count too.
// A message is read until it is final (a prompt, or an answer with `time.completed`), then kept: a turn
// reads the messages it added, and the session's index entries. Not a documented contract: a database of another shape gives no usage, never an error.
import path from 'node:path';
import { addInto, count, type ByModel, type Tokens } from '../../usage/tokens.js';
import { SqliteSnapshot, type SqlValue } from '../shared/sqlite-read.js';
import { addRecord, newUsageState, objectOf, type UsageState } from '../shared/usage-fold.js';
import type { SessionUsage, UsageReader } from '../types.js';

/** The database opencode uses with this environment, or null (an in-memory one). */
export function opencodeDbFile(home: string, env: Readonly<Record<string, string | undefined>>): string | null {
  const data = path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'opencode');
  const named = env.OPENCODE_DB;
  if (named === ':memory:') return null;
  if (named) return path.isAbsolute(named) ? named : path.join(data, named);
  return path.join(data, 'opencode.db');
}

interface Step {
  model: string;
  tokens: Tokens;
}

/** What was read of one message: its steps, and whether they are final (then it is not read again). */
interface MessageSeen {
  final: boolean;
  steps: Step[];
}

interface Roots {
  message: number;
  part: number;
  session: number;
  messagesOfSession: number;
  partsOfMessage: number;
  childrenOf: number | null;
  /** Column positions (from the tables' CREATE statements). */
  col: { messageData: number; partData: number; sessionId: number };
}

/** Messages read, per database file: completed ones are not read again. */
const seen = new Map<string, Map<string, MessageSeen>>();
const MAX_MESSAGES = 200_000;

/**
 * A session's leading run of final messages, summed: where its index entries were left (the columns after
 * the session's id) and their steps. A turn's read starts after it, so it reads the messages the turn
 * added, not the whole session again. Messages are added at the index's end (created later); a message
 * removed from that run (opencode's revert of a turn) keeps its tokens here: they were spent.
 */
interface Prefix {
  after: SqlValue[];
  byModel: ByModel;
  records: number;
  messages: number;
  last: Step | undefined;
}
const prefixes = new Map<string, Map<string, Prefix>>();

/** The columns of a `CREATE TABLE` statement, in order (opencode's are back-quoted). */
function columnsOf(sql: string): string[] {
  const body = sql.slice(sql.indexOf('(') + 1);
  const out: string[] = [];
  for (const m of body.matchAll(/(?:^|,)\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s+(?:text|integer|real|blob|numeric)/gi)) {
    if (m[1] && !/^(constraint|primary|foreign|unique|check)$/i.test(m[1])) out.push(m[1]);
  }
  return out;
}

function rootsOf(s: SqliteSnapshot): Roots | null {
  const message = s.root('message');
  const part = s.root('part');
  const session = s.root('session');
  const messagesOfSession = s.root('message_session_time_created_id_idx');
  const partsOfMessage = s.root('part_message_id_id_idx');
  if (!message || !part || !session || !messagesOfSession || !partsOfMessage) return null;
  const messageData = columnsOf(message.sql).indexOf('data');
  const partData = columnsOf(part.sql).indexOf('data');
  const sessionId = columnsOf(session.sql).indexOf('id');
  if (messageData < 0 || partData < 0 || sessionId < 0) return null;
  return {
    message: message.root,
    part: part.root,
    session: session.root,
    messagesOfSession: messagesOfSession.root,
    partsOfMessage: partsOfMessage.root,
    childrenOf: s.root('session_parent_idx')?.root ?? null,
    col: { messageData, partData, sessionId },
  };
}

const json = (v: SqlValue | undefined): Record<string, unknown> | null => {
  if (typeof v !== 'string') return null;
  try {
    return objectOf(JSON.parse(v));
  } catch {
    return null;
  }
};

const rowidOf = (entry: SqlValue[]): number | null => {
  const r = entry.at(-1);
  return typeof r === 'number' ? r : null;
};

/** A step-finish part's tokens, in jaggers' terms; null for any other part. */
export function opencodeStepTokens(data: Record<string, unknown>): Tokens | null {
  if (data.type !== 'step-finish') return null;
  const t = objectOf(data.tokens);
  if (!t) return null;
  const cache = objectOf(t.cache);
  return { input: count(t.input), output: count(t.output) + count(t.reasoning), cacheRead: count(cache?.read), cacheWrite: count(cache?.write) };
}

/**
 * A step-finish part is a few hundred bytes; a tool's output may be megabytes: parts over this are not
 * read (under a 4 KB page's room for a row, so no overflow page is read for a part).
 */
const MAX_STEP_BYTES = 4000;

/** One message: its steps, from its parts. Final when it is not an answer (a prompt) or its answer is completed. */
function readMessage(s: SqliteSnapshot, r: Roots, messageId: string, rowid: number): MessageSeen {
  const data = json(s.row(r.message, rowid, 1 << 20)?.[r.col.messageData]);
  if (!data) return { final: false, steps: [] };
  if (data.role !== 'assistant') return { final: true, steps: [] };
  const model = typeof data.modelID === 'string' && data.modelID !== '' ? data.modelID : 'unknown';
  const steps: Step[] = [];
  for (const entry of s.indexEquals(r.partsOfMessage, messageId)) {
    const partRow = rowidOf(entry);
    const raw = partRow === null ? null : s.row(r.part, partRow, MAX_STEP_BYTES)?.[r.col.partData];
    if (typeof raw !== 'string' || !raw.includes('"step-finish"')) continue;
    const tokens = opencodeStepTokens(json(raw) ?? {});
    if (tokens) steps.push({ model, tokens });
  }
  return { final: typeof objectOf(data.time)?.completed === 'number', steps };
}

/** The session and its subagents' sessions (their `parent_id` is it), at most 1,000. */
function sessionTree(s: SqliteSnapshot, r: Roots, sessionId: string): string[] {
  const out = [sessionId];
  for (let i = 0; i < out.length && out.length < 1000 && r.childrenOf !== null; i++) {
    for (const entry of s.indexEquals(r.childrenOf, out[i]!)) {
      const rowid = rowidOf(entry);
      const id = rowid === null ? null : s.row(r.session, rowid, 1 << 20)?.[r.col.sessionId];
      if (typeof id === 'string' && !out.includes(id)) out.push(id);
    }
  }
  return out;
}

/**
 * The usage of `sessionId` in the database `dbFile`, read now; null when the database has no such session.
 * At most `budget` messages not seen before are read: past it, `'more'` (those read are kept: call again).
 */
export function opencodeUsageSlice(dbFile: string, sessionId: string, budget: number): SessionUsage | null | 'more' {
  return SqliteSnapshot.read<SessionUsage | null | 'more'>(dbFile, (s) => {
    const r = rootsOf(s);
    if (!r) return null;
    let known = seen.get(dbFile);
    if (!known || known.size > MAX_MESSAGES) seen.set(dbFile, (known = new Map()));
    let runs = prefixes.get(dbFile);
    if (!runs || runs.size > MAX_MESSAGES) prefixes.set(dbFile, (runs = new Map()));
    const state: UsageState = newUsageState();
    let messages = 0;
    let read = 0;
    let main: Step | undefined;
    for (const [i, session] of sessionTree(s, r, sessionId).entries()) {
      const had = runs.get(session);
      const run: Prefix = had ? { ...had, byModel: { ...had.byModel } } : { after: [], byModel: {}, records: 0, messages: 0, last: undefined };
      for (const [model, t] of Object.entries(run.byModel)) addInto(state.byModel, model, t);
      state.records += run.records;
      messages += run.messages;
      if (i === 0 && run.last) main = run.last;
      let leading = true;
      for (const entry of s.indexEquals(r.messagesOfSession, session, had ? had.after : null)) {
        const id = entry[2];
        const rowid = rowidOf(entry);
        if (typeof id !== 'string' || rowid === null) continue;
        messages++;
        let m = known.get(id);
        if (!m?.final) {
          if (++read > budget) {
            leading = false;
            continue;
          }
          m = readMessage(s, r, id, rowid);
          known.set(id, m);
        }
        for (const step of m.steps) {
          addRecord(state, step.model, step.tokens);
          if (i === 0) main = step;
        }
        leading &&= m.final;
        if (leading) {
          run.after = entry.slice(1);
          run.messages++;
          for (const step of m.steps) {
            addInto(run.byModel, step.model, step.tokens);
            run.records++;
            run.last = step;
          }
        }
      }
      runs.set(session, run);
    }
    if (messages === 0) return null;
    if (read > budget) return 'more';
    return {
      byModel: state.byModel,
      records: state.records,
      skipped: 0,
      files: [dbFile],
      ...(main ? { last: { model: main.model, tokens: main.tokens } } : {}),
    };
  });
}

/** The usage of `sessionId` in the database `dbFile`, read now at once; null when the database has no such session. */
export function opencodeSessionUsage(dbFile: string, sessionId: string): SessionUsage | null {
  const u = opencodeUsageSlice(dbFile, sessionId, Infinity);
  return u === 'more' ? null : u;
}

/** Messages read before the event loop is let run: a long session's first read goes in slices of this. */
const SLICE = 100;

export const opencodeUsage: UsageReader = async (q) => {
  const file = opencodeDbFile(q.home, q.env);
  if (!file) return null;
  try {
    for (;;) {
      const u = opencodeUsageSlice(file, q.sessionId, SLICE);
      if (u !== 'more') return u;
      await new Promise((resolve) => setImmediate(resolve));
    }
  } catch {
    // Not there yet, or not of the shape this reader knows.
    return null;
  }
};

/** Forget the messages read (tests). */
export function forgetOpencodeMessages(): void {
  seen.clear();
  prefixes.clear();
}
