// The sessions `gemini --list-sessions` prints, and the ones new between two listings. Pure; no
// discovery reads them yet (a profile's `session.discover: list-sessions` pins nothing).

export interface ListedSession {
  index: number;
  title: string;
  when: string | null;
  id: string;
}

const LISTED = /^\s*(\d+)\.\s+(.*?)(?:\s+\(([^()]*)\))?\s+\[([0-9a-fA-F][0-9a-fA-F-]{7,})\]\s*$/;

/** Lines `N. <title> (<when>) [<uuid>]` of `gemini --list-sessions`; other lines are ignored. */
export function parseListedSessions(text: string): ListedSession[] {
  const out: ListedSession[] = [];
  for (const raw of text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split(/\r?\n/)) {
    const m = LISTED.exec(raw);
    if (m) out.push({ index: Number(m[1]), title: m[2] ?? '', when: m[3] ?? null, id: m[4]! });
  }
  return out;
}

/** Session ids listed in `after` but not in `before`, in listing order. */
export function diffListedSessions(before: string, after: string): string[] {
  const old = new Set(parseListedSessions(before).map((s) => s.id));
  const fresh = new Set<string>();
  for (const { id } of parseListedSessions(after)) if (!old.has(id)) fresh.add(id);
  return [...fresh];
}
