// The supervisor's log: JSON lines with the ids a line is about, rotated by size, the newest linked.
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logLevel, openSupervisorLog } from '../../src/supervisor/log.js';

describe('supervisor log', () => {
  let dir = '';
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('writes JSON lines with time, level, message and ids; rotates past its size and keeps a bounded number', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'jg-log-'));
    const { log, file, close } = await openSupervisorLog(dir, 'debug', { size: '1k', keep: 2 });
    // Lines as the supervisor writes them, a few at a time (pino-roll measures after each flushed write).
    for (let i = 0; i < 200; i++) {
      log.child({ task: 't-1', terminal: 'jg-00000001' }).info({ i }, 'a line long enough to fill a kilobyte quickly');
      await new Promise((r) => setTimeout(r, 1));
    }
    await close();
    const names = (await readdir(path.join(dir, 'logs'))).sort();
    const rolled = names.filter((n) => /^supervisor\.\d+\.log$/.test(n));
    // 2 kept besides the one being written (older ones removed).
    expect(rolled.length).toBeGreaterThanOrEqual(2);
    expect(rolled.length).toBeLessThanOrEqual(3);
    expect(names).toContain('current.log');
    const current = await readlink(file);
    expect(rolled).toContain(current);
    const last = (await readFile(file, 'utf8')).trim().split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({
      level: 30,
      msg: 'a line long enough to fill a kilobyte quickly',
      task: 't-1',
      terminal: 'jg-00000001',
      i: 199,
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('JAGGERS_LOG picks the level; anything else is info', () => {
    expect(logLevel({ JAGGERS_LOG: 'debug' })).toBe('debug');
    expect(logLevel({ JAGGERS_LOG: 'WARN' })).toBe('warn');
    expect(logLevel({ JAGGERS_LOG: 'loud' })).toBe('info');
    expect(logLevel({})).toBe('info');
  });
});
