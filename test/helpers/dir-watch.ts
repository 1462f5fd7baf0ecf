import { watch } from 'node:fs';
import { coalesced } from '../../src/coalesced.js';

/**
 * Reads with `read` until `ok` holds for a reading, re-reading on each file-system event in `dir`
 * (never on a timer), and returns that reading; rejects after `timeoutMs` with the last one.
 */
export async function whenDirSays<T>(
  dir: string,
  read: () => T | Promise<T>,
  ok: (reading: T) => boolean,
  { timeoutMs = 15_000, what = 'the wanted reading' } = {},
): Promise<T> {
  let last = await read();
  if (ok(last)) return last;
  const watcher = watch(dir);
  try {
    return await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} not seen in ${dir} within ${timeoutMs} ms; last reading: ${JSON.stringify(last)}`)), timeoutMs);
      const check = coalesced(async () => {
        last = await read();
        if (!ok(last)) return;
        clearTimeout(timer);
        resolve(last);
      });
      const run = () => void check().catch((err: unknown) => (clearTimeout(timer), reject(err as Error)));
      watcher.on('change', run);
      run(); // a change between the first reading and the watch
    });
  } finally {
    watcher.close();
  }
}
