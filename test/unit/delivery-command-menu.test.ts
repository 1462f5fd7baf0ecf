// deliverNow (src/delivery/deliver.ts) for a `send` of a slash command into a TUI that lists matching
// commands in a menu above its input box as the text is typed (opencode 1.18.33: `/compact  Compact
// session`). In CI the Enter was lost, the menu's line read as the command's echo, the compaction never
// ran, and the next prompt was pasted behind `/compact` in the box. An echo already on screen before the
// submit key proves nothing: the text still in the box gets the key again.
import { describe, expect, it } from 'vitest';
import { deliverNow } from '../../src/delivery/deliver.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { testProfile } from '../helpers/work-fakes.js';

/** A TUI with a command menu: the first `lose` Enters are lost while the menu shows; the next one runs the command (no echo). */
class CommandMenu extends FakeTui {
  lose = 1;
  /** False: the menu draws only after the first Enter (a loaded machine: after jaggers looked at the box). */
  menuAtOnce = true;
  readonly ran: string[] = [];

  override screen(): string {
    const s = super.screen();
    const menu = this.input.startsWith('/') && (this.menuAtOnce || this.keys.length > 0);
    return menu ? s.replace(/(^|\n)> /, `$1  ${this.input.trim()}      Compact session\n\n> `) : s;
  }

  override async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
    if (keys.includes('Enter') && this.input.startsWith('/')) {
      this.keys.push([...keys]);
      if (this.lose > 0) {
        this.lose--;
        this.set(this.current);
        return;
      }
      this.ran.push(this.input);
      this.input = '';
      this.set(this.current);
      return;
    }
    return super.sendKeys(paneId, keys);
  }
}

const profile = testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 2000, readyTimeoutMs: 1000, maxSubmitRetries: 2 } });
const target = (tui: FakeTui) => ({ paneId: tui.paneId, agent: 'coder', profile });

describe('a slash command whose menu shows it above the input box', () => {
  it('the menu is no echo: an Enter that was lost is pressed again, and the box emptied proves the command', async () => {
    const tui = new CommandMenu('%1', profile, 'done');
    const d = await deliverNow(tui, tui, target(tui), '/compact', { acceptCleared: true, retryAfterMs: 20 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'cleared', submits: 2 });
    expect(tui.ran).toEqual(['/compact']);
    expect(tui.input).toBe('');
  });

  it('a menu drawn only after the lost Enter is no echo either', async () => {
    const tui = new CommandMenu('%1', profile, 'done');
    tui.menuAtOnce = false;
    const d = await deliverNow(tui, tui, target(tui), '/compact', { acceptCleared: true, retryAfterMs: 20 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'cleared', submits: 2 });
    expect(tui.ran).toEqual(['/compact']);
  });

  it('an Enter that went in at once is proved by the box emptied, with one key', async () => {
    const tui = new CommandMenu('%1', profile, 'done');
    tui.lose = 0;
    const d = await deliverNow(tui, tui, target(tui), '/compact', { acceptCleared: true, retryAfterMs: 20 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'cleared', submits: 1 });
    expect(tui.ran).toEqual(['/compact']);
  });

  it('a command that stays in the box through every key is a timeout that says so, not a delivery', async () => {
    const tui = new CommandMenu('%1', profile, 'done');
    tui.lose = 99;
    const d = await deliverNow(tui, tui, target(tui), '/compact', { acceptCleared: true, retryAfterMs: 20, verifyTimeoutMs: 300 });
    expect(d).toMatchObject({ kind: 'timeout', stillInInput: true, submits: 3 });
    expect(tui.ran).toEqual([]);
  });
});
