// bin/jaggers-hook, the hook bridge (issue 27): a POSIX sh script a CLI's hook runs. It drops the
// payload into the spool as one file named <terminal id>.<ns>.<pid>.<event>, prints nothing, and exits
// 0 whatever happens: no folder, bad names, a terminal for stdin.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pty from 'node-pty';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { binDir } from '../../src/package-root.js';
import { parseSpoolName } from '../../src/panes/hook-spool.js';

const BRIDGE = path.join(binDir, 'jaggers-hook');
const run = promisify(execFile);

/** Run the bridge with `stdin` (a string; undefined: /dev/null); its exit code and output. */
function bridge(args: string[], stdin?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile('sh', [BRIDGE, ...args], (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: String(stdout) + String(stderr) }),
    );
    // The bridge may exit without reading stdin (a bad name): that is not an error here.
    child.stdin!.on('error', () => {});
    child.stdin!.end(stdin ?? '');
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-bridge-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('the hook bridge (bin/jaggers-hook)', () => {
  it('ships in the package and is found from the built code', async () => {
    const pkg = JSON.parse(await readFile(path.join(binDir, '..', 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toContain('bin');
    expect((await stat(BRIDGE)).isFile()).toBe(true);
  });

  it('drops stdin into the spool as one private file named <id>.<ns>.<pid>.<event>, printing nothing', async () => {
    const before = BigInt(Date.now()) * 1_000_000n;
    const r = await bridge([dir, 'jg-1a2b3c4d', 'Stop'], '{"session_id":"s","last_assistant_message":"hi"}');
    expect(r).toEqual({ code: 0, out: '' });
    const names = await readdir(dir);
    expect(names).toHaveLength(1);
    const n = parseSpoolName(names[0]!);
    expect(n).toMatchObject({ terminalId: 'jg-1a2b3c4d', event: 'Stop' });
    expect(n!.ns >= before && n!.ns <= BigInt(Date.now() + 1000) * 1_000_000n).toBe(true);
    expect(await readFile(path.join(dir, names[0]!), 'utf8')).toBe('{"session_id":"s","last_assistant_message":"hi"}');
    expect((await stat(path.join(dir, names[0]!))).mode & 0o777).toBe(0o600);
  });

  it('the payload argument, when given, is the payload (codex notify), and stdin is not read', async () => {
    await bridge([dir, 'jg-1', 'agent-turn-complete', '{"type":"agent-turn-complete"}'], 'ignored');
    const [name] = await readdir(dir);
    expect(parseSpoolName(name!)?.event).toBe('agent-turn-complete');
    expect(await readFile(path.join(dir, name!), 'utf8')).toBe('{"type":"agent-turn-complete"}');
  });

  it('a terminal on stdin is never read: an empty payload, at once', async () => {
    const p = pty.spawn('sh', [BRIDGE, dir, 'jg-1', 'SessionStart'], { cols: 80, rows: 24 });
    const code = await new Promise<number>((resolve) => p.onExit((e) => resolve(e.exitCode)));
    expect(code).toBe(0);
    const [name] = await readdir(dir);
    expect(await readFile(path.join(dir, name!), 'utf8')).toBe('');
  });

  it('no folder, no arguments, or a name part that is not safe: exit 0, nothing written, nothing printed', async () => {
    expect(await bridge([path.join(dir, 'gone'), 'jg-1', 'Stop'], '{}')).toEqual({ code: 0, out: '' });
    expect(await bridge([], '{}')).toEqual({ code: 0, out: '' });
    for (const [id, event] of [
      ['../x', 'Stop'],
      ['jg/1', 'Stop'],
      ['', 'Stop'],
      ['jg-1', '../Stop'],
      ['jg-1', '.hidden'],
      ['jg-1', 'a/b'],
      ['jg-1', 'St op'],
      ['jg-1', ''],
      ['jg-1', 'x'.repeat(65)],
      ['a.b', 'Stop'],
    ])
      expect(await bridge([dir, id!, event!], '{}'), `${id} ${event}`).toEqual({ code: 0, out: '' });
    expect(await readdir(dir)).toEqual([]);
  });

  it.skipIf(process.getuid?.() !== 0)('a full disk leaves no file behind and still exits 0 (needs root to mount a tmpfs)', async () => {
    const mnt = path.join(dir, 'full');
    await run('mkdir', [mnt]);
    await run('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', mnt]);
    try {
      const r = await bridge([mnt, 'jg-1', 'Stop'], 'x'.repeat(64 * 1024));
      expect(r).toEqual({ code: 0, out: '' });
      expect(await readdir(mnt)).toEqual([]);
    } finally {
      await run('umount', [mnt]);
    }
  });
});
