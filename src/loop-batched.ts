import type { Writable } from 'node:stream';

/**
 * A writer for `stream` whose writes made in one turn of the event loop go out together (corked until
 * the loop's check phase: one writev, not a syscall each). The tmux commands connection and each
 * `/v1/events` stream write through one.
 */
export function loopBatched(stream: Pick<Writable, 'cork' | 'uncork' | 'write'>): (chunk: string) => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    stream.uncork();
  };
  return (chunk) => {
    if (!corked) {
      corked = true;
      stream.cork();
      setImmediate(uncork);
    }
    stream.write(chunk);
  };
}
