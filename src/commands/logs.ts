// `jaggers logs`: the supervisor's log (JSON lines), whole or followed; `--verbose` follows it too.
import { open, stat } from 'node:fs/promises';
import { watch } from 'node:fs';
import { currentLogPath } from '../api/paths.js';
import type { Context } from '../context.js';

interface Line {
  time?: string;
  level?: number;
  msg?: string;
  [k: string]: unknown;
}

const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** `12:03:04.567 info  turn finished agent=coder task=t-1 by=screen` */
export function prettyLogLine(text: string): string {
  let l: Line;
  try {
    l = JSON.parse(text) as Line;
  } catch {
    return text;
  }
  const { time, level, msg, pid: _pid, ...rest } = l;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${(time ?? '').slice(11, 23)} ${(LEVELS[level ?? 30] ?? String(level)).padEnd(5)} ${msg ?? ''}${fields ? ` ${fields}` : ''}`;
}

/**
 * Follow the supervisor's log from `from` (a byte offset; default its end) until `signal` aborts,
 * handing each new line to `onLine`. Woken by file-system events, not a timer.
 */
export async function followLog(ctx: Context, onLine: (line: string) => void, signal: AbortSignal, from?: number): Promise<void> {
  const file = currentLogPath(ctx.jaggersDir);
  let pos = from ?? (await stat(file).catch(() => ({ size: 0 }))).size;
  let rest = '';
  const read = async () => {
    const st = await stat(file).catch(() => null);
    if (!st) return;
    if (st.size < pos) pos = 0; // rotated to a new file
    if (st.size === pos) return;
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.alloc(st.size - pos);
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      pos += bytesRead;
      const text = rest + buf.subarray(0, bytesRead).toString('utf8');
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) if (l) onLine(l);
    } finally {
      await fh.close();
    }
  };
  let chain = Promise.resolve();
  const kick = () => (chain = chain.then(read, read));
  let w: ReturnType<typeof watch> | null = null;
  try {
    w = watch(ctx.jaggersDir + '/logs', () => kick());
  } catch {
    return;
  }
  kick();
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  w.close();
  // One last read: lines written just before the stop may not have woken the watch yet.
  kick();
  await chain;
}
