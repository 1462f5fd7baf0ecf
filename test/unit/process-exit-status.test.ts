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
    const parent = spawn('sh', ['-c', '(exit 7) & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
      let status: number | null = null;
      for (let i = 0; i < 500 && status === null; i++) {
        status = await zombieExitStatus(pid);
        if (status === null) await new Promise((r) => setImmediate(r));
      }
      expect(status).toBe(7);
    } finally {
      parent.kill('SIGKILL');
    }
    expect(await zombieExitStatus(2 ** 22 + 1)).toBeNull();
  });
});
