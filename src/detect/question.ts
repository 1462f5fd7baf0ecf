// What an agent that waits for a person asks: the question line and the menu's choices, read from
// the screen (pure), for `status`, `why` and notifications.
import { bottomLines } from './classify.js';

export { describeQuestion } from '../describe-question.js';

const CHOICE = /^\s*(?:[❯›>●○◯]\s*)?(\d{1,2})[.)]\s+(\S.*?)\s*$/u;
/** The highlighted item of a menu without numbers: a cursor mark, then the label. */
const CURSOR = /^(\s*[❯›>▶]\s+)(\S.*?)\s*$/u;
const QUESTION = /[^\s?]\?(?:\s|$)|^\s*(?:Allow|Do you want|Would you like|Is this)\b/u;

export interface Question {
  text: string;
  choices: string[];
  /** Menus without numbers: the item the highlight is on (0-based), moved with the arrow keys. */
  selected?: number;
}

/**
 * The last question-like line above the menu and the menu's choices, from the screen's last `lines`
 * lines: numbered items (`1. Yes`), else a highlighted item (`❯ Yes`) with the items right above and
 * below it at the same indentation (claude 2.1.330's first-run dialogs).
 */
export function readQuestion(screen: string, lines = 20): Question | null {
  const bottom = bottomLines(screen, lines).map(clean);
  const first = bottom.findIndex((l) => CHOICE.test(l));
  if (first < 0) return readUnnumbered(screen, lines) ?? questionOnly(bottom);
  const items = bottom.slice(first).filter((l) => CHOICE.test(l));
  const choices = items.map((l) => CHOICE.exec(l)![2]!);
  // The highlight, where the menu marks one item (`❯ 1. Yes`, `› 1.`, `● 1.`).
  const marked = items.flatMap((l, i) => (/^\s*[❯›>●]/u.test(l) ? [i] : []));
  return { text: questionAbove(bottom.slice(0, first)), choices, ...(marked.length === 1 ? { selected: marked[0]! } : {}) };
}

/** Whether the menu at the bottom of the screen numbers its items (`1. Yes`). */
export function hasNumberedMenu(screen: string, lines = 20): boolean {
  return bottomLines(screen, lines).some((l) => CHOICE.test(clean(l)));
}

/** A line without box borders and without a scrollbar drawn at the right edge (qwen 0.24: `█`, `░`). */
function clean(line: string): string {
  return line
    .replace(/\s{2,}[█▐▌░▒▓▕▏┃│║]\s*$/u, '')
    .replace(/[│┃║]/gu, ' ')
    .trim();
}

/** The last question-like line, up to its last `?` (claude 2.1.330 goes on after it: `trust? (Like your own code...`). */
function questionAbove(above: string[]): string {
  const line = above.findLast((l) => QUESTION.test(l));
  if (line === undefined) return above.findLast((l) => l !== '') ?? '';
  const end = line.lastIndexOf('?');
  return end >= 0 ? line.slice(0, end + 1) : line;
}

function questionOnly(bottom: string[]): Question | null {
  const text = questionAbove(bottom);
  return text ? { text, choices: [] } : null;
}

function readUnnumbered(screen: string, lines: number): Question | null {
  // Blank lines count here: a menu's items touch each other.
  const all = screen.split('\n').map((l) =>
    l
      .replace(/\s{2,}[█▐▌░▒▓▕▏┃│║]\s*$/u, '')
      .replace(/[│┃║]/gu, ' ')
      .trimEnd(),
  );
  while (all.length && all.at(-1) === '') all.pop();
  const rows = all.slice(-(lines * 2));
  const at = rows.findLastIndex((l) => CURSOR.test(l));
  if (at < 0) return null;
  const m = CURSOR.exec(rows[at]!)!;
  const col = m[1]!.length;
  const sibling = (l: string | undefined) => l !== undefined && l.length > col && /^\s*$/.test(l.slice(0, col)) && /\S/.test(l[col]!) && !CURSOR.test(l);
  let top = at;
  while (sibling(rows[top - 1])) top--;
  let end = at;
  while (sibling(rows[end + 1])) end++;
  if (top === end) return null;
  const choices = rows.slice(top, end + 1).map((l, i) => (top + i === at ? m[2]! : l.trim()));
  const above = rows
    .slice(0, top)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^[─━]+$/u.test(l));
  return { text: questionAbove(above.slice(-lines)), choices, selected: at - top };
}

/** Whether two readings show the same question with the same choices. */
export function sameQuestion(a: Question, b: Question): boolean {
  return a.text === b.text && a.choices.length === b.choices.length && a.choices.every((c, i) => c === b.choices[i]);
}

/**
 * The menu item a person meant: its number (1-based, as the menu shows them), or a label that equals a
 * choice or is part of exactly one (case-insensitive). A string says why none was picked.
 */
export function pickChoice(q: Question, choice: string): { number: number; label: string } | string {
  const list = q.choices.map((c, i) => `${i + 1}. ${c}`).join(', ');
  const c = choice.trim();
  if (/^\d+$/.test(c)) {
    const n = Number(c);
    if (n >= 1 && n <= q.choices.length) return { number: n, label: q.choices[n - 1]! };
    return `there is no choice ${n}: the menu offers ${list}`;
  }
  const lower = c.toLowerCase();
  const exact = q.choices.findIndex((x) => x.toLowerCase() === lower);
  if (exact >= 0) return { number: exact + 1, label: q.choices[exact]! };
  const parts = q.choices.flatMap((x, i) => (x.toLowerCase().includes(lower) ? [i] : []));
  if (parts.length === 1) return { number: parts[0]! + 1, label: q.choices[parts[0]!]! };
  return parts.length === 0
    ? `no choice matches ${JSON.stringify(c)}: the menu offers ${list}`
    : `${JSON.stringify(c)} matches ${parts.length} choices (${parts.map((i) => `${i + 1}. ${q.choices[i]}`).join(', ')}): give its number`;
}
