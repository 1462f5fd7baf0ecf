// Choosing the session a CLI made among candidates (codex rollout files, opencode's session list). Pure.

export interface RolloutHead {
  id: string;
  cwd: string | null;
  startedAt: Date | null;
  file: string;
}

export type DiscoveryResult =
  { kind: 'found'; id: string; file: string } | { kind: 'none'; id: null; reason: string } | { kind: 'ambiguous'; id: null; ids: string[]; reason: string };

export function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

export function dateOf(v: unknown): Date | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t);
}

export interface PickQuery {
  /** Accepted spellings of the working folder (as given, resolved, real path). */
  cwds: ReadonlySet<string>;
  since: Date;
  until: Date;
  exclude: ReadonlySet<string>;
  /** Whose sessions, for messages (default `codex`). */
  cli?: string;
}

export function pickSession(heads: readonly RolloutHead[], q: PickQuery): DiscoveryResult {
  const cli = q.cli ?? 'codex';
  const byId = new Map<string, RolloutHead>();
  for (const h of heads) {
    if (q.exclude.has(h.id) || h.cwd === null || !q.cwds.has(h.cwd) || !h.startedAt) continue;
    const t = h.startedAt.getTime();
    if (t < q.since.getTime() || t > q.until.getTime()) continue;
    byId.set(h.id, h);
  }
  const where = `in ${[...q.cwds][0] ?? '?'} between ${q.since.toISOString()} and ${q.until.toISOString()}`;
  const found = [...byId.values()];
  if (found.length === 1) return { kind: 'found', id: found[0]!.id, file: found[0]!.file };
  if (found.length === 0) {
    return { kind: 'none', id: null, reason: `no new ${cli} session ${where} (of ${heads.length} ${cli === 'codex' ? 'rollout files' : 'sessions'} scanned)` };
  }
  const ids = found.map((h) => h.id).sort();
  return { kind: 'ambiguous', id: null, ids, reason: `${ids.length} new ${cli} sessions ${where}: ${ids.join(', ')}; not guessing` };
}
