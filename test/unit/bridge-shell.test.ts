// The bash the hook bridge may run as (src/panes/bridge-shell.ts): only a bash 5 or later that the
// supervisor ran is named beside the spool; none, an older one or one that does not run: no name.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bridgeShellFile, findBash5, writeBridgeShell } from '../../src/panes/bridge-shell.js';

const SH = execFileSync('sh', ['-c', 'command -v sh'], { encoding: 'utf8' }).trim();
const BASH = execFileSync('bash', ['-c', 'printf %s "$BASH"'], { encoding: 'utf8' });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-bridge-shell-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** A folder holding one `bash`: `body` a script run by sh, or a link to `target`. */
async function pathWith(name: string, bash: { body?: string; target?: string }): Promise<string> {
  const bin = path.join(dir, name);
  await mkdir(bin);
  if (bash.target) await symlink(bash.target, path.join(bin, 'bash'));
  else {
    await writeFile(path.join(bin, 'bash'), bash.body!);
    await chmod(path.join(bin, 'bash'), 0o755);
  }
  return bin;
}

describe('the bash the hook bridge runs as', () => {
  it('a bash 5 on PATH: its absolute path, however PATH names it', async () => {
    const bin = await pathWith('real', { target: BASH });
    expect(await findBash5({ ...process.env, PATH: bin })).toBe(path.join(bin, 'bash'));
    // Even when the person's shell set-up would print or fail.
    const rc = path.join(dir, 'rc');
    await writeFile(rc, 'echo noise; exit 3\n');
    expect(await findBash5({ ...process.env, PATH: bin, BASH_ENV: rc, SHELLOPTS: 'nounset' })).toBe(path.join(bin, 'bash'));
  });

  it('no bash, a bash older than 5, one that does not run, one whose $BASH is no absolute path: none', async () => {
    expect(await findBash5({ ...process.env, PATH: path.join(dir, 'nothing') })).toBeNull();
    const old = await pathWith('old', { body: `#!${SH}\nprintf '3 %s' "$0"\n` });
    expect(await findBash5({ ...process.env, PATH: old })).toBeNull();
    const broken = await pathWith('broken', { body: '\x7fELF not a program' });
    expect(await findBash5({ ...process.env, PATH: broken })).toBeNull();
    const odd = await pathWith('odd', { body: `#!${SH}\nprintf '5 relative/bash'\n` });
    expect(await findBash5({ ...process.env, PATH: odd })).toBeNull();
  });

  it('is named beside the spool (written whole), and the name goes when there is none', async () => {
    const spool = path.join(dir, 'hook-spool');
    expect(await writeBridgeShell(spool, async () => '/opt/bash5/bin/bash')).toBe('/opt/bash5/bin/bash');
    expect(await readFile(bridgeShellFile(spool), 'utf8')).toBe('/opt/bash5/bin/bash\n');
    expect(bridgeShellFile(spool)).toBe(`${spool}.bash`);
    expect(await writeBridgeShell(spool, async () => null)).toBeNull();
    await expect(readFile(bridgeShellFile(spool))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
