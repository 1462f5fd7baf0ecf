// bin/jaggers-hook, the hook bridge (issue 27): a POSIX sh script a CLI's hook runs. It drops the
// payload into the spool as one file named <terminal id>.<ns>.<pid>-<size>.<event> (bash 5: no `date`,
// no `cat`, no `mv`) or <terminal id>.<ns>.<pid>.<event> (plain sh), prints nothing, and exits 0
// whatever happens: no folder, bad names, a terminal for stdin. Byte for byte the same on both paths.
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pty from 'node-pty';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { binDir } from '../../src/package-root.js';
import { bridgeShellFile } from '../../src/panes/bridge-shell.js';
import { parseSpoolName } from '../../src/panes/hook-spool.js';

const BRIDGE = path.join(binDir, 'jaggers-hook');
const run = promisify(execFile);

/** Run the bridge with `stdin` (undefined: empty); its exit code and output. */
function bridge(args: string[], stdin?: string | Buffer, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(SH, [BRIDGE, ...args], { env, maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: String(stdout) + String(stderr) }),
    );
    // The bridge may exit without reading stdin (a bad name): that is not an error here.
    child.stdin!.on('error', () => {});
    child.stdin!.end(stdin ?? '');
  });
}

/** sh itself, found once: the tests below run it with PATHs of their own. */
const SH = execFileSync('sh', ['-c', 'command -v sh'], { encoding: 'utf8' }).trim();
/** The bash the supervisor would name (5 or later here). */
const BASH = execFileSync('bash', ['-c', 'printf %s "$BASH"'], { encoding: 'utf8' });

let dir: string;
/** Folders of programs for a PATH of a test's own. */
let tools: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-bridge-'));
  tools = await mkdtemp(path.join(os.tmpdir(), 'jg-bridge-path-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(bridgeShellFile(dir), { force: true });
  await rm(tools, { recursive: true, force: true });
});

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

  /** A PATH of links to just these programs (found on the real PATH), in a folder of the test's. */
  async function onlyOnPath(name: string, programs: string[]): Promise<string> {
    const bin = path.join(tools, name);
    await mkdir(bin);
    for (const p of programs) await symlink(execFileSync(SH, ['-c', `command -v ${p}`], { encoding: 'utf8' }).trim(), path.join(bin, p));
    return bin;
  }

  /**
   * The file the one call left in the spool (removed, for the next call), checked for its name: on the
   * bash path (`sized`) the name says the file's size in bytes, on plain sh's it has no size.
   */
  async function taken(event: string, sized: boolean): Promise<Buffer> {
    const names = (await readdir(dir)).filter((n) => !n.startsWith('.') && parseSpoolName(n));
    expect(names).toHaveLength(1);
    const file = path.join(dir, names[0]!);
    const got = await readFile(file);
    expect(parseSpoolName(names[0]!)).toMatchObject({ terminalId: 'jg-1', event, size: sized ? got.length : null });
    await rm(file);
    return got;
  }

  const PAYLOADS: [string, string | Buffer][] = [
    ['multi-line JSON', '{\n  "session_id": "s",\n  "prompt": "two\\nlines"\n}\n'],
    ['unicode', '{"last_assistant_message":"h\u00e9llo \u2713 \u{1F600} \u4e2d\u6587"}'],
    ['no trailing newline', '{"a":1}'],
    ['trailing newlines and blanks kept', '  {"a":1}  \n\n\n'],
    ['backslashes, CR LF, tabs', 'a\\nb \\ c\r\n\td\\'],
    ['empty stdin', ''],
    ['a 1 MB payload', JSON.stringify({ last_assistant_message: 'x\u00e9\n'.repeat(1 << 18) })],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x0a, 0x80, 0x7d])],
  ];

  describe.each([
    ['bash 5', true],
    ['plain sh', false],
  ])('byte for byte, on the %s path', (_path, named) => {
    beforeEach(async () => {
      if (named) await writeFile(bridgeShellFile(dir), `${BASH}\n`);
    });

    it.each(PAYLOADS)('%s', async (_name, payload) => {
      expect(await bridge([dir, 'jg-1', 'Stop'], payload)).toEqual({ code: 0, out: '' });
      expect((await taken('Stop', named)).equals(Buffer.from(payload))).toBe(true);
    });

    it('the payload argument (codex notify): as given, trailing newlines and all; stdin not read', async () => {
      const arg = '{"type":"agent-turn-complete",\n "last-assistant-message":"\u00e9 \\n"}\n\n';
      expect(await bridge([dir, 'jg-1', 'agent-turn-complete', arg], 'ignored')).toEqual({ code: 0, out: '' });
      expect((await taken('agent-turn-complete', named)).toString('utf8')).toBe(arg);
      await bridge([dir, 'jg-1', 'agent-turn-complete', ''], 'ignored');
      expect((await taken('agent-turn-complete', named)).toString('utf8')).toBe('');
    });

    it('a terminal on stdin is never read: an empty payload, at once', async () => {
      const p = pty.spawn(SH, [BRIDGE, dir, 'jg-1', 'SessionStart'], { cols: 80, rows: 24 });
      expect(await new Promise<number>((resolve) => p.onExit((e) => resolve(e.exitCode)))).toBe(0);
      expect((await taken('SessionStart', named)).toString('utf8')).toBe('');
    });

    it('a write that fails (over the file size limit) leaves no file behind and still exits 0', async () => {
      // The limit is 512 or 1024 bytes (the shell's block); SIGXFSZ ignored, the write fails with EFBIG instead.
      const args = [BRIDGE, dir, 'jg-1', 'Stop'].map((a) => `'${a}'`).join(' ');
      const r = await new Promise<{ code: number; out: string }>((resolve) => {
        const child = execFile(SH, ['-c', `trap '' XFSZ; ulimit -f 1 && exec '${SH}' ${args}`], (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: String(stdout) + String(stderr) }),
        );
        child.stdin!.on('error', () => {});
        child.stdin!.end('x'.repeat(64 * 1024));
      });
      expect(r).toEqual({ code: 0, out: '' });
      expect(await readdir(dir)).toEqual([]);
      // The same call within the limit is written (the limit, not the bridge, failed it).
      expect(await bridge([dir, 'jg-1', 'Stop'], 'x'.repeat(64 * 1024))).toEqual({ code: 0, out: '' });
      expect((await taken('Stop', named)).length).toBe(64 * 1024);
    });

    it.skipIf(process.getuid?.() !== 0)('a full disk leaves no file behind and still exits 0 (needs root to mount a tmpfs)', async () => {
      const mnt = path.join(dir, 'full');
      await mkdir(mnt);
      await run('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', mnt]);
      try {
        if (named) await writeFile(bridgeShellFile(mnt), `${BASH}\n`);
        expect(await bridge([mnt, 'jg-1', 'Stop'], 'x'.repeat(64 * 1024))).toEqual({ code: 0, out: '' });
        expect(await readdir(mnt)).toEqual([]);
      } finally {
        await run('umount', [mnt]);
        await rm(bridgeShellFile(mnt), { force: true });
      }
    });
  });

  it('a NUL byte (no JSON text, no argument holds one): kept by plain sh, dropped by bash', async () => {
    const payload = Buffer.from('{"a":\u0000"b"}');
    await bridge([dir, 'jg-1', 'Stop'], payload);
    expect((await taken('Stop', false)).equals(payload)).toBe(true);
    await writeFile(bridgeShellFile(dir), `${BASH}\n`);
    await bridge([dir, 'jg-1', 'Stop'], payload);
    expect((await taken('Stop', true)).toString('utf8')).toBe('{"a":"b"}');
  });

  it('as the bash named beside the spool, no other program is run (no date, cat or mv): an empty PATH is enough', async () => {
    const PATH = await onlyOnPath('nothing', []);
    await writeFile(bridgeShellFile(dir), `${BASH}\n`);
    const before = BigInt(Date.now()) * 1_000_000n;
    expect(await bridge([dir, 'jg-1', 'Stop'], '{"x":"\u00e9"}\n', { ...process.env, PATH })).toEqual({ code: 0, out: '' });
    const [name] = await readdir(dir);
    const n = parseSpoolName(name!)!;
    expect(n.ns >= before - 1000n && n.ns <= BigInt(Date.now() + 1000) * 1_000_000n).toBe(true);
    expect((await taken('Stop', true)).toString('utf8')).toBe('{"x":"\u00e9"}\n');
    expect(await bridge([dir, 'jg-1', 'agent-turn-complete', '{"y":1}'], '', { ...process.env, PATH })).toEqual({ code: 0, out: '' });
    expect((await taken('agent-turn-complete', true)).toString('utf8')).toBe('{"y":1}');
    // Plain sh needs date, cat and mv: without the name, no call is made there.
    await rm(bridgeShellFile(dir));
    expect(await bridge([dir, 'jg-1', 'Stop'], '{}', { ...process.env, PATH })).toEqual({ code: 0, out: '' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('plain sh still writes a temp file and renames it into view (no mv on PATH: no call, nothing left in view)', async () => {
    const noMv = await onlyOnPath('no-mv', ['date', 'cat', 'rm']);
    expect(await bridge([dir, 'jg-1', 'Stop'], '{"x":1}', { ...process.env, PATH: noMv })).toEqual({ code: 0, out: '' });
    expect(await readdir(dir)).toEqual([]);
    expect(await bridge([dir, 'jg-1', 'Stop'], '{"x":1}')).toEqual({ code: 0, out: '' });
    expect((await taken('Stop', false)).toString('utf8')).toBe('{"x":1}');
  });

  it('plain sh when the name is no runnable file, or when run as a bash older than 5 (macOS)', async () => {
    const noCat = await onlyOnPath('no-cat', ['date', 'mv']);
    for (const named of [path.join(tools, 'gone'), path.join(binDir, 'jaggers-hook.not-there'), dir]) {
      await writeFile(bridgeShellFile(dir), `${named}\n`);
      expect(await bridge([dir, 'jg-1', 'Stop'], '{"x":1}')).toEqual({ code: 0, out: '' });
      expect((await taken('Stop', false)).toString('utf8')).toBe('{"x":1}');
    }
    // Run as bash 3.2 (macOS's sh): no second start, plain sh's way, which needs cat here.
    await writeFile(bridgeShellFile(dir), `${BASH}\n`);
    expect(await bridge([dir, 'jg-1', 'Stop'], '{"x":2}', { ...process.env, BASH_VERSION: '3.2.57(1)-release' })).toEqual({ code: 0, out: '' });
    expect((await taken('Stop', false)).toString('utf8')).toBe('{"x":2}');
    await bridge([dir, 'jg-1', 'Stop'], '{}', { ...process.env, PATH: noCat, BASH_VERSION: '3.2.57(1)-release' });
    expect((await readdir(dir)).filter((n) => !n.startsWith('.'))).toEqual([]);
  });
});
