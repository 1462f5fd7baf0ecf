// deliverNow (src/delivery/deliver.ts) when the pane's `busy` was decided by a turn summary (the machine's
// turn too fast for its busy screen: a summary it had not seen when the prompt went in). In CI opencode's
// command menu hid the last turn's summary as a prompt was typed; the prompt was lost, the summary showed
// again, read as new, and the prompt counted taken: its job ran for ever. Such a busy proves the prompt
// only with its echo above the input box, looked for in the recent history (a fast turn's long reply
// pushes the echo off the visible screen).
import { describe, expect, it } from 'vitest';
import { deliverNow } from '../../src/delivery/deliver.js';
import { FakeTui } from '../helpers/fake-tui.js';
import { testProfile } from '../helpers/work-fakes.js';

const NONCE = '0123456789abcdef';
const PROMPT = `read the handover file [jg:${NONCE}]`;

/** A TUI whose Enter either loses the prompt or runs a turn too fast for a busy screen; its visible screen is its last 8 lines. */
class FastTurns extends FakeTui {
  lose = true;
  readonly asked: (number | undefined)[] = [];

  /** What tmux would show: the last 8 lines (the watcher's screens and plain captures). */
  override screen(): string {
    return super.screen().split('\n').slice(-8).join('\n');
  }

  override async capture(paneId: string, opts?: { history?: number }): Promise<string> {
    this.asked.push(opts?.history);
    return opts?.history ? [...this.lines, `> ${this.input}`].join('\n') : super.capture(paneId);
  }

  override async sendKeys(paneId: string, keys: readonly string[]): Promise<void> {
    if (!keys.includes('Enter')) return super.sendKeys(paneId, keys);
    this.keys.push([...keys]);
    const prompt = this.input;
    this.input = '';
    if (!this.lose) {
      this.prompts.push(prompt);
      this.lines.push(`❯ ${prompt}`, ...Array.from({ length: 30 }, (_, i) => `  reply line ${i}`), 'Worked for 1s');
    }
    // Either way a summary shows that the machine had not seen when the prompt went in.
    this.set('busy', 'summary');
    setImmediate(() => this.set('done', 'summary'));
  }
}

const profile = testProfile({ delivery: { settleMs: 0, verifyTimeoutMs: 300, readyTimeoutMs: 1000, maxSubmitRetries: 0 } });
const target = (tui: FakeTui) => ({ paneId: tui.paneId, agent: 'coder', profile });

describe('a busy decided by a turn summary', () => {
  it('is no proof of a prompt that never went in: the delivery times out', async () => {
    const tui = new FastTurns('%1', profile, 'done');
    tui.lines.push('Worked for 2s');
    const d = await deliverNow(tui, tui, target(tui), PROMPT, { nonce: NONCE, retryAfterMs: 50 });
    expect(d).toMatchObject({ kind: 'timeout', stillInInput: false });
    expect(tui.prompts).toEqual([]);
    expect(tui.asked, 'the history was read for the echo').toContain(200);
  });

  it("proves a fast turn's prompt by its echo in the recent history, off the visible screen", async () => {
    const tui = new FastTurns('%1', profile, 'done');
    tui.lose = false;
    const d = await deliverNow(tui, tui, target(tui), PROMPT, { nonce: NONCE, retryAfterMs: 1000, verifyTimeoutMs: 2000 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'echo', submits: 1 });
    expect(tui.prompts).toEqual([PROMPT]);
    expect((await tui.capture('%1')).includes(NONCE), 'the echo is not on the visible screen').toBe(false);
  });

  it('a busy screen (a rule that reads busy) still proves it at once', async () => {
    const tui = new FakeTui('%1', profile, 'done');
    const d = await deliverNow(tui, tui, target(tui), PROMPT, { nonce: NONCE, retryAfterMs: 50 });
    expect(d).toMatchObject({ kind: 'delivered', evidence: 'busy' });
  });
});
