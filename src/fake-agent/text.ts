// Terminal text helpers: display width (CJK and emoji take two cells, combining marks none),
// cutting and wrapping by width, and making user text safe to draw.

/** Cells a code point takes in a terminal; an approximation of wcwidth. */
export function charWidth(cp: number): number {
  if (cp === 0) return 0;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (isZeroWidth(cp)) return 0;
  return isWide(cp) ? 2 : 1;
}

function isZeroWidth(cp: number): boolean {
  return (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x0483 && cp <= 0x0489) ||
    (cp >= 0x0591 && cp <= 0x05bd) ||
    (cp >= 0x0610 && cp <= 0x061a) ||
    (cp >= 0x064b && cp <= 0x065f) ||
    (cp >= 0x0e31 && cp <= 0x0e3a && cp !== 0x0e32 && cp !== 0x0e33) ||
    (cp >= 0x1ab0 && cp <= 0x1aff) ||
    (cp >= 0x1dc0 && cp <= 0x1dff) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x20d0 && cp <= 0x20ff) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xfe20 && cp <= 0xfe2f) ||
    cp === 0xfeff ||
    (cp >= 0xe0100 && cp <= 0xe01ef)
  );
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x1f680 && cp <= 0x1f6ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

export function stringWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0) ?? 0);
  return w;
}

/** Control characters would move the cursor: draw a tab as a space and the rest as `?`. */
export function sanitize(s: string): string {
  return s.replace(/\t/g, ' ').replace(/[\x00-\x1f\x7f-\x9f]/g, '?');
}

/** The longest prefix of `s` that fits in `width` cells. */
export function fitWidth(s: string, width: number): string {
  let w = 0;
  let end = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0) ?? 0);
    if (w + cw > width) break;
    w += cw;
    end += ch.length;
  }
  return s.slice(0, end);
}

/** `s` padded with spaces (or cut) to exactly `width` cells. */
export function padWidth(s: string, width: number): string {
  const cut = fitWidth(s, width);
  return cut + ' '.repeat(Math.max(0, width - stringWidth(cut)));
}

/** Hard-wraps one line into pieces of at most `width` cells (at least one piece). */
export function wrapWidth(s: string, width: number): string[] {
  if (width <= 0) return [''];
  const out: string[] = [];
  let rest = s;
  while (stringWidth(rest) > width) {
    let piece = fitWidth(rest, width);
    if (piece === '') piece = String.fromCodePoint(rest.codePointAt(0) ?? 0x3f);
    out.push(piece);
    rest = rest.slice(piece.length);
  }
  out.push(rest);
  return out;
}

/**
 * `s` in lines of at most `width` cells, broken at a space as the real CLIs wrap a prompt's echo (the
 * space itself dropped); a word longer than a line is broken anywhere. So a prompt's last word, its
 * `[jg:<nonce>]`, lands whole on one line, as it does on their screens.
 */
export function wrapWords(s: string, width: number): string[] {
  const out: string[] = [];
  let left = s;
  const w = Math.max(1, width);
  while (stringWidth(left) > w) {
    let piece = fitWidth(left, w);
    if (piece === '') piece = String.fromCodePoint(left.codePointAt(0) ?? 0x3f);
    const space = piece.lastIndexOf(' ');
    if (left[piece.length] === ' ') left = left.slice(piece.length + 1);
    else if (space > 0) {
      left = left.slice(space + 1);
      piece = piece.slice(0, space);
    } else left = left.slice(piece.length);
    out.push(piece);
  }
  out.push(left);
  return out;
}

/** The first `n` code points of `s` (never splits a surrogate pair). */
export function takeCodePoints(s: string, n: number): string {
  let count = 0;
  let end = 0;
  for (const ch of s) {
    if (count === n) break;
    count++;
    end += ch.length;
  }
  return s.slice(0, end);
}

export function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl === -1 ? s : s.slice(0, nl);
}

export function lastLine(s: string): string {
  return s.slice(s.lastIndexOf('\n') + 1);
}

/** Removes the last code point (one Backspace). */
export function dropLastCodePoint(s: string): string {
  if (s === '') return s;
  const last = s.charCodeAt(s.length - 1);
  const isLowSurrogate = last >= 0xdc00 && last <= 0xdfff;
  const prev = s.length >= 2 ? s.charCodeAt(s.length - 2) : 0;
  const pair = isLowSurrogate && prev >= 0xd800 && prev <= 0xdbff;
  return s.slice(0, s.length - (pair ? 2 : 1));
}
