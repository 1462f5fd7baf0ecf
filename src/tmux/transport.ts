import { spawn } from 'node:child_process';
import { loopBatched } from '../loop-batched.js';
import { machineArgs, type TmuxServer } from './server.js';

export interface Transport {
  write(text: string): void;
  onData(cb: (chunk: Buffer) => void): void;
  onClose(cb: (info: { code: number | null; stderr: string }) => void): void;
  /** Close stdin (tmux detaches the control client) and wait for the process to end. */
  close(): Promise<void>;
  readonly pid: number | undefined;
}

/**
 * `tmux -C` as a child process (node's own spawn: the supervisor starts two of these before it can
 * answer, and execa's set-up and loading were a good part of that). Should the supervisor end, tmux
 * sees its stdin close and detaches.
 */
export function localTransport(server: TmuxServer, clientArgs: readonly string[]): Transport {
  const child = spawn(server.bin, [...machineArgs(server), '-C', ...clientArgs], { env: server.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString('utf8');
  });
  const closeCbs: ((info: { code: number | null; stderr: string }) => void)[] = [];
  const done = new Promise<void>((resolve) => {
    let ended = false;
    const end = (code: number | null) => {
      if (ended) return;
      ended = true;
      for (const cb of closeCbs) cb({ code, stderr: stderr.trim() });
      resolve();
    };
    child.on('close', (code) => end(code));
    // Not started at all (no such tmux): said as its stderr would be.
    child.on('error', (e) => {
      if (child.pid === undefined) {
        stderr ||= e.message;
        end(null);
      }
    });
  });
  // A write after tmux exited raises EPIPE on the stream; the close callback reports the exit.
  child.stdin.on('error', () => {});
  // Commands sent in the same turn of the event loop go to tmux in one write (a status change sends two
  // or three; the panes' events handled in one turn send theirs together).
  const write = loopBatched(child.stdin);
  return {
    pid: child.pid,
    write,
    onData(cb) {
      child.stdout.on('data', cb);
    },
    onClose(cb) {
      closeCbs.push(cb);
    },
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await done;
      clearTimeout(timer);
    },
  };
}
