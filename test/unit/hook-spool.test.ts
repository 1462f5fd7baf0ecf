// The hook spool (issue 27): the files the bridge drops, read bounded, removed, handed on in call order;
// stale ones marked, bad ones skipped with one line each, never a crash.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookSpool, MAX_HOOK_BYTES, parsePayload, parseSpoolName, type HookCall } from '../../src/panes/hook-spool.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-spool-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

function spool(startNs = 2_000_000_000_000_000_000n) {
  const calls: HookCall[] = [];
  const skipped: string[] = [];
  const s = new HookSpool({ dir, deliver: (c) => calls.push(c), skipped: (f, why) => skipped.push(`${path.basename(f)}: ${why}`), nowNs: () => startNs });
  return { s, calls, skipped };
}

describe('hook spool', () => {
  it('parses the names the bridge makes and nothing else', () => {
    expect(parseSpoolName('jg-1a2b.1795664137196529682.16625.Stop')).toEqual({ terminalId: 'jg-1a2b', ns: 1795664137196529682n, pid: 16625, event: 'Stop' });
    expect(parseSpoolName('jg-1.1.2.session.idle')?.event).toBe('session.idle');
    for (const bad of ['jg-1.x.2.Stop', 'jg-1.1.2.', 'jg/1.1.2.Stop', '.jg-1.1.2.tmp', 'jg-1.1.2..Stop', `${'a'.repeat(65)}.1.2.Stop`, 'jg-1.1.2.St op'])
      expect(parseSpoolName(bad), bad).toBeNull();
  });

  it('payloads: JSON parsed, other text raw, nothing as ""', () => {
    expect(parsePayload('{"a":1}\n')).toEqual({ a: 1 });
    expect(parsePayload('{"a":')).toBe('{"a":');
    expect(parsePayload('  ')).toBe('');
  });

  it('delivers in call order (time, then pid), removes every file, marks files from before the start stale', async () => {
    await writeFile(path.join(dir, 'jg-1.3000000000000000000.5.Stop'), '{"b":2}');
    await writeFile(path.join(dir, 'jg-1.3000000000000000000.4.UserPromptSubmit'), '{"a":1}');
    await writeFile(path.join(dir, 'jg-2.1000000000000000000.9.SessionStart'), 'not json');
    const t = spool();
    t.s.start();
    t.s.stop();
    expect(t.calls.map((c) => [c.terminalId, c.event, c.payload, c.stale])).toEqual([
      ['jg-2', 'SessionStart', 'not json', true],
      ['jg-1', 'UserPromptSubmit', { a: 1 }, false],
      ['jg-1', 'Stop', { b: 2 }, false],
    ]);
    expect(await readdir(dir)).toEqual([]);
    expect(t.skipped).toEqual([]);
  });

  it('skips bad names, huge files, FIFOs and folders with one line each, and leaves a bridge still writing alone', async () => {
    await writeFile(path.join(dir, 'not-a-hook'), 'x');
    await writeFile(path.join(dir, 'jg-1.1.1.Big'), Buffer.alloc(MAX_HOOK_BYTES + 1, 'a'));
    execFileSync('mkfifo', [path.join(dir, 'jg-1.2.2.Fifo')]);
    const fresh = `.jg-1.${2_000_000_000_000_000_000n - 1000n}.7.tmp`;
    await writeFile(path.join(dir, fresh), 'half');
    await writeFile(path.join(dir, '.jg-1.1.7.tmp'), 'left by a bridge that died');
    const t = spool();
    t.s.start();
    t.s.stop();
    expect(t.calls).toEqual([]);
    expect(t.skipped.sort()).toEqual([
      'jg-1.1.1.Big: not a regular file of at most 4194304 bytes',
      'jg-1.2.2.Fifo: not a regular file of at most 4194304 bytes',
      'not-a-hook: not a name the hook bridge makes (<terminal id>.<ns>.<pid>.<event>)',
    ]);
    expect(await readdir(dir)).toEqual([fresh]);
  });

  it('a folder that is gone is one line, not a crash', () => {
    const t = spool();
    const gone = new HookSpool({ dir: path.join(dir, 'nope'), deliver: () => {}, skipped: (_f, why) => t.skipped.push(why) });
    gone.drainNow();
    expect(t.skipped[0]).toMatch(/cannot list the hook spool/);
  });

  it('watches the folder: a file the bridge drops later is delivered on its inotify event', async () => {
    let delivered!: (c: HookCall) => void;
    const got = new Promise<HookCall>((resolve) => (delivered = resolve));
    const s = new HookSpool({ dir, deliver: (c) => delivered(c), skipped: () => {}, nowNs: () => 0n });
    s.start();
    try {
      execFileSync('sh', [path.resolve('bin/jaggers-hook'), dir, 'jg-7', 'Stop'], { input: '{"last_assistant_message":"hi"}' });
      expect(await got).toMatchObject({ terminalId: 'jg-7', event: 'Stop', payload: { last_assistant_message: 'hi' }, stale: false });
    } finally {
      s.stop();
    }
  });

  it('lists the folder once per new call, not on the events of temp files or of its own removals', async () => {
    const real = { list: (d: string) => readdirSync(d), read: (f: string) => readFileSync(f, 'utf8'), remove: (f: string) => rmSync(f, { force: true }) };
    let lists = 0;
    let fire!: (name: string | null) => void;
    const calls: HookCall[] = [];
    const s = new HookSpool({
      dir,
      deliver: (c) => calls.push(c),
      skipped: () => {},
      nowNs: () => 0n,
      ports: { ...real, list: (d) => (lists++, real.list(d)), watchFolder: (_d, on) => ((fire = on), { close() {} }) },
    });
    s.start();
    expect(lists).toBe(1);
    const name = 'jg-7.5.6.Stop';
    const settled = () => new Promise((r) => setImmediate(r));
    // The bridge: its temp file created and written, then renamed into view.
    fire('.jg-7.5.6.tmp');
    fire('.jg-7.5.6.tmp');
    await settled();
    expect(lists).toBe(1);
    await writeFile(path.join(dir, name), '{}');
    fire('.jg-7.5.6.tmp');
    fire(name);
    await settled();
    expect(calls.map((c) => c.event)).toEqual(['Stop']);
    expect(lists).toBe(2);
    // Its removal by the spool is no new call; an event without a name still drains.
    fire(name);
    await settled();
    expect(lists).toBe(2);
    fire(null);
    await settled();
    expect(lists).toBe(3);
    s.stop();
  });
});
