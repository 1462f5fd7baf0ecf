// `jaggers answer` on fakes: a menu that drops the first arrow key (claude 2.1.330 takes no keys for a
// moment after its menu appears) still gets its highlight moved and Enter pressed on the choice; one that
// never follows is refused with Enter never pressed.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Answers } from '../../src/agents/answer.js';
import type { TerminalEntry } from '../../src/agents/table.js';
import { silentLog } from '../../src/logger.js';

/** claude 2.1.330's trust dialog (test/fixtures/screens/claude-2.1.330-waiting-trust.txt), highlight on `at`. */
function trustScreen(at: number): string {
  const items = ['No, exit', 'Yes, I trust this folder'].map((c, i) => `${i === at ? ' ❯ ' : '   '}${c}`);
  return [
    ' Accessing workspace:',
    '',
    ' /tmp/p/agents/claude',
    '',
    ' Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source project, or work from your team).',
    '',
    " Claude Code'll be able to read, edit, and execute files here.",
    '',
    ...items,
    '',
    ' Enter to confirm · Esc to cancel',
  ].join('\n');
}

/** A pane showing the dialog: arrows move the highlight unless dropped; Enter on "Yes" trusts (idle). */
function fakeMenu(o: { drop: number }) {
  let at = 0;
  let status = 'waiting_input';
  let dropped = 0;
  const sent: string[] = [];
  const screens = new Set<(paneId: string, screen: string) => void>();
  const screen = () => (status === 'waiting_input' ? trustScreen(at) : ' ❯ \n');
  const draw = () => {
    for (const l of [...screens]) l('%1', screen());
  };
  const ports = {
    table: { get: async () => ({ pane: { paneId: '%1', agent: 'claude' } }) as unknown as TerminalEntry },
    watcher: {
      status: () => status,
      onScreen: (l: (paneId: string, screen: string) => void) => (screens.add(l), () => screens.delete(l)),
      waitFor: (_p: string, statuses: readonly string[]) => (statuses.includes(status) ? Promise.resolve() : Promise.reject(new Error('still waiting'))),
    },
    io: { capture: async () => screen() },
    keys: {
      literal: async (_p: string, text: string) => void sent.push(text),
      send: async (_p: string, keys: readonly string[]) => {
        for (const k of keys) {
          sent.push(k);
          if (k === 'Down' || k === 'Up') {
            if (dropped < o.drop) {
              dropped++;
              continue;
            }
            at = Math.max(0, Math.min(1, at + (k === 'Down' ? 1 : -1)));
          } else if (k === 'Enter' && status === 'waiting_input') status = at === 1 ? 'idle' : 'exited';
        }
        draw();
      },
    },
    log: silentLog,
    delay: async () => {},
  };
  return { answers: new Answers(ports), sent, status: () => status };
}

describe('answer: arrows a menu drops', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => void vi.useRealTimers());

  it('a dropped Down is sent again from where the highlight is; Enter only on the choice', async () => {
    const m = fakeMenu({ drop: 1 });
    const run = m.answers.answer('claude', { choice: 'yes' });
    await vi.advanceTimersByTimeAsync(10_000);
    const r = await run;
    expect(r.chose.label).toBe('Yes, I trust this folder');
    expect(m.sent).toEqual(['Down', 'Down', 'Enter']);
    expect(m.status()).toBe('idle');
  });

  it('a menu that never follows is refused, Enter never pressed', async () => {
    const m = fakeMenu({ drop: 99 });
    const run = m.answers.answer('claude', { choice: 'yes' }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(20_000);
    const e = (await run) as Error;
    expect(e.message).toMatch(
      /menu did not follow: after Down, Down, Down the highlight is on "No, exit", not on "Yes, I trust this folder"; Enter was not pressed/,
    );
    expect(m.sent).not.toContain('Enter');
    expect(m.status()).toBe('waiting_input');
  });
});
