// Token usage in Gemini CLI's chat recording (`~/.gemini/tmp/<project>/chats/session-<date>-<id8>.jsonl`),
// as seen in 0.61.0 (test/fixtures/usage/gemini-0.61.0-two-turns.jsonl). Not a documented contract.
// The file's first line names the session (`sessionId`); each model message is a line `{"id", "type":
// "gemini", "tokens": {input, output, cached, thoughts, tool, total}, "model"}`, and a `{"$set": {"messages":
// [...]}}` line rewrites the conversation (a resume writes the earlier messages again): a message counts
// once by its id, the last copy of it winning. The Gemini API's prompt count includes its cached part and
// its candidates count leaves out thoughts and tool-use prompts: jaggers' `input` is input less cached
// plus tool, `output` is output plus thoughts, `cacheRead` the cached part. ccusage does not read gemini.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { addInto, count, type ByModel, type Tokens } from '../../usage/tokens.js';
import { followJsonl, type Fold } from '../shared/jsonl-follow.js';
import { objectOf } from '../shared/usage-fold.js';
import type { SessionUsage, UsageReader } from '../types.js';

interface GeminiUsageState {
  /** The session the file's first line names. */
  sessionId: string | null;
  messages: Map<string, { model: string; tokens: Tokens }>;
}

function message(s: GeminiUsageState, v: unknown): void {
  const o = objectOf(v);
  const t = o && objectOf(o.tokens);
  if (!o || !t || o.type !== 'gemini' || typeof o.id !== 'string') return;
  const model = typeof o.model === 'string' && o.model !== '' ? o.model : 'unknown';
  const cached = count(t.cached);
  const tokens = { input: Math.max(0, count(t.input) - cached) + count(t.tool), output: count(t.output) + count(t.thoughts), cacheRead: cached, cacheWrite: 0 };
  s.messages.set(o.id, { model, tokens });
}

export const geminiUsageFold: Fold<GeminiUsageState> = {
  init: () => ({ sessionId: null, messages: new Map() }),
  marks: ['"tokens"', '"sessionId"'],
  line(s, o) {
    if (s.sessionId === null && typeof o.sessionId === 'string') s.sessionId = o.sessionId;
    const set = objectOf(o.$set);
    if (set && Array.isArray(set.messages)) for (const m of set.messages as unknown[]) message(s, m);
    else message(s, o);
  },
};

/**
 * gemini's folder for the project in `cwd`: its `projects.json` names it; else the cwd's basename. Read
 * synchronously, as the chats are (../shared/jsonl-follow.ts): a small file, no thread pool round trip.
 */
function projectSlug(home: string, cwd: string): string {
  try {
    const p = objectOf(objectOf(JSON.parse(readFileSync(path.join(home, '.gemini', 'projects.json'), 'utf8')))?.projects);
    const slug = p?.[cwd];
    if (typeof slug === 'string' && slug !== '') return slug;
  } catch {
    // no such file, or not JSON: the default name
  }
  return path.basename(cwd);
}

export const geminiUsage: UsageReader = async (q) => {
  const dir = path.join(q.home, '.gemini', 'tmp', projectSlug(q.home, q.cwd), 'chats');
  const suffix = `-${q.sessionId.slice(0, 8)}.jsonl`;
  let listed: string[] = [];
  try {
    listed = readdirSync(dir);
  } catch {
    // no chats yet
  }
  const names = listed.filter((n) => n.startsWith('session-') && n.endsWith(suffix)).sort();
  const all = new Map<string, { model: string; tokens: Tokens }>();
  let out: SessionUsage | null = null;
  for (const n of names) {
    const file = path.join(dir, n);
    const f = await followJsonl(file, 'gemini-usage', geminiUsageFold);
    // Another session with the same first 8 characters, or a file that names none.
    if (!f || f.state.sessionId !== q.sessionId) continue;
    out ??= { byModel: {}, records: 0, skipped: 0, files: [] };
    for (const [id, m] of f.state.messages) all.set(id, m);
    out.skipped += f.skipped;
    out.files.push(file);
  }
  if (!out) return null;
  const byModel: ByModel = {};
  for (const m of all.values()) addInto(byModel, m.model, m.tokens);
  // The newest model message (the files in date order, each in its own order): its prompt is how full the context is.
  const last = [...all.values()].at(-1);
  return { ...out, byModel, records: all.size, ...(last ? { last } : {}) };
};
