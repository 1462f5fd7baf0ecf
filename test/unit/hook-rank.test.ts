// rank(): the one place a pane's signals are ranked (issue 27): hook, then state file, then screen.
import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/detect/classify.js';
import { rank, type HookWord } from '../../src/detect/rank.js';

const c = (status: Classification['status'], rule: string = status): Classification => ({ status, rule, lines: [] });
const busy = (quietSince: number | null = null): HookWord => ({ status: 'busy', event: 'UserPromptSubmit', quietSince });
const ended: HookWord = { status: 'done', event: 'Stop', quietSince: null };
const asked = (menuSeen = false): HookWord => ({ status: 'waiting', event: 'PermissionRequest', quietSince: null, since: 1000, menuSeen });

describe('rank: hook > state file > screen', () => {
  it.each([
    // [screen, file, hook, at, expected kind, expected status or hold]
    ['no hook: the state file over the screen', c('idle'), c('busy'), null, 0, 'apply', 'busy', 'state-file'],
    ['no hook: a menu on screen over the file', c('waiting_input'), c('busy'), null, 0, 'apply', 'waiting_input', 'screen'],
    ['hook busy, screen busy: the hook stands', c('busy'), null, busy(), 0, 'hold', null, null],
    ['hook busy, screen quiet within the grace: held', c('idle'), null, busy(1000), 2000, 'hold', 4000, null],
    ['hook busy, file idle within the grace: held', c('busy'), c('idle'), busy(1000), 3999, 'hold', 4000, null],
    ['hook busy, screen quiet past the grace (Esc, a denial): the screen', c('idle'), null, busy(1000), 4000, 'apply', 'idle', 'screen'],
    ['hook busy, a menu on screen: the screen', c('waiting_input'), null, busy(), 0, 'apply', 'waiting_input', 'screen'],
    ['hook busy, an error on screen: the screen', c('error'), null, busy(), 0, 'apply', 'error', 'screen'],
    ['hook done, screen still busy (lag): held', c('busy'), null, ended, 0, 'hold', null, null],
    ['hook done, file still busy (lag): held', c('idle'), c('busy'), ended, 0, 'hold', null, null],
    ['hook done, screen quiet: the screen caught up', c('done'), null, ended, 0, 'apply', 'done', 'screen'],
    [
      'hook done, a prompt went in, screen busy: its turn, at once',
      c('busy'),
      null,
      { ...ended, confirmed: true, byPrompt: true },
      0,
      'apply',
      'busy',
      'screen',
    ],
    [
      'hook done, the screen caught up, then busy with no hook start: held for the grace',
      c('busy'),
      null,
      { ...ended, confirmed: true },
      1000,
      'hold',
      4000,
      null,
    ],
    ['the same, busy since 1000, at 3999: still held', c('busy'), null, { ...ended, confirmed: true, busySince: 1000 }, 3999, 'hold', 4000, null],
    [
      'the same, busy past the grace (a turn no hook started): the screen',
      c('busy'),
      null,
      { ...ended, confirmed: true, busySince: 1000 },
      4000,
      'apply',
      'busy',
      'screen',
    ],
    ['the same, the state file busy: held too', c('idle'), c('busy'), { ...ended, confirmed: true, busySince: 1000 }, 2000, 'hold', 4000, null],
    [
      'hook done and confirmed, a menu right after: the screen',
      c('waiting_input'),
      null,
      { ...ended, since: 1000, confirmed: true },
      1100,
      'apply',
      'waiting_input',
      'screen',
    ],
    ["hook done, the turn's menu still on screen right after: held", c('waiting_input'), null, { ...ended, since: 1000 }, 1100, 'hold', 4000, null],
    ['hook done, a menu past the grace: the screen', c('waiting_input'), null, { ...ended, since: 1000 }, 4000, 'apply', 'waiting_input', 'screen'],
    ['hook waiting, its menu on screen: the screen', c('waiting_input'), null, asked(), 1100, 'apply', 'waiting_input', 'screen'],
    ['hook waiting, the menu not drawn yet (busy footer): held', c('busy'), null, asked(), 1100, 'hold', 4000, null],
    ['hook waiting, no menu past the grace: still held (the watcher applies the hook itself)', c('busy'), null, asked(), 4000, 'hold', 4000, null],
    ['hook waiting, busy after the menu was seen (approved): the screen', c('busy'), null, asked(true), 1100, 'apply', 'busy', 'screen'],
    ['hook waiting, quiet after the menu was seen (denied): the screen', c('idle'), null, asked(true), 1100, 'apply', 'idle', 'screen'],
    ['hook waiting, the state file says waiting but no menu on screen yet: held', c('idle'), c('waiting_input'), asked(), 1100, 'hold', 4000, null],
  ] as const)('%s', (_name, screen, file, hook, at, kind, what, source) => {
    const r = rank(screen, file, hook ? { ...hook } : null, at, 3000);
    expect(r.kind).toBe(kind);
    if (r.kind === 'apply') expect([r.c.status, r.source]).toEqual([what, source]);
    else expect(r.until).toBe(what);
  });

  it('a quiet screen past the grace says in its rule that no end event came', () => {
    const r = rank(c('idle', 'input-box'), null, busy(0), 5000, 3000);
    expect(r).toMatchObject({ kind: 'apply', c: { rule: 'input-box (no hook end event after UserPromptSubmit within 3000 ms)' } });
  });
});
