// The one way a file is read for an agent or a client (src/fs/confine.ts): what it reads, what it refuses
// (each without blocking, with the path given), and a folder swapped for a link out while it reads.
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfined, readConfinedText, RUN_FOLDERS } from '../../src/fs/confine.js';
import { confineFixture, INSIDE, mkfifo, SECRET, swapInbox, tally } from '../helpers/confine-fixture.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jg-confine-');
const what = 'test';

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const x = e as { code: string; message: string };
    return { code: x.code, message: x.message };
  }
  throw new Error('expected a refusal, but the read succeeded');
}

describe('readConfined', () => {
  it('reads a file of a shared folder by a path relative to the project or absolute, from an offset, at most `limit` bytes', async () => {
    const f = await confineFixture(await temp());
    expect(await readConfinedText(f, '.jaggers/inbox/m.md', what)).toBe(INSIDE);
    const r = await readConfined(f, path.join(f.jaggersDir, 'handover', 'turn_1_abc.md'), { what, offset: 4, limit: 7 });
    expect([r.data.toString(), r.size, r.path]).toEqual([INSIDE.slice(4, 11), INSIDE.length, path.join(f.jaggersDir, 'handover', 'turn_1_abc.md')]);
    expect((await readConfined(f, '.jaggers/inbox/m.md', { what, offset: 100, limit: 10 })).data.length).toBe(0);
  });

  it('refuses the token and every other file of .jaggers/ outside the shared folders', async () => {
    const f = await confineFixture(await temp());
    await mkdir(path.join(f.jaggersDir, 'logs'));
    await writeFile(path.join(f.jaggersDir, 'logs', 'current.log'), 'log');
    await writeFile(path.join(f.jaggersDir, 'serve.json'), '{}');
    expect(await refusal(readConfinedText(f, '.jaggers/token', 'read_artifact'))).toEqual({
      code: 'E_FILE_REFUSED',
      message:
        'read_artifact: ".jaggers/token" is private to the supervisor (".jaggers/token"): only files in .jaggers/handover/, .jaggers/inbox/, .jaggers/jobs/ are read',
    });
    for (const p of ['.jaggers/serve.json', '.jaggers/logs/current.log', path.join(f.jaggersDir, 'token'), '.jaggers/inbox/../token'])
      expect((await refusal(readConfinedText(f, p, what))).code, p).toBe('E_FILE_REFUSED');
    // A folder the caller names (a headless run's files) is the only one then.
    await mkdir(path.join(f.jaggersDir, 'work', 'j-1'), { recursive: true });
    await writeFile(path.join(f.jaggersDir, 'work', 'j-1', '1.out'), 'out');
    expect(await readConfinedText(f, '.jaggers/work/j-1/1.out', what, { folders: RUN_FOLDERS })).toBe('out');
    expect((await refusal(readConfinedText(f, '.jaggers/work/j-1/1.out', what))).code).toBe('E_FILE_REFUSED');
    expect((await refusal(readConfinedText(f, '.jaggers/inbox/m.md', what, { folders: RUN_FOLDERS }))).code).toBe('E_FILE_REFUSED');
  });

  it('refuses a hard link (to the token, or to a file outside) and the file it links to', async () => {
    const f = await confineFixture(await temp());
    await link(path.join(f.jaggersDir, 'token'), path.join(f.jaggersDir, 'inbox', 'token.md'));
    await link(path.join(f.outside, 'secret.txt'), path.join(f.jaggersDir, 'inbox', 'secret.md'));
    expect(await refusal(readConfinedText(f, '.jaggers/inbox/token.md', what))).toEqual({
      code: 'E_FILE_REFUSED',
      message: 'test: ".jaggers/inbox/token.md" has 2 hard links: only a file with one name is read',
    });
    expect((await refusal(readConfinedText(f, '.jaggers/inbox/secret.md', what))).code).toBe('E_FILE_REFUSED');
  });

  it('refuses a FIFO, a socket and a folder without blocking', async () => {
    const f = await confineFixture(await temp());
    mkfifo(path.join(f.jaggersDir, 'inbox', 'fifo.md'));
    const sock = path.join(f.jaggersDir, 'inbox', 's.md');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      expect(await refusal(readConfinedText(f, '.jaggers/inbox/fifo.md', what))).toEqual({
        code: 'E_FILE_REFUSED',
        message: 'test: ".jaggers/inbox/fifo.md" is a FIFO, not a regular file',
      });
      expect(await refusal(readConfinedText(f, '.jaggers/inbox/s.md', what))).toEqual({
        code: 'E_FILE_REFUSED',
        message: 'test: ".jaggers/inbox/s.md" is a socket, not a regular file',
      });
      expect(await refusal(readConfinedText(f, '.jaggers/inbox', what))).toEqual({
        code: 'E_FILE_REFUSED',
        message: 'test: ".jaggers/inbox" is a folder, not a regular file',
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a path outside .jaggers/, a symbolic link out of it, and a folder that leads out', async () => {
    const f = await confineFixture(await temp());
    expect(await refusal(readConfinedText(f, '../outside/secret.txt', what))).toEqual({
      code: 'E_FILE_REFUSED',
      message: 'test: "../outside/secret.txt" is outside .jaggers/: only files in .jaggers/handover/, .jaggers/inbox/, .jaggers/jobs/ are read',
    });
    expect((await refusal(readConfinedText(f, '/etc/passwd', what))).code).toBe('E_FILE_REFUSED');
    expect((await refusal(readConfinedText(f, '.jaggers/../../outside/secret.txt', what))).code).toBe('E_FILE_REFUSED');
    await symlink(path.join(f.outside, 'secret.txt'), path.join(f.jaggersDir, 'inbox', 'link.md'));
    expect(await refusal(readConfinedText(f, '.jaggers/inbox/link.md', what))).toEqual({
      code: 'E_FILE_REFUSED',
      message: 'test: ".jaggers/inbox/link.md" is a symbolic link, not a regular file',
    });
    await symlink(f.outside, path.join(f.jaggersDir, 'handover', 'out'));
    const out = await refusal(readConfinedText(f, '.jaggers/handover/out/secret.txt', what));
    expect(out.code).toBe('E_FILE_REFUSED');
    expect(out.message).toBe(
      `test: ".jaggers/handover/out/secret.txt" is outside .jaggers/ (it leads to ${JSON.stringify(path.join(f.outside, 'secret.txt'))}): only files in .jaggers/handover/, .jaggers/inbox/, .jaggers/jobs/ are read`,
    );
    expect(out.message).not.toContain(SECRET);
  });

  it('a file that is not there is E_NOT_FOUND naming it', async () => {
    const f = await confineFixture(await temp());
    expect(await refusal(readConfinedText(f, '.jaggers/inbox/nope.md', what))).toEqual({
      code: 'E_NOT_FOUND',
      message: 'test: ".jaggers/inbox/nope.md" does not exist',
    });
    expect((await refusal(readConfinedText(f, '.jaggers/inbox/m.md/x', what))).code).toBe('E_NOT_FOUND');
  });

  it('reads at most `limit` bytes; a whole read of a larger file is refused', async () => {
    const f = await confineFixture(await temp());
    await writeFile(path.join(f.jaggersDir, 'inbox', 'big.md'), 'x'.repeat(5000));
    expect((await readConfined(f, '.jaggers/inbox/big.md', { what, limit: 1000 })).data.length).toBe(1000);
    expect(await readConfinedText(f, '.jaggers/inbox/big.md', what, { max: 5000 })).toHaveLength(5000);
    expect(await refusal(readConfinedText(f, '.jaggers/inbox/big.md', what, { max: 4999 }))).toEqual({
      code: 'E_FILE_REFUSED',
      message: 'test: ".jaggers/inbox/big.md" is 5000 bytes, over the 4999 read at once',
    });
  });

  it('a folder swapped for a link out of .jaggers/ during 3,000 reads: not one returns what is outside', async () => {
    const f = await confineFixture(await temp());
    const swapper = await swapInbox(f);
    let counts: Record<string, number>;
    try {
      counts = await tally(3000, 8, async () => (await readConfined(f, '.jaggers/inbox/m.md', { what, limit: 4096 })).data.toString());
    } finally {
      const swaps = await swapper.stop();
      expect(swaps).toBeGreaterThan(0);
    }
    expect(counts.SECRET ?? 0, JSON.stringify(counts)).toBe(0);
    // The swap was seen: some reads found the link (refused) and some the folder (read).
    expect(counts.inside ?? 0, JSON.stringify(counts)).toBeGreaterThan(0);
    expect(counts.E_FILE_REFUSED ?? 0, JSON.stringify(counts)).toBeGreaterThan(0);
    expect(Object.keys(counts).filter((k) => !['inside', 'E_FILE_REFUSED', 'E_NOT_FOUND'].includes(k))).toEqual([]);
  });
});
