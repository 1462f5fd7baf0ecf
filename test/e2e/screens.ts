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
  // opencode's footer says `esc interrupt` while a turn runs (`esc again to interrupt` after one press);
  // its hint line `ctrl+p commands` shows once the input box is drawn (a blank screen until then).
  opencode: { idle: /ctrl\+p commands/, busy: /esc (?:again to )?interrupt/, waiting: /△ Permission required/ },
  // copilot's footer: `/ commands · ? help` at rest, `◎ Working esc esc edit prompt` while a turn runs.
  copilot: { idle: /\/ commands · \? help/, busy: /Working\b.*\besc\b/, waiting: /Do you want to run this command\?/ },
};

/**
 * The pane size each CLI runs at in these tests: opencode opens a sidebar beside the conversation on a
 * screen wider than 120 columns, so its profile (and these tests) keep it at 120.
 */
export const PANE_SIZE: Record<CliName, { cols: number; rows: number }> = {
  claude: { cols: 200, rows: 50 },
  qwen: { cols: 200, rows: 50 },
  gemini: { cols: 200, rows: 50 },
  codex: { cols: 200, rows: 50 },
  opencode: { cols: 120, rows: 50 },
  copilot: { cols: 200, rows: 50 },
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
