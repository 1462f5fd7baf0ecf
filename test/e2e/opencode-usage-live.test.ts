// opencode's usage read from its SQLite database while opencode writes it (src/clis/opencode/usage.ts):
// the real opencode runs a second turn whose answer the stub streams slowly, and the database is read
// again and again meanwhile. Each read gives the session's sums or nothing yet, never an error, never
// less than the read before; once opencode has exited, both turns' tokens.
import { execa } from 'execa';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { opencodeRunJson } from '../../src/clis/opencode/headless.js';
import { forgetOpencodeMessages, opencodeSessionUsage } from '../../src/clis/opencode/usage.js';
import { forgetWals } from '../../src/clis/shared/sqlite-read.js';
import type { ByModel } from '../../src/usage/tokens.js';
import { cliBinary, isChosen, isCliInstalled } from './clis.js';
import { killGroup } from './private-tmux.js';
import { createRig, type CliRig } from './rig.js';

const TURNS = [
  { input: 1234, output: 56, cacheRead: 0, cacheWrite: 0 },
  { input: 78, output: 910, cacheRead: 3072, cacheWrite: 0 },
];

let rig: CliRig | undefined;
afterEach(async () => {
  await rig?.dispose();
  rig = undefined;
});

describe.skipIf(!isCliInstalled('opencode') || !isChosen('opencode'))('opencode usage, read while opencode writes', () => {
  it('reads the session as it grows, without an error and without going back', { timeout: 240_000 }, async () => {
    const r = (rig = await createRig('opencode'));
    let n = 0;
    r.stub.setScript(() => {
      const usage = TURNS[Math.min(n, TURNS.length - 1)];
      n++;
      return n === 1 ? { kind: 'text', text: 'first', usage } : { kind: 'text', text: 'a slow second answer', chunks: 20, delayMs: 150, usage };
    });
    const run = (args: string[]) =>
      execa(cliBinary('opencode'), args, { cwd: r.cwd, env: r.env, extendEnv: false, stdin: 'ignore', reject: false, detached: true, timeout: 120_000 });
    const first = run(['run', '--format', 'json', 'Say hello.']);
    const id = opencodeRunJson(String((await first).stdout)).sessionId;
    if (first.pid !== undefined) await killGroup(first.pid, 500);
    expect(id).toBeTruthy();
    forgetWals();
    forgetOpencodeMessages();
    const db = join(r.home, '.local', 'share', 'opencode', 'opencode.db');
    const second = run(['run', '--format', 'json', '--session', id!, 'Say goodbye.']);
    const reads: (ByModel | null)[] = [];
    let ended = false;
    void second.finally(() => (ended = true));
    while (!ended) {
      reads.push(opencodeSessionUsage(db, id!)?.byModel ?? null);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (second.pid !== undefined) await killGroup(second.pid, 500);
    expect((await second).exitCode).toBe(0);
    const last = opencodeSessionUsage(db, id!);
    expect(last?.byModel).toEqual({ 'stub-model-opencode': { input: 1312, output: 966, cacheRead: 3072, cacheWrite: 0 } });
    const sums = reads.map((b) => b?.['stub-model-opencode']).filter((t) => t !== undefined);
    console.log(`opencode usage read ${reads.length} times while opencode wrote; ${reads.length - sums.length} gave nothing`);
    expect(sums.length).toBeGreaterThan(10);
    expect(sums[0]).toEqual(TURNS[0]);
    for (let i = 1; i < sums.length; i++) expect(sums[i]!.input + sums[i]!.output).toBeGreaterThanOrEqual(sums[i - 1]!.input + sums[i - 1]!.output);
  });
});
