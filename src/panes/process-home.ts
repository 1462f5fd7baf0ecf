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
