import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** A maker of temp folders for one test file: each removed after the test that made it. */
export function tempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
  });
  return async () => {
    const d = await mkdtemp(path.join(os.tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
