// A turn's tokens, recorded with its end: the session's usage is read from its CLI's own records (the
// profile's `session.usage` reader) and what it shows beyond the session's sum in the registry is this
// turn's (so tokens spent between two recorded turns, a person typing into the pane say, go with the
// next one). Read inside the registry update that records the item's end, so the sum it starts from is
// the one the journal holds; the reading is incremental (src/clis/shared/jsonl-follow.ts).
import type { NewJournalEvent } from '../sessions/events.js';
import type { JobRecord, RegistryData } from '../sessions/registry.js';
import type { Profile } from '../profiles/schema.js';
import type { SessionUsage } from '../clis/types.js';
import { modelKey, subtractByModel, wholeCounts, type Tokens } from '../usage/tokens.js';

/** Where an agent's CLI keeps the session: its profile, its process (for its HOME, CODEX_HOME...) or the environment it runs with. */
export interface UsageWhere {
  profile: Profile;
  pid: number | null;
  env?: Readonly<Record<string, string | undefined>>;
  cwd: string;
  sessionId: string;
}

/** Reads a session's usage; null when the profile names no reader or the CLI has no record (yet). */
export interface UsageSource {
  read(w: UsageWhere): Promise<SessionUsage | null>;
}

export interface TurnOf {
  job: JobRecord;
  terminalId: string;
  agent: string;
  profile: Profile;
  pid: number | null;
  env?: Readonly<Record<string, string | undefined>>;
  /** The session the turn ran in, when known; else the terminal's pinned one. */
  sessionId: string | null;
}

/** Where the turn's session is, or null when its usage cannot be read. */
function whereOf(d: RegistryData, t: TurnOf): { sessionId: string; cwd: string } | null {
  const terminal = d.terminals[t.terminalId];
  const sessionId = t.sessionId ?? terminal?.sessionId ?? null;
  return t.profile.session.usage && sessionId && terminal ? { sessionId, cwd: terminal.cwd } : null;
}

/**
 * Read the session's records once before the turn's prompt goes in (not awaited): the reader keeps what it
 * read, so the read at the turn's end, inside the registry's update, covers only the turn's own lines,
 * even for a long session a supervisor just started on. Resolves to the answers its records counted then
 * (0 before the CLI wrote any; null: the profile has no reader or the session is not known). Never rejects.
 */
export function warmUsage(source: UsageSource | undefined, d: RegistryData, t: TurnOf): Promise<number | null> {
  const w = whereOf(d, t);
  if (!source || !w) return Promise.resolve(null);
  return source
    .read({ profile: t.profile, pid: t.pid, ...w, ...(t.env ? { env: t.env } : {}) })
    .then((u) => u?.records ?? 0)
    .catch(() => null);
}

/**
 * How long a turn's end waits at most for the CLI to write its record of the turn's answer (qwen 0.24.4
 * wrote its first one over 3 s after its Stop hook in CI, at load 20). Only a turn that made no answer
 * waits it all.
 */
export const USAGE_SETTLE_MS = 8000;
const SETTLE_GAP_MAX_MS = 400;

/**
 * Until the session's records count an answer beyond the `before` ones (the warm read's), written at `since`
 * or later where the records say when (the warm read's time): a record of the turn before that came
 * after the warm read, past its own turn's cap, is not this turn's. Without that check every later turn
 * took the one before's answer for its own (CI: qwen's context share one turn behind, its compaction
 * a turn late). At most `capMs`:
 * a CLI may say its turn ended before it wrote the answer's record (claude 2.1.330 writes its transcript
 * a moment after its Stop hook, qwen 0.24.4 up to about 2 s after it), and the turn's tokens and the context share would then go with the
 * next turn. Returns at once when the record is there (a turn ended by the screen, mostly); a turn that
 * made no answer (an error before the model) waits the cap. Never throws.
 */
export async function usageSettled(
  source: UsageSource | undefined,
  d: () => RegistryData,
  t: TurnOf,
  before: number,
  o: { capMs?: number; everyMs?: number; since?: number } = {},
): Promise<void> {
  const { capMs = USAGE_SETTLE_MS, everyMs = 25, since } = o;
  if (!source) return;
  const until = Date.now() + capMs;
  // Looked at again after 25 ms, then twice as long each time up to 400 ms: a record written a moment
  // late is seen at once, and qwen's 2 s cost about ten reads, not forty.
  for (let gap = everyMs; ; gap = Math.min(gap * 2, Math.max(everyMs, SETTLE_GAP_MAX_MS))) {
    const w = whereOf(d(), t);
    if (!w) return;
    const now = await source.read({ profile: t.profile, pid: t.pid, ...w, ...(t.env ? { env: t.env } : {}) }).catch(() => null);
    const at = now?.last?.at;
    const ours = since === undefined || at === undefined || at >= since;
    if (((now?.records ?? 0) > before && ours) || Date.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(gap, Math.max(0, until - Date.now()))));
  }
}

/** How full the context is after the session's last answer: its prompt, input and cache tokens together. */
function contextOf(last: { model: string; tokens: Tokens }): { model: string; tokens: number } {
  const t = wholeCounts({ [modelKey(last.model)]: last.tokens });
  const [model, w] = Object.entries(t)[0] ?? [modelKey(last.model), { input: 0, cacheRead: 0, cacheWrite: 0 }];
  return { model, tokens: Math.min(w.input + w.cacheRead + w.cacheWrite, 1e12) };
}

/** The `usage` event of a turn that ended (none when nothing new was spent or nothing can be read). Never throws. */
export async function turnUsageEvents(source: UsageSource | undefined, d: RegistryData, t: TurnOf): Promise<NewJournalEvent[]> {
  const reader = t.profile.session.usage;
  const w = whereOf(d, t);
  if (!source || !reader || !w) return [];
  const { sessionId } = w;
  const now = await source.read({ profile: t.profile, pid: t.pid, ...w, ...(t.env ? { env: t.env } : {}) }).catch(() => null);
  if (!now) return [];
  const before = Object.hasOwn(d.usage.sessions, sessionId) ? d.usage.sessions[sessionId]! : {};
  const session = wholeCounts(now.byModel);
  const turn = subtractByModel(session, before);
  if (Object.keys(turn).length === 0) return [];
  return [
    {
      type: 'usage',
      terminalId: t.terminalId,
      agent: t.agent,
      sessionId,
      jobId: t.job.id,
      task: t.job.task ?? t.job.id,
      reader,
      turn,
      session,
      ...(now.last ? { context: contextOf(now.last) } : {}),
    },
  ];
}
