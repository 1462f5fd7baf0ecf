// Temp files of atomic writes left by a killed writer: swept by pid, a live writer's left alone.
import { spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepStaleTemps } from '../../src/fs/durable.js';
import { processRuns } from '../../src/proc-state.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jg-durable-');

describe('sweepStaleTemps', () => {
  it("removes a dead writer's temp files only: a live writer's, other files and a missing folder are left alone", async () => {
    const dir = await tempDir();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    expect(processRuns(dead)).toBe(false);
    const names = [
      `m-1a2b3c4d.md.tmp-${dead}-0a1b2c3d`,
      `sessions.json.tmp-${dead}-deadbeef`,
      `.jaggers-probe-${dead}-0a1b2c3d`,
      `m-5e6f7a8b.md.tmp-${process.pid}-0a1b2c3d`,
      'm-1a2b3c4d.md',
      'notes.tmp-12-xyz',
      `x.jaggers-probe-${dead}-0a1b2c3d`,
    ];
    for (const n of names) await writeFile(path.join(dir, n), 'x');
    expect(sweepStaleTemps(dir, processRuns).sort()).toEqual([names[0], names[1], names[2]].sort());
    expect((await readdir(dir)).sort()).toEqual([names[3], names[4], names[5], names[6]].sort());
    expect(sweepStaleTemps(path.join(dir, 'none'), processRuns)).toEqual([]);
  });
});
