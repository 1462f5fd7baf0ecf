// The one place that ranks a pane's signals (issue 27): a CLI's hook event first, its state file next
// (src/detect/state-file.ts `combine`), the screen last. The screen still decides what no hook reports:
// a menu or an error on screen, and the end of a turn that no hook ended (Esc, a denied permission)
// once it has shown the CLI quiet for a while. Pure: times come in, a decision goes out.
import type { Classification } from './classify.js';
import { combine } from './state-file.js';

/** What the pane's hooks said last, as ranking needs it. */
export interface HookWord {
  /**
   * busy: a turn started (no end seen yet); done: a turn ended (the screen may still lag); waiting: the
   * CLI asked for a permission (its menu may not be drawn yet); null: nothing pending.
   */
  status: 'busy' | 'done' | 'waiting' | null;
  event: string;
  /** When the screen and state file first read quiet while the hook said busy (null: not quiet since). */
  quietSince: number | null;
  /** waiting, done: when the hook came; waiting: whether the screen has shown the menu since. */
  since?: number;
  menuSeen?: boolean;
  /**
   * done, on a pane whose turns start by a hook: the screen has caught up (read quiet) or a prompt went
   * in since. The word then holds nothing back (every reading goes through); it stays so that the
   * pane's output, idle by its hooks, asks only for a late look at its screen.
   */
  confirmed?: boolean;
  /** done, confirmed: by a prompt jaggers typed (its busy screen opens the turn at once), not by the screen catching up. */
  byPrompt?: boolean;
  /** done, confirmed by the screen catching up: when the screen (or state file) first read busy since, with no hook start. */
  busySince?: number | null;
}

export type Ranked =
  /** Hand this reading to the machine. */
  | { kind: 'apply'; c: Classification; source: 'screen' | 'state-file' }
  /** The hook's word stands; look again at `until` when set (a quiet screen that may be an unreported end). */
  | { kind: 'hold'; until: number | null; why: string };

/**
 * Rank a fresh reading of the screen (and state file) against what the hooks said.
 * - A menu, an error or a usage limit on screen always goes through: no hook reports them.
 * - After a hook's turn start, a quiet reading goes through only once it has stayed quiet `graceMs`
 *   (no end event after Esc or a denied permission: the screen ends such a turn, named as such).
 * - After a hook's turn end, a busy reading is the screen lagging behind: held until the screen reads
 *   quiet once or the next turn starts. After that, busy with no hook start is a new turn only once it
 *   stayed busy for `graceMs` (at once after a prompt jaggers typed).
 * - After a hook's permission request, a reading without the menu is held (the menu is drawn a moment
 *   later; the caller applies the hook's word itself once `graceMs` passed without one); once the menu
 *   was seen, the screen decides.
 */
export function rank(screen: Classification, file: Classification | null, hook: HookWord | null, at: number, graceMs: number): Ranked {
  const base = combine(screen, file);
  const s = base.c.status;
  // After a permission hook only the screen's menu counts (its question and choices go with the state),
  // not a state file that already says waiting while the menu is not drawn yet: the hook comes before
  // the CLI draws it (opencode and copilot still showed their busy footer), so a reading without it is
  // the screen lagging (past the grace with no menu, the caller applies the hook's own word). Once the
  // menu was seen, what follows it (busy: approved; quiet: denied, no end event) is the screen's to say.
  if (hook?.status === 'waiting' && !hook.menuSeen && screen.status !== 'waiting_input' && screen.status !== 'error' && screen.status !== 'limited') {
    const why = `hook ${hook.event} says waiting; the screen reads ${screen.status} (its menu not drawn yet)`;
    return { kind: 'hold', until: (hook.since ?? at) + graceMs, why };
  }
  // Right after a hook's turn end, the menu the turn had shown may still be on screen (seen: the fake
  // agent's approved menu, read 6 ms after its Stop): held for up to the grace, then it goes through.
  if (hook?.status === 'done' && !hook.confirmed && s === 'waiting_input' && at - (hook.since ?? at) < graceMs) {
    return { kind: 'hold', until: (hook.since ?? at) + graceMs, why: `hook ${hook.event} ended the turn; a menu still on screen` };
  }
  // After the screen caught up with a hook's turn end, busy with no hook start (and no prompt typed) is a
  // turn only once it stayed so for the grace: opencode 1.18.33 on a loaded machine showed its busy footer
  // again for 2.9 s after its turn had ended, and a person's own prompt starts by the CLI's hook anyway.
  if (hook?.status === 'done' && hook.confirmed && !hook.byPrompt && s === 'busy') {
    const since = hook.busySince ?? at;
    if (at - since < graceMs)
      return { kind: 'hold', until: since + graceMs, why: `no hook started a turn; the ${base.source} reads busy for ${at - since} ms` };
  }
  if (!hook?.status || hook.confirmed || hook.status === 'waiting' || s === 'waiting_input' || s === 'error' || s === 'limited' || s === 'unknown')
    return { kind: 'apply', ...base };
  const quiet = s === 'idle' || s === 'done';
  if (hook.status === 'busy') {
    if (s === 'busy' || s === 'starting') return { kind: 'hold', until: null, why: `hook ${hook.event} says busy` };
    const since = hook.quietSince ?? at;
    if (at - since < graceMs) return { kind: 'hold', until: since + graceMs, why: `hook ${hook.event} says busy; quiet for ${at - since} ms` };
    const c = { ...base.c, rule: `${base.c.rule ?? 'quiet'} (no hook end event after ${hook.event} within ${graceMs} ms)` };
    return { kind: 'apply', c, source: base.source };
  }
  // hook.status === 'done'
  if (quiet) return { kind: 'apply', ...base };
  return { kind: 'hold', until: null, why: `hook ${hook.event} ended the turn; the ${base.source} still reads ${s}` };
}
