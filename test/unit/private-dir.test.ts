// Private folders: made 0700; an existing one used only when it is a real folder of ours that nobody else
// can write into (one others may only read is narrowed); anything else refused, naming path, owner, mode.
import { chmod, chown, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPrivateFolder, ensurePrivateFolder, judgePrivateFolder } from '../../src/fs/private-dir.js';
import { tempDirs } from '../helpers/temp-dir.js';

const asRoot = process.getuid?.() === 0;
const uid = process.getuid?.() ?? 0;

describe('private folders', () => {
  const temp = tempDirs('jg-private-');

  it('judges by lstat facts: a symlink, a file, another owner, group or world write are refused', () => {
    const dir = { isDirectory: true, isSymbolicLink: false, uid: 1000, mode: 0o40700 };
    expect(judgePrivateFolder(dir, 1000)).toEqual({ ok: true, narrow: false });
    expect(judgePrivateFolder({ ...dir, mode: 0o40755 }, 1000)).toEqual({ ok: true, narrow: true });
    expect(judgePrivateFolder({ ...dir, isSymbolicLink: true, isDirectory: false }, 1000)).toEqual({ ok: false, why: expect.stringMatching(/symbolic link/) });
    expect(judgePrivateFolder({ ...dir, isDirectory: false }, 1000)).toEqual({ ok: false, why: 'it is not a folder' });
    expect(judgePrivateFolder({ ...dir, uid: 65534 }, 1000)).toEqual({ ok: false, why: 'it is owned by uid 65534, not by you (uid 1000)' });
    expect(judgePrivateFolder({ ...dir, mode: 0o40777 }, 1000)).toEqual({ ok: false, why: 'its group and everyone may write into it' });
    expect(judgePrivateFolder({ ...dir, mode: 0o41733 }, 1000)).toEqual({ ok: false, why: 'its group and everyone may write into it' });
    expect(judgePrivateFolder({ ...dir, mode: 0o40770 }, 1000)).toEqual({ ok: false, why: 'its group may write into it' });
  });

  it('makes a missing folder (and its parents) 0700', async () => {
    const dir = path.join(await temp(), 'a', 'b');
    await ensurePrivateFolder(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(path.dirname(dir))).mode & 0o777).toBe(0o700);
    // Again: it is there and fine.
    await ensurePrivateFolder(dir);
    expect(checkPrivateFolder(path.join(dir, 'missing'))).toBe(false);
  });

  it('narrows a folder of ours that others may only read to 0700', async () => {
    const dir = path.join(await temp(), 'readable');
    await mkdir(dir);
    await chmod(dir, 0o755);
    await ensurePrivateFolder(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('refuses a folder everyone may write into, naming it, its owner and its mode, and leaves it as it is', async () => {
    const dir = path.join(await temp(), 'open');
    await mkdir(dir);
    await chmod(dir, 0o777);
    const msg = new RegExp(`refusing to use ${dir} \\(owner uid ${uid}, mode 0777\\): its group and everyone may write into it`);
    await expect(ensurePrivateFolder(dir)).rejects.toMatchObject({ code: 'E_UNSAFE_FOLDER', message: expect.stringMatching(msg) });
    expect(() => checkPrivateFolder(dir)).toThrow(msg);
    expect((await stat(dir)).mode & 0o777).toBe(0o777);
  });

  it('refuses a symlink to a good folder (not followed) and a file in its place', async () => {
    const base = await temp();
    const real = path.join(base, 'real');
    await ensurePrivateFolder(real);
    const link = path.join(base, 'link');
    await symlink(real, link);
    await expect(ensurePrivateFolder(link)).rejects.toMatchObject({ code: 'E_UNSAFE_FOLDER', message: expect.stringMatching(/link .*symbolic link/) });
    expect(() => checkPrivateFolder(link)).toThrow(/symbolic link/);
    const dangling = path.join(base, 'dangling');
    await symlink(path.join(base, 'nowhere'), dangling);
    await expect(ensurePrivateFolder(dangling)).rejects.toMatchObject({ code: 'E_UNSAFE_FOLDER' });
    const file = path.join(base, 'file');
    await writeFile(file, '');
    await expect(ensurePrivateFolder(file)).rejects.toMatchObject({ code: 'E_UNSAFE_FOLDER', message: expect.stringMatching(/not a folder/) });
  });

  it.skipIf(!asRoot)('refuses a folder another user owns, even 0700 (needs root to chown; skipped otherwise)', async () => {
    const dir = path.join(await temp(), 'theirs');
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, 65534, 65534);
    await expect(ensurePrivateFolder(dir)).rejects.toMatchObject({
      code: 'E_UNSAFE_FOLDER',
      message: expect.stringMatching(new RegExp(`${dir} \\(owner uid 65534, mode 0700\\): it is owned by uid 65534, not by you \\(uid 0\\)`)),
    });
  });
});
