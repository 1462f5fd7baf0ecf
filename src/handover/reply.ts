import { inputAreaLines, splitAtInputArea } from '../delivery/evidence.js';
import { classify, regexOf } from '../detect/classify.js';
import type { Profile } from '../profiles/schema.js';

/**
 * The reply as the screen shows it: the lines after the prompt's echo (found by its nonce), up to the
 * input area at the bottom (the lines the idle rule looks at) and without the screen furniture just
 * above it (the profile's `chrome`: hints, rules, a turn summary; also off the start, where the
 * prompt's box ends). The CLI's reply marker (`✦`, `●`, `•`) is taken off the start of each reply block,
 * and the blocks' indentation with it; a CLI without a marker (opencode) loses the indentation all
 * lines share.
 */
export function replyFromScreen(screen: string, nonce: string, profile: Profile): string {
  const { above } = splitAtInputArea(screen, inputAreaLines(profile));
  const start = above.findLastIndex((l) => l.includes(`[jg:${nonce}]`)) + 1;
  let body = above.slice(start);
  const chrome = profile.detect.chrome ? new RegExp(profile.detect.chrome, 'u') : null;
  const furniture = (l: string) => l.trim() === '' || (chrome?.test(l) ?? false);
  while (body.length && furniture(body.at(-1)!)) body = body.slice(0, -1);
  while (body.length && furniture(body[0]!)) body = body.slice(1);
  body = profile.detect.replyMarker ? unmark(body, new RegExp(profile.detect.replyMarker, 'u')) : dedent(body);
  return body.join('\n').trim();
}

/** The lines without the indentation every non-blank one of them has. */
function dedent(lines: string[]): string[] {
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return lines.map((l) => l.slice(Math.min(cut, /^ */.exec(l)![0].length)));
}

/** From the first line the marker starts on: the marker off each block's first line, the blocks' indent off the rest. */
function unmark(lines: string[], marker: RegExp): string[] {
  const first = lines.findIndex((l) => marker.test(l));
  if (first < 0) return lines;
  const width = marker.exec(lines[first]!)![0].length;
  const indent = ' '.repeat(width);
  return lines.slice(first).map((l) => {
    const m = marker.exec(l);
    if (m && m.index === 0 && m[0].length === width) return l.slice(width);
    return l.startsWith(indent) ? l.slice(width) : l.trimStart();
  });
}

/** What a screen shows of a turn's end, for the turn engine and for a timeout's message. */
export interface ScreenEnd {
  /** The prompt's echo (its nonce tag) is above the input area. */
  echo: boolean;
  /** Something after the echo is busy or asking (a spinner, a menu). */
  busyAfter: boolean;
  /**
   * The CLI's end-of-turn mark comes after the echo: a `done` rule's line (a turn summary such as
   * `Worked for 3s`); for a CLI without one, the start of a reply (its reply marker, e.g. `✦`).
   */
  mark: boolean;
  ended: boolean;
}

export function screenTurnEnd(screen: string, nonce: string, profile: Profile): ScreenEnd {
  const { above, input } = splitAtInputArea(screen, inputAreaLines(profile));
  const echoAt = above.findLastIndex((l) => l.includes(`[jg:${nonce}]`));
  if (echoAt < 0) return { echo: false, busyAfter: false, mark: false, ended: false };
  const after = [...above.slice(echoAt + 1), ...input];
  const rules = profile.detect.rules.filter((r) => r.region !== 'raw');
  const status = classify({ screen: after.join('\n'), raw: '', rules }).status;
  const busyAfter = status === 'busy' || status === 'waiting_input';
  const doneRules = rules.filter((r) => r.status === 'done');
  const replyMarker = profile.detect.replyMarker ? regexOf(profile.detect.replyMarker) : null;
  const mark =
    doneRules.length > 0
      ? doneRules.some((r) => after.some((l) => regexOf(r.pattern).test(l)))
      : replyMarker
        ? above.slice(echoAt + 1).some((l) => replyMarker.test(l))
        : above.slice(echoAt + 1).some((l) => l.trim() !== '');
  return { echo: true, busyAfter, mark, ended: !busyAfter && mark };
}

/**
 * The prompt's echo is above the input area, nothing after it is busy or asking, and the CLI's
 * end-of-turn mark (a `done` rule's line, else the start of a reply) comes after the echo.
 */
export function screenShowsTurnEnd(screen: string, nonce: string, profile: Profile): boolean {
  return screenTurnEnd(screen, nonce, profile).ended;
}

/** In words, for messages: `the prompt's echo: yes; an end-of-turn mark after it: no`. */
export function describeScreenEnd(e: ScreenEnd | null): string {
  if (!e) return "the screen was not read for the turn's end";
  if (!e.echo) return "the prompt's echo is not on screen";
  return `the prompt's echo is on screen; after it ${e.busyAfter ? 'something busy or asking' : 'nothing busy'} and ${e.mark ? 'an end-of-turn mark' : 'no end-of-turn mark yet'}`;
}
