// ControlClient.close removes the connection's subscriptions before it detaches: tmux 3.3a checks a
// client's subscriptions once a second and crashes the server when that client is leaving and has lost
// its session (docs/tmux-and-node-facts.md).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ControlClient } from '../../src/tmux/control-client.js';
import type { Transport } from '../../src/tmux/transport.js';

/** A transport that records, in one list, the lines written and the moment it was closed. */
function scripted() {
  let feed: (chunk: Buffer) => void = () => {};
  const events: string[] = [];
  let replies = 0;
  const transport: Transport = {
    write: (text) => void events.push(text.replace(/\n$/, '')),
    onData: (cb) => void (feed = cb),
    onClose: () => {},
    close: async () => void events.push('(closed)'),
    pid: 1,
  };
  const reply = (ok = true) => {
    replies++;
    feed(Buffer.from(`%begin 1 ${replies} 1\n%${ok ? 'end' : 'error'} 1 ${replies} 1\n`));
  };
  return { client: new ControlClient(transport), events, reply };
}

afterEach(() => vi.useRealTimers());

describe('ControlClient.close', () => {
  it('removes each subscription, answered, before it detaches; one tmux refused is not removed; a second close sends nothing', async () => {
    const t = scripted();
    const a = t.client.subscribe('jaggers-agents', '@*', '#{@jaggers_agent}');
    t.reply();
    await a;
    const b = t.client.subscribe('jaggers-dead', '%*', '#{pane_dead}');
    t.reply();
    await b;
    const refused = t.client.subscribe('jaggers-bad', '%1', '#{x}');
    t.reply(false);
    await expect(refused).rejects.toMatchObject({ code: 'E_TMUX_COMMAND' });
    expect([...t.client.subscriptions]).toEqual(['jaggers-agents', 'jaggers-dead']);

    const closed = t.client.close();
    await new Promise((r) => setImmediate(r));
    // Both removals written, and the connection still open until tmux answered them.
    expect(t.events.slice(3)).toEqual(['refresh-client -B jaggers-agents', 'refresh-client -B jaggers-dead']);
    t.reply();
    t.reply();
    await closed;
    expect(t.events.slice(3)).toEqual(['refresh-client -B jaggers-agents', 'refresh-client -B jaggers-dead', '(closed)']);
    expect(t.client.isClosed).toBe(true);
    expect(t.client.subscriptions.size).toBe(0);
  });

  it('a connection without subscriptions detaches at once', async () => {
    const t = scripted();
    await t.client.close();
    expect(t.events).toEqual(['(closed)']);
  });

  it('detaches after a second when tmux does not answer the removals', async () => {
    vi.useFakeTimers();
    const t = scripted();
    const a = t.client.subscribe('jaggers-dead', '%*', '#{pane_dead}');
    t.reply();
    await a;
    let done = false;
    const closed = t.client.close().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await closed;
    expect(t.events).toHaveLength(3);
    expect(t.events.at(-1)).toBe('(closed)');
    expect(t.events.at(-2)).toBe('refresh-client -B jaggers-dead');
  });
});
