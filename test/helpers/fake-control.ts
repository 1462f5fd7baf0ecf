// A ControlClient on a scripted transport: the test sees every command written and answers them
// (in order, as tmux does), and feeds notifications and pane output, without a tmux server.
import { ControlClient } from '../../src/tmux/control-client.js';
import type { Transport } from '../../src/tmux/transport.js';

export interface FakeControl {
  client: ControlClient;
  /** The commands written so far, one line each (without the newline). */
  written: string[];
  /** Answer the oldest unanswered command (`ok: false` answers %error). */
  reply(lines?: readonly string[], ok?: boolean): void;
  /** A notification line, e.g. `%pause %1`. */
  notify(line: string): void;
  /** `%output` of `text` for `paneId` (bytes below 0x20 and the backslash escaped as tmux does). */
  output(paneId: string, text: string): void;
  /** Fails every unanswered command (and stops their timeouts). */
  close(): Promise<void>;
}

export function fakeControl(): FakeControl {
  let feed: (chunk: Buffer) => void = () => {};
  const written: string[] = [];
  const transport: Transport = {
    write: (text) => void written.push(text.replace(/\n$/, '')),
    onData: (cb) => void (feed = cb),
    onClose: () => {},
    close: async () => {},
    pid: 1,
  };
  const client = new ControlClient(transport);
  let replies = 0;
  return {
    client,
    written,
    reply(lines = [], ok = true) {
      replies++;
      const body = lines.map((l) => `${l}\n`).join('');
      feed(Buffer.from(`%begin 1 ${replies} 1\n${body}%${ok ? 'end' : 'error'} 1 ${replies} 1\n`));
    },
    notify(line) {
      feed(Buffer.from(`${line}\n`));
    },
    output(paneId, text) {
      const escaped = [...Buffer.from(text, 'utf8')]
        .map((b) => (b < 0x20 || b === 0x5c ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b)))
        .join('');
      feed(Buffer.concat([Buffer.from(`%output ${paneId} `), Buffer.from(escaped, 'latin1'), Buffer.from('\n')]));
    },
    close: () => client.close(),
  };
}
