// deliverNow (src/delivery/deliver.ts) on a pane whose screen already read busy before the paste (its
// machine said ready on a hook's turn end while the CLI still drew its busy footer, as opencode did after
// session.idle in CI): a busy status after the submit key proves nothing there; only the prompt's echo does.
import { describe, expect, it } from 'vitest';
import { deliverNow } from '../../src/delivery/deliver.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { testProfile } from '../helpers/work-fakes.js';

const SPINNER = '⠋ Working (esc to cancel)';

/** A TUI that still shows its spinner after its turn ended; while it does, it drops a submitted prompt or takes it, as told. */
class LateSpinner extends FakeTui {
  spinning = true;
  dropWhileSpinning = true;

  override screen(): string {
    const s = super.screen();
    return this.spinning && this.current !== 'busy' ? s.replace(/(^|\n)> /, `$1${SPINNER}\n> `) : s;
  }

  override async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
    if (this.spinning && this.dropWhileSpinning && keys.includes('Enter')) {
      // The prompt is gone from the box, never taken; the busy footer is read again, then the turn's old end.
      this.input = '';
      this.keys.push([...keys]);
      this.set('busy');
      this.spinning = false;
      setImmediate(() => this.set('done'));
      return;
    }
    this.spinning = false;
    return super.sendKeys(paneId, keys);
  }
}

const profile = testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 300, readyTimeoutMs: 1000, maxSubmitRetries: 0 } });
const target = (tui: FakeTui) => ({ paneId: tui.paneId, agent: 'coder', profile });

describe('delivery on a pane that read busy before the paste', () => {
  it('a busy status after the submit key is no proof: the dropped prompt is not counted delivered', async () => {
    const tui = new LateSpinner('%1', profile, 'done');
    const d = await deliverNow(tui, tui, target(tui), 'read the inbox file [jg:0123456789abcdef]', { nonce: '0123456789abcdef', retryAfterMs: 50 });
    expect(d.kind).toBe('timeout');
    expect(tui.prompts).toEqual([]);
  });

  it('the prompt echoed proves it', async () => {
    const tui = new LateSpinner('%1', profile, 'done');
    tui.dropWhileSpinning = false;
    tui.autoReply = () => 'ok';
    const d = await deliverNow(tui, tui, target(tui), 'read the inbox file [jg:0123456789abcdef]', { nonce: '0123456789abcdef', retryAfterMs: 50 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'echo' });
    expect(tui.prompts).toEqual(['read the inbox file [jg:0123456789abcdef]']);
  });

  it('without a busy screen before, busy after the submit key proves it as before', async () => {
    const tui = new FakeTui('%1', profile, 'done');
    const d = await deliverNow(tui, tui, target(tui), 'read the inbox file [jg:0123456789abcdef]', { nonce: '0123456789abcdef', retryAfterMs: 50 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'busy' });
    expect(tui.prompts).toEqual(['read the inbox file [jg:0123456789abcdef]']);
  });
});
