// What an agent that waits for a person asks: the question line and the menu's choices, read from
// the screen (pure), for `status`, `why` and notifications.
import { bottomLines } from './classify.js';

export { describeQuestion } from '../describe-question.js';

const CHOICE = /^\s*(?:[❯›>●○◯]\s*)?(\d{1,2})[.)]\s+(\S.*?)\s*$/u;
/** The highlighted item of a menu without numbers: a cursor mark, then the label. */
const CURSOR = /^(\s*[❯›>▶]\s+)(\S.*?)\s*$/u;
const QUESTION = /[^\s?]\?(?:\s|$)|^\s*(?:Allow|Do you want|Would you like|Is this)\b|\bPermission required\b/u;

export interface Question {
  text: string;
  choices: string[];
  /** Menus without numbers: the item the highlight is on (0-based), moved with the arrow keys. */
  selected?: number;
  /**
   * `row`: the items side by side on one line (opencode's `Allow once   Allow always   Reject`), moved
   * with Left and Right; the highlight is drawn in colour only, so the plain screen does not say where
   * it is (see rowHighlight).
   */
  layout?: 'row';
}

/**
 * The last question-like line above the menu and the menu's choices, from the screen's last `lines`
 * lines: numbered items (`1. Yes`), else a highlighted item (`❯ Yes`) with the items right above and
 * below it at the same indentation (claude 2.1.330's first-run dialogs).
 */
export function readQuestion(screen: string, lines = 20): Question | null {
  const bottom = bottomLines(screen, lines).map(clean);
  const row = readRow(bottom);
  if (row) return row;
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

/** A key hint beside a menu: `ctrl+f fullscreen`, `⇆ select`, `enter confirm`, `esc reject`. */
const HINT = /^(?:\S+\+\S+|[⇆↔←→↑↓]+|enter|esc|tab|space)\s+\S/iu;

/**
 * A menu whose items stand on one line, with a `select` or `confirm` key hint after them:
 * `Allow once   Allow always   Reject        ctrl+f fullscreen  ⇆ select  enter confirm`.
 */
function readRow(bottom: string[]): Question | null {
  const at = bottom.findLastIndex((l) => {
    const parts = l.split(/\s{2,}/u);
    return parts.some((p) => HINT.test(p) && /\b(?:select|confirm)\b/iu.test(p)) && parts.findIndex((p) => HINT.test(p)) >= 2;
  });
  if (at < 0) return null;
  const parts = bottom[at]!.split(/\s{2,}/u);
  const choices = parts.slice(
    0,
    parts.findIndex((p) => HINT.test(p)),
  );
  return { text: questionAbove(bottom.slice(0, at)), choices, layout: 'row' };
}

/**
 * Which item of a row menu is highlighted, from a capture with escapes (`capture-pane -e`): the one item
 * drawn with a background (or reverse video) that no other item has. undefined when that is not so.
 */
export function rowHighlight(ansiScreen: string, choices: readonly string[]): number | undefined {
  if (choices.length < 2) return undefined;
  for (const line of ansiScreen.split('\n').reverse()) {
    const cells = styledCells(line);
    const plain = cells.map((c) => c.ch).join('');
    let from = 0;
    const styles: string[] = [];
    for (const choice of choices) {
      const i = plain.indexOf(choice, from);
      if (i < 0) break;
      styles.push(cells[i]!.style);
      from = i + choice.length;
    }
    if (styles.length !== choices.length) continue;
    // One item drawn unlike all the others, which look alike (two items that differ say nothing).
    const unique = styles.flatMap((s, i) => (styles.filter((t) => t === s).length === 1 ? [i] : []));
    return unique.length === 1 ? unique[0] : undefined;
  }
  return undefined;
}

/** Each printed character of a line with the background and reverse-video state it was drawn with. */
function styledCells(line: string): { ch: string; style: string }[] {
  const out: { ch: string; style: string }[] = [];
  let bg = '';
  let inverse = false;
  const re = /\x1b\[([0-9;:]*)m|\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|([^\x1b])/gu;
  for (const m of line.matchAll(re)) {
    if (m[2] !== undefined) {
      out.push({ ch: m[2], style: `${bg}|${inverse ? 'inv' : ''}` });
      continue;
    }
    if (m[1] === undefined) continue;
    const codes = m[1] === '' ? ['0'] : m[1].split(/[;:]/u);
    for (let i = 0; i < codes.length; i++) {
      const n = Number(codes[i]);
      if (n === 0) {
        bg = '';
        inverse = false;
      } else if (n === 7) inverse = true;
      else if (n === 27) inverse = false;
      else if (n === 49) bg = '';
      else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) bg = String(n);
      else if (n === 48 && codes[i + 1] === '5') {
        bg = `5;${codes[i + 2]}`;
        i += 2;
      } else if (n === 48 && codes[i + 1] === '2') {
        bg = `2;${codes.slice(i + 2, i + 5).join(';')}`;
        i += 4;
      } else if (n === 38 && codes[i + 1] === '5') i += 2;
      else if (n === 38 && codes[i + 1] === '2') i += 4;
    }
  }
  return out;
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
