import { execa } from 'execa';
import { serverArgs, type TmuxServer } from './server.js';

/**
 * A byte pipe to a tmux control-mode client. Local now (`tmux -C`); an ssh transport would run
 * `ssh host tmux -C ...` and fit the same shape.
 */
export interface Transport {
  write(text: string): void;
  onData(cb: (chunk: Buffer) => void): void;
  onClose(cb: (info: { code: number | null; stderr: string }) => void): void;
  /** Close stdin (tmux detaches the control client) and wait for the process to end. */
  close(): Promise<void>;
  readonly pid: number | undefined;
}

export function localTransport(server: TmuxServer, clientArgs: readonly string[]): Transport {
  const child = execa(server.bin, [...serverArgs(server), '-C', ...clientArgs], {
    env: server.env,
    extendEnv: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    encoding: 'buffer',
    reject: false,
    cleanup: true,
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString('utf8');
  });
  const closeCbs: ((info: { code: number | null; stderr: string }) => void)[] = [];
  const done = child.then((r) => {
    for (const cb of closeCbs) cb({ code: r.exitCode ?? null, stderr: stderr.trim() });
  });
  // A write after tmux exited raises EPIPE on the stream; the close callback reports the exit.
  child.stdin?.on('error', () => {});
  return {
    pid: child.pid,
    write(text) {
      child.stdin?.write(text);
    },
    onData(cb) {
      child.stdout?.on('data', cb);
    },
    onClose(cb) {
      closeCbs.push(cb);
    },
    async close() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await done;
      clearTimeout(timer);
    },
  };
}
