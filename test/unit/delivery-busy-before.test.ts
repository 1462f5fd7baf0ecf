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
  /** What the watcher says of the screen lagging behind a hook's turn end (ms left of its grace). */
  behind = 0;
  behindAsked = 0;

  screenBehind(): number {
    this.behindAsked++;
    return this.behind;
  }

  /** The spinner goes: the screen caught up with the turn's end, and the watcher reads it. */
  stopSpinning(): void {
    this.spinning = false;
    this.set(this.current);
  }

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

  it("a screen behind a hook's turn end is waited for: the prompt goes in once it reads quiet, and busy after it proves it", async () => {
    const tui = new LateSpinner('%1', profile, 'done');
    tui.behind = 2000;
    const pasted = new Promise<void>((resolve) => {
      const paste = tui.paste.bind(tui);
      tui.paste = async (paneId, text) => {
        // Typed only once the spinner went: into a screen that no longer reads busy.
        expect(tui.spinning).toBe(false);
        await paste(paneId, text);
        resolve();
      };
    });
    setImmediate(() => tui.stopSpinning());
    const d = await deliverNow(tui, tui, target(tui), 'read the inbox file [jg:0123456789abcdef]', { nonce: '0123456789abcdef', retryAfterMs: 50 });
    await pasted;
    expect(tui.behindAsked).toBe(1);
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'busy' });
    expect(tui.prompts).toEqual(['read the inbox file [jg:0123456789abcdef]']);
  });

  it('the wait is bounded by what the watcher says is left of the grace; a screen that stays busy is typed into as before', async () => {
    const tui = new LateSpinner('%1', profile, 'done');
    tui.behind = 30;
    const d = await deliverNow(tui, tui, target(tui), 'read the inbox file [jg:0123456789abcdef]', { nonce: '0123456789abcdef', retryAfterMs: 50 });
    expect(tui.behindAsked).toBe(1);
    expect(d.kind).toBe('timeout');
    expect(tui.prompts).toEqual([]);
  });
});

/**
 * opencode: its busy footer is drawn below the input box, so it sits under a prompt typed into the box.
 * After a turn it can lag behind session.idle; the box may meanwhile hold an earlier jaggers prompt
 * that was never submitted (CI: read as taken because of the busy line under it, and the next prompt
 * joined it).
 */
class FooterTui extends FakeTui {
  /** The footer still reads busy after the turn ended; it stops after this many more captures (Infinity: never). */
  lagCaptures = 0;

  override screen(): string {
    const busy = this.current === 'busy' || this.lagCaptures > 0;
    return `${super.screen()}\n${busy ? '⬝⬝⬝ esc to cancel' : 'ctrl+p commands'}`;
  }

  override async capture(paneId: string): Promise<string> {
    const s = await super.capture(paneId);
    this.lagCaptures--;
    return s;
  }
}

describe('an earlier prompt left in the input box, under a busy footer', () => {
  const footerProfile = testProfile({
    detect: {
      settleMs: 0,
      chrome: '^Worked for',
      rules: [
        { name: 'footer-busy', status: 'busy', pattern: 'esc to cancel', lines: 1 },
        { name: 'summary', status: 'done', pattern: 'Worked for', lines: 4 },
        { name: 'footer-idle', status: 'idle', pattern: 'ctrl\\+p commands', lines: 2 },
      ],
    },
    delivery: { settleMs: 0, verifyTimeoutMs: 1000, readyTimeoutMs: 1000, maxSubmitRetries: 0 },
  });
  const stale = 'Read old.md and do what it asks. [jg:5a1e5a1e5a1e5a1e]';
  const prompt = 'read the inbox file [jg:0123456789abcdef]';
  const footerTui = (lagCaptures: number) => {
    const tui = new FooterTui('%1', footerProfile, 'done');
    tui.lines.push('❯ Read a.md [jg:1111111111111111]', '  done', 'Worked for 1s');
    tui.input = stale;
    tui.lagCaptures = lagCaptures;
    tui.autoReply = () => 'ok';
    return tui;
  };
  const to = (tui: FakeTui) => ({ paneId: tui.paneId, agent: 'coder', profile: footerProfile });

  it('is judged once the footer reads quiet: cleared, and the new prompt goes in alone', async () => {
    const tui = footerTui(3);
    const d = await deliverNow(tui, tui, to(tui), prompt, { nonce: '0123456789abcdef', retryAfterMs: 50 });
    expect(d).toMatchObject({ kind: 'delivered' });
    expect(tui.keys[0]).toEqual(['C-c']);
    expect(tui.prompts).toEqual([prompt]);
  });

  it('a footer that stays busy leaves the box alone: not ready, nothing typed and no clear key', async () => {
    const tui = footerTui(Infinity);
    const d = await deliverNow(tui, tui, to(tui), prompt, { nonce: '0123456789abcdef', retryAfterMs: 50, strayQuietMs: 600 });
    expect(d.kind).toBe('not-ready');
    expect(d.kind === 'not-ready' && d.status).toMatch(/holds an earlier prompt \[jg:5a1e5a1e5a1e5a1e\] and its screen stayed busy for 600 ms/);
    expect(tui.keys).toEqual([]);
    expect(tui.pasted).toEqual([]);
    expect(tui.input).toBe(stale);
  });
});
