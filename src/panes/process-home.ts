// What Linux tells about a pane's process: its environment (HOME, CODEX_HOME...) from /proc.
import { readFile } from 'node:fs/promises';

/** The environment of a running process, or null when it cannot be read (gone, not Linux). */
export async function envOfPid(pid: number): Promise<Record<string, string> | null> {
  try {
    const out: Record<string, string> = {};
    for (const kv of (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')) {
      const i = kv.indexOf('=');
      if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return out;
  } catch {
    return null;
  }
}

/** The HOME a pane's process runs with, falling back to `fallback`. */
export async function homeOfPid(pid: number, fallback: string): Promise<string> {
  return (await envOfPid(pid))?.HOME || fallback;
}

/**
 * The exit status of a pane's process that has exited but is not yet reaped (a zombie), from field 52
 * of /proc/<pid>/stat (waitpid's form); null when it runs, is gone, was killed by a signal, or this is
 * not Linux. tmux 3.3a on a loaded machine sometimes never reaps a pane's process (its SIGCHLD missed:
 * seen 4 times in 8 runs beside two busy loops, the zombie still there seconds later), and then has no
 * `pane_dead_status` to give.
 */
export async function zombieExitStatus(pid: number): Promise<number | null> {
  try {
    return exitStatusOfStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** `zombieExitStatus` of one /proc/<pid>/stat text (the command name may hold spaces and parentheses). */
export function exitStatusOfStat(stat: string): number | null {
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .trim()
    .split(' ');
  // fields[0] is field 3 (the state), so field 52 (exit_code) is fields[49].
  const code = Number(fields[49]);
  if (fields[0] !== 'Z' || !Number.isInteger(code) || (code & 0x7f) !== 0) return null;
  return (code >> 8) & 0xff;
}
