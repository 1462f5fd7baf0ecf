// What each real CLI's screen shows in each state, as seen in tmux at 200x50 (see the fixtures in
// test/fixtures/screens). Only what the end-to-end tests need to wait for; jaggers' own detection
// lives in src/detect.

import type { CliName } from './clis.js';

export interface ScreenPatterns {
  /** The input box is ready (check `busy` and `waiting` first: some CLIs keep it on screen then). */
  idle: RegExp;
  /** A turn is running. */
  busy: RegExp;
  /** A tool approval menu. */
  waiting: RegExp;
  /** Still loading although the input box shows: typing now is queued or dropped. */
  starting?: RegExp;
}

export const SCREENS: Record<CliName, ScreenPatterns> = {
  claude: { idle: /^❯ *$[\s\S]*\? for shortcuts/m, busy: /esc to interrupt/, waiting: /Do you want to proceed\?/ },
  qwen: { idle: /Type your message or @path\/to\/file/, busy: /esc to cancel/, waiting: /Waiting for user confirmation/ },
  // gemini draws its input box before its config (and a resumed conversation) has loaded; the screen
  // then has nothing above the box's `? for shortcuts` line, or shows `Resuming session...`.
  gemini: {
    idle: /Type your message or @path\/to\/file/,
    busy: /esc to cancel/,
    waiting: /Allow execution of/,
    starting: /^\s*\? for shortcuts *\n|Resuming session\.\.\./,
  },
  // codex rotates the placeholder text of its input box: match the footer instead.
  codex: { idle: /^› [\s\S]*\? for shortcuts/m, busy: /esc to interrupt/, waiting: /Would you like to run the following command\?/ },
};

export type ScreenState = 'idle' | 'busy' | 'waiting' | 'starting' | 'other';

/** Busy, waiting and starting evidence win over idle evidence. */
export function screenState(cli: CliName, screen: string): ScreenState {
  const p = SCREENS[cli];
  if (p.waiting.test(screen)) return 'waiting';
  if (p.busy.test(screen)) return 'busy';
  if (p.starting?.test(screen)) return 'starting';
  if (p.idle.test(screen)) return 'idle';
  return 'other';
}
