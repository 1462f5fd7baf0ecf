// The exit status of a pane's process that tmux never reaped, read from /proc: the parser on stat lines
// as Linux writes them, and a real zombie (a subshell whose parent exec'd into a program that never waits).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { exitStatusOfStat, zombieExitStatus } from '../../src/panes/process-home.js';

/** A stat line: `rest` holds fields 3 onwards up to 51 as filler, then exit_code. */
const stat = (name: string, state: string, exitCode: number) =>
  `4242 (${name}) ${state} ${Array.from({ length: 48 }, (_, i) => String(i + 1)).join(' ')} ${exitCode}\n`;

describe('zombie exit status', () => {
  it('reads field 52 of a zombie in waitpid form; a running process, a signal or a short line give null', () => {
    expect(exitStatusOfStat(stat('sh', 'Z', 3 << 8))).toBe(3);
    expect(exitStatusOfStat(stat('a) Z (b', 'Z', 0))).toBe(0);
    expect(exitStatusOfStat(stat('sh', 'S', 3 << 8))).toBeNull();
    expect(exitStatusOfStat(stat('sh', 'Z', 9))).toBeNull();
    expect(exitStatusOfStat('4242 (sh) Z 1 2 3\n')).toBeNull();
  });

  it.skipIf(process.platform !== 'linux')('a real unreaped process: its status; a gone one: null', async () => {
    // The subshell exits only once its parent runs `sleep` (which never waits for children): had it
    // exited before the exec, sh could have reaped it.
    const script = '(while [ "$(cat /proc/$$/comm)" != sleep ]; do :; done; exit 7) & echo $!; exec sleep 30';
    const parent = spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
      // The subshell ends on its own time (slow on a loaded machine): asked again until it has, for up to 20 s.
      let status: number | null = null;
      const deadline = Date.now() + 20_000;
      while (status === null && Date.now() < deadline) {
        status = await zombieExitStatus(pid);
        if (status === null) await new Promise((r) => setTimeout(r, 5));
      }
      expect(status).toBe(7);
    } finally {
      parent.kill('SIGKILL');
    }
    expect(await zombieExitStatus(2 ** 22 + 1)).toBeNull();
  });
});
