// A tmux command whose reply never comes fails its caller after the timeout, and a late reply is still
// matched to it, not to the next command. A scripted transport stands in for the tmux pipe (pure code:
// the real-tmux tests are in test/integration/control-client.test.ts).
import { describe, expect, it, vi } from 'vitest';
import { ControlClient } from '../../src/tmux/control-client.js';
import type { Transport } from '../../src/tmux/transport.js';

function scripted() {
  let onData: (chunk: Buffer) => void = () => {};
  const written: string[] = [];
  const transport: Transport = {
    write: (text) => void written.push(text),
    onData: (cb) => void (onData = cb),
    onClose: () => {},
    close: async () => {},
    pid: 1,
  };
  const reply = (n: number, line: string) => onData(Buffer.from(`%begin 1 ${n} 1\n${line}\n%end 1 ${n} 1\n`));
  return { transport, written, reply };
}

describe('control client command timeout', () => {
  it('rejects a command tmux never answers, naming it; a late reply goes to it, not to the next one', async () => {
    vi.useFakeTimers();
    try {
      const t = scripted();
      const client = new ControlClient(t.transport, 1000);
      const lost = client.run(['refresh-client', '-f', 'no-output']);
      const failed = expect(lost).rejects.toThrow(/tmux did not answer `refresh-client -f no-output` within 1000 ms/);
      vi.advanceTimersByTime(1000);
      await failed;
      const next = client.run(['display-message', '-p', 'x']);
      t.reply(1, 'late answer of the first');
      t.reply(2, 'x');
      await expect(next).resolves.toEqual({ ok: true, lines: ['x'] });
      expect(t.written).toEqual(['refresh-client -f no-output\n', 'display-message -p x\n']);
    } finally {
      vi.useRealTimers();
    }
  });
});
