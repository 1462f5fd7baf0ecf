// The one handler of write failures the disk causes (src/fs/disk-health.ts) on fakes, and the writers that
// report to it: a durable append cut short by a full disk is cut back (never half a line left to be read
// back), an atomic replace leaves the old file, and the supervisor's log survives a write error.
import fs from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JaggersError } from '../../src/errors.js';
import { appendDurable, DurableAppender, writeFileAtomic } from '../../src/fs/durable.js';
import { describeFailure, diskErrorCode, DiskHealth, onWriteFailure, type DiskFailure } from '../../src/fs/disk-health.js';
import { openSupervisorLog } from '../../src/supervisor/log.js';
import { deferred } from '../helpers/work-fakes.js';
import { tempDirs } from '../helpers/temp-dir.js';

const errno = (code: string, syscall = 'write') =>
  Object.assign(new Error(`${code}: ${code === 'ENOSPC' ? 'no space left on device' : 'failed'}, ${syscall}`), { code, syscall });
const at = new Date('2026-01-02T03:04:05.000Z');

function health(probe: (p: string) => Promise<void>) {
  const changes: (DiskFailure | null)[] = [];
  const probes: string[] = [];
  const h = new DiskHealth({
    probe: (p) => {
      probes.push(p);
      return probe(p);
    },
    now: () => at,
  });
  h.onChange((f) => changes.push(f));
  return { h, changes, probes };
}

describe('the disk health handler', () => {
  it('knows the disk errors, also wrapped in a JaggersError; others are not its business', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']) expect(diskErrorCode(errno(code))).toBe(code);
    expect(diskErrorCode(new JaggersError('E_DISK_FULL', 'x', { cause: errno('ENOSPC') }))).toBe('ENOSPC');
    expect(diskErrorCode(errno('EACCES'))).toBeNull();
    expect(diskErrorCode(new Error('plain'))).toBeNull();
    const { h, changes } = health(async () => {});
    expect(h.failed('/p/x', errno('EACCES'))).toBe(false);
    expect(h.failing).toBeNull();
    expect(changes).toEqual([]);
  });

  it('marks the disk failing with the path and the error, once however many writes fail', () => {
    const { h, changes } = health(async () => {});
    expect(h.failed('/p/.jaggers/events.jsonl', new JaggersError('E_DISK_FULL', 'appending failed', { cause: errno('ENOSPC') }))).toBe(true);
    expect(h.failed('/p/.jaggers/logs/supervisor.1.log', errno('ENOSPC'))).toBe(true);
    const f = { path: '/p/.jaggers/logs/supervisor.1.log', code: 'ENOSPC', error: 'ENOSPC: no space left on device, write', since: at.toISOString() };
    expect(h.failing).toEqual(f);
    expect(changes).toEqual([{ ...f, path: '/p/.jaggers/events.jsonl' }]);
    expect(describeFailure(f)).toBe(
      `the disk is failing since ${at.toISOString()}: writing /p/.jaggers/logs/supervisor.1.log failed with ENOSPC: no space left on device, write; new work is refused (E_DISK_FULL) until a write succeeds there again`,
    );
  });

  it('does nothing before new work while the disk works (no probe)', async () => {
    const { h, probes } = health(async () => {});
    await h.check();
    expect(probes).toEqual([]);
  });

  it('refuses new work with E_DISK_FULL naming the path and error while the probe still fails; goes on once it succeeds', async () => {
    let full = true;
    const { h, changes, probes } = health(async () => {
      if (full) throw errno('ENOSPC');
    });
    h.failed('/p/.jaggers/inbox/m-1.md', errno('ENOSPC'));
    const refused = await h.check().catch((e: JaggersError) => e);
    expect(refused).toBeInstanceOf(JaggersError);
    expect(refused).toMatchObject({ code: 'E_DISK_FULL' });
    expect((refused as JaggersError).message).toMatch(
      /^the disk is failing: writing \/p\/\.jaggers\/inbox\/m-1\.md failed with ENOSPC: no space left on device, write \(since 2026-01-02T03:04:05\.000Z\); new work is refused/,
    );
    expect(probes).toEqual(['/p/.jaggers/inbox/m-1.md']);
    full = false;
    await h.check();
    expect(h.failing).toBeNull();
    expect(changes.map((c) => c && c.path)).toEqual(['/p/.jaggers/inbox/m-1.md', null]);
    await h.check();
    expect(probes).toHaveLength(2);
  });

  it('requests arriving together share one probe', async () => {
    const gate = deferred();
    const { h, probes } = health(() => gate.promise);
    h.failed('/p/.jaggers/events.jsonl', errno('EIO'));
    const all = Promise.all([h.check(), h.check(), h.check()]);
    gate.resolve();
    await all;
    expect(probes).toHaveLength(1);
    expect(h.failing).toBeNull();
  });

  it('a probe failing for another reason (the folder removed) clears the mark: the next real write tells', async () => {
    const { h } = health(async () => {
      throw errno('ENOENT', 'open');
    });
    h.failed('/p/.jaggers/jobs/j-1.md', errno('ENOSPC'));
    await h.check();
    expect(h.failing).toBeNull();
  });
});

describe('writers on a disk that refuses writes', () => {
  const temp = tempDirs('jg-disk-');
  const reported: { file: string; code: string | null }[] = [];
  let off: () => void = () => {};
  afterEach(() => {
    vi.restoreAllMocks();
    off();
    reported.length = 0;
  });
  const listen = () => (off = onWriteFailure((file, e) => reported.push({ file, code: diskErrorCode(e) })));

  /** fs.writeSync writes `room` more bytes to `file`'s descriptors, then fails with ENOSPC. */
  function diskFullAfter(room: number, fdOf: () => number | null) {
    const real = fs.writeSync.bind(fs) as (...a: unknown[]) => number;
    let left = room;
    return vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, buf: Buffer | string, ...rest: unknown[]) => {
      if (fd !== fdOf()) return real(fd, buf, ...rest);
      const b = typeof buf === 'string' ? Buffer.from(buf) : buf;
      const offset = typeof rest[0] === 'number' ? rest[0] : 0;
      const length = typeof rest[1] === 'number' ? rest[1] : b.length - offset;
      if (left <= 0) throw errno('ENOSPC');
      const n = Math.min(left, length);
      left -= n;
      return real(fd, b, offset, n);
    }) as typeof fs.writeSync);
  }

  it('an append cut short is cut back to where it began, reported, and E_DISK_FULL; the next append leaves whole lines', async () => {
    listen();
    const file = path.join(await temp(), 'events.jsonl');
    await appendDurable(file, '{"n":1}\n');
    let fd: number | null = null;
    const open = fs.openSync.bind(fs);
    vi.spyOn(fs, 'openSync').mockImplementation(((...a: Parameters<typeof fs.openSync>) => (fd = open(...a))) as typeof fs.openSync);
    diskFullAfter(5, () => fd);
    const e = await appendDurable(file, '{"n":2,"long":"enough to be cut"}\n').catch((x: JaggersError) => x);
    expect(e).toMatchObject({ code: 'E_DISK_FULL' });
    expect((e as JaggersError).message).toBe(`appending to ${file} failed: ENOSPC: no space left on device, write (the disk is full or failing)`);
    expect(await readFile(file, 'utf8')).toBe('{"n":1}\n');
    expect(reported).toEqual([{ file, code: 'ENOSPC' }]);
    vi.restoreAllMocks();
    expect(await appendDurable(file, '{"n":3}\n')).toBe(16);
    expect((await readFile(file, 'utf8')).split('\n')).toEqual(['{"n":1}', '{"n":3}', '']);
  });

  it("the journal's kept-open appender too: cut back, E_DISK_FULL, and whole lines after", async () => {
    listen();
    const file = path.join(await temp(), 'events.jsonl');
    await appendDurable(file, '{"n":1}\n');
    let fd: number | null = null;
    const open = fs.openSync.bind(fs);
    vi.spyOn(fs, 'openSync').mockImplementation(((...a: Parameters<typeof fs.openSync>) => (fd = open(...a))) as typeof fs.openSync);
    const journal = new DurableAppender(file);
    expect(await journal.append('{"n":2}\n')).toBe(16);
    diskFullAfter(5, () => fd);
    const e = await journal.append('{"n":3,"long":"enough to be cut"}\n').catch((x: JaggersError) => x);
    expect(e).toMatchObject({ code: 'E_DISK_FULL' });
    expect(await readFile(file, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    expect(reported).toEqual([{ file, code: 'ENOSPC' }]);
    vi.restoreAllMocks();
    expect(await journal.append('{"n":4}\n')).toBe(24);
    journal.close();
    expect((await readFile(file, 'utf8')).split('\n')).toEqual(['{"n":1}', '{"n":2}', '{"n":4}', '']);
  });

  it('an atomic replace that fails leaves the old file and no temp file', async () => {
    listen();
    const dir = await temp();
    const file = path.join(dir, 'sessions.json');
    await writeFile(file, 'old\n');
    let fd: number | null = null;
    const open = fs.openSync.bind(fs);
    vi.spyOn(fs, 'openSync').mockImplementation(((...a: Parameters<typeof fs.openSync>) => (fd = open(...a))) as typeof fs.openSync);
    diskFullAfter(2, () => fd);
    await expect(writeFileAtomic(file, 'new and longer\n')).rejects.toMatchObject({
      code: 'E_DISK_FULL',
      message: expect.stringContaining(`writing ${file} failed: ENOSPC`),
    });
    vi.restoreAllMocks();
    expect(await readFile(file, 'utf8')).toBe('old\n');
    expect(fs.readdirSync(dir)).toEqual(['sessions.json']);
    expect(reported).toEqual([{ file, code: 'ENOSPC' }]);
  });

  it("the log's write error is reported, not an unhandled 'error' that ends the process; its lines are written once the disk takes them", async () => {
    listen();
    const dir = await temp();
    const { log, file, close } = await openSupervisorLog(dir, 'info');
    log.info({}, 'before');
    const target = fs.realpathSync(file);
    const fds = () => {
      for (const n of fs.readdirSync('/proc/self/fd')) {
        try {
          if (fs.readlinkSync(`/proc/self/fd/${n}`) === target) return Number(n);
        } catch {
          // closed meanwhile
        }
      }
      return null;
    };
    const logFd = fds();
    expect(logFd).not.toBeNull();
    diskFullAfter(0, () => logFd);
    expect(() => log.info({}, 'while full')).not.toThrow();
    expect(reported).toEqual([{ file: target, code: 'ENOSPC' }]);
    vi.restoreAllMocks();
    log.info({}, 'after');
    await close();
    const msgs = (await readFile(target, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs).toEqual(['before', 'while full', 'after']);
  });
});
