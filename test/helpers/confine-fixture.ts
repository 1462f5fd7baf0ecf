// A project whose .jaggers/ holds what jaggers shares (a message) and what it keeps (the token), next to a
// folder outside it with a secret; and a thread that swaps .jaggers/inbox/ for a link to that folder and
// back, as fast as it can, while a test reads.
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export const INSIDE = 'the message jaggers wrote';
export const SECRET = 'the secret outside .jaggers';

export interface ConfineFixture {
  projectRoot: string;
  jaggersDir: string;
  outside: string;
}

/** `<base>/project/.jaggers/{inbox/m.md, handover/turn_1_abc.md, token}` and `<base>/outside/{m.md, secret.txt}`. */
export async function confineFixture(base: string): Promise<ConfineFixture> {
  const projectRoot = path.join(base, 'project');
  const jaggersDir = path.join(projectRoot, '.jaggers');
  const outside = path.join(base, 'outside');
  await mkdir(path.join(jaggersDir, 'inbox'), { recursive: true });
  await mkdir(path.join(jaggersDir, 'handover'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(jaggersDir, 'inbox', 'm.md'), INSIDE);
  await writeFile(path.join(jaggersDir, 'handover', 'turn_1_abc.md'), INSIDE);
  await writeFile(path.join(jaggersDir, 'token'), 'tok-0123456789abcdef\n', { mode: 0o600 });
  await writeFile(path.join(outside, 'm.md'), SECRET);
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  return { projectRoot, jaggersDir, outside };
}

export function mkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

const SWAPPER = `
const { renameSync } = require('node:fs');
const { workerData } = require('node:worker_threads');
const { dir, flag } = workerData;
const stop = new Int32Array(flag);
let swaps = 0;
while (Atomics.load(stop, 0) === 0) {
  try {
    renameSync(dir, dir + '.real');
    renameSync(dir + '.link', dir);
    renameSync(dir, dir + '.link');
    renameSync(dir + '.real', dir);
    swaps++;
  } catch {}
}
Atomics.store(stop, 1, swaps);
`;

/** Swap `<jaggersDir>/inbox` with a symbolic link to `outside` and back until `stop()`, which says how often. */
export async function swapInbox(f: ConfineFixture): Promise<{ stop(): Promise<number> }> {
  const dir = path.join(f.jaggersDir, 'inbox');
  await rm(`${dir}.link`, { force: true });
  await symlink(f.outside, `${dir}.link`);
  const flag = new SharedArrayBuffer(8);
  const w = new Worker(SWAPPER, { eval: true, workerData: { dir, flag } });
  const ended = new Promise<void>((resolve, reject) => {
    w.once('exit', () => resolve());
    w.once('error', reject);
  });
  return {
    async stop() {
      const stop = new Int32Array(flag);
      Atomics.store(stop, 0, 1);
      await ended;
      return Atomics.load(stop, 1);
    },
  };
}

/** `n` calls of `read`, `parallel` at a time, each sorted by what it returned: the inside text, the secret, or an error code. */
export async function tally(n: number, parallel: number, read: () => Promise<string>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let next = 0;
  const one = async () => {
    while (next < n) {
      next++;
      let key: string;
      try {
        const text = await read();
        key = text.includes(SECRET) ? 'SECRET' : text.includes(INSIDE) ? 'inside' : `other: ${text.slice(0, 60)}`;
      } catch (e) {
        key = (e as { code?: string }).code ?? String(e);
      }
      counts[key] = (counts[key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
  return counts;
}
