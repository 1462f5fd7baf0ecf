import type { Profile } from '../profiles/schema.js';

/**
 * History lines of the first look: the prompt's echo is nearly always in them, and a pane's whole
 * history (which grows with every turn) is read only when it is not. Everything read from a screen
 * for a turn's end comes after the echo's last sighting, so the two readings give the same answer.
 */
export const RECENT_LINES = 200;

/** How many non-blank lines at the bottom of the screen are the CLI's input area (its idle rules' reach). */
export function inputAreaLines(profile: Profile): number {
  return Math.max(0, ...profile.detect.rules.filter((r) => r.status === 'idle').map((r) => r.lines));
}

/** The screen cut in two: what is above the input area, and the input area (its last `n` non-blank lines). */
export function splitAtInputArea(screen: string, n: number): { above: string[]; input: string[] } {
  const lines = screen.split('\n').map((l) => l.trimEnd());
  let cut = lines.length;
  for (let seen = 0; cut > 0 && seen < n;) {
    cut--;
    if (lines[cut]!.trim() !== '') seen++;
  }
  return { above: lines.slice(0, cut), input: lines.slice(cut) };
}

/** Where a prompt's mark (its nonce tag, or its tail) shows: how many times above the input area, and whether in it. */
export interface PromptSighting {
  echoes: number;
  inInput: boolean;
}

export function sightPrompt(screen: string, mark: string, inputLines: number): PromptSighting {
  if (!mark) return { echoes: 0, inInput: false };
  const { above, input } = splitAtInputArea(screen, inputLines);
  return { echoes: above.filter((l) => l.includes(mark)).length, inInput: input.some((l) => l.includes(mark)) };
}

/**
 * What a screen says about a prompt after its submit key: `taken` when it shows one more echo of the
 * prompt's mark above the input area than before the paste, `in-input` when the text still sits in
 * the input box (so it was certainly not submitted), `cleared` when the text was seen in the input
 * box after the paste and is gone now without an echo (a slash command, a TUI that does not echo),
 * else `unknown`.
 */
export type PromptEvidence = 'taken' | 'in-input' | 'cleared' | 'unknown';

export function promptEvidence(before: PromptSighting, now: PromptSighting, pastedVisible = false): PromptEvidence {
  if (now.echoes > before.echoes) return 'taken';
  if (now.inInput) return 'in-input';
  if (pastedVisible) return 'cleared';
  return 'unknown';
}

/**
 * A jaggers prompt (its `[jg:<nonce>]` tag) other than `mine` typed into the input box and never
 * submitted: the last tag on screen, inside the input area, with no reply or turn summary after it (an
 * echo of a prompt that was taken has its reply below it; after a resume that can be near the bottom).
 */
export function strayPrompt(screen: string, inputLines: number, mine: string | null, after: readonly RegExp[]): string | null {
  const lines = screen.split('\n');
  const { above } = splitAtInputArea(screen, inputLines);
  for (let i = lines.length - 1; i >= 0; i--) {
    const tags = [...lines[i]!.matchAll(/\[jg:([0-9a-f]{4,16})\]/g)];
    if (tags.length === 0) continue;
    const last = tags.at(-1)!;
    if (last[1] === mine || i < above.length) return null;
    return lines.slice(i + 1).some((l) => after.some((re) => re.test(l))) ? null : last[0];
  }
  return null;
}
