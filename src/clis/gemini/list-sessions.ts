// The sessions `gemini --list-sessions` prints, and the ones new between two listings. Pure; no
// discovery reads them yet (a profile's `session.discover: list-sessions` pins nothing).

export interface ListedSession {
  index: number;
  title: string;
  when: string | null;
  id: string;
}

const ID = /^[0-9a-fA-F][0-9a-fA-F-]{7,}$/;

/**
 * One line `N. <title> (<when>) [<uuid>]`, or null. Taken apart from its ends with plain string
 * searches: the one regular expression it replaces took seconds on a title of a few thousand spaces
 * (its lazy title and the spaces around `(when)` backtracked into each other).
 */
function listedLine(raw: string): ListedSession | null {
  const m = /^\s*(\d+)\.\s/.exec(raw);
  if (!m) return null;
  const rest = raw.slice(m[0].length).trimEnd();
  const open = rest.lastIndexOf('[');
  if (!rest.endsWith(']') || open < 0) return null;
  const id = rest.slice(open + 1, -1);
  const head = rest.slice(0, open);
  if (!ID.test(id) || !/\s$/.test(head)) return null;
  const before = head.trimEnd();
  // `(<when>)` right before the id, after a space, with no parenthesis inside.
  const p = before.lastIndexOf('(');
  const when = before.endsWith(')') && p > 0 && /\s/.test(before[p - 1]!) && !before.slice(p + 1, -1).includes(')') ? before.slice(p + 1, -1) : null;
  return { index: Number(m[1]), title: when === null ? before : before.slice(0, p).trimEnd(), when, id };
}

/** Lines `N. <title> (<when>) [<uuid>]` of `gemini --list-sessions`; other lines are ignored. */
export function parseListedSessions(text: string): ListedSession[] {
  const out: ListedSession[] = [];
  for (const raw of text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split(/\r?\n/)) {
    const s = listedLine(raw);
    if (s) out.push(s);
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
