// The hook spool (issue 27): the files the bridge drops, read bounded, removed, handed on in call order;
// stale ones marked, bad ones skipped with one line each, never a crash.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HookSpool, MAX_HOOK_BYTES, parsePayload, parseSpoolName, SWEEP_MS, type HookCall, type SpoolPorts } from '../../src/panes/hook-spool.js';
import { FakeClock } from '../helpers/fake-clock.js';

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

  it('takes the files the events name, in call order, without listing the folder; not on temp files or its own removals', async () => {
    const f = fakeSpool();
    f.s.start();
    expect(f.lists).toBe(1);
    // The bridge: its temp file created and written, then renamed into view.
    f.drop('jg-7.5.6.Stop', '{"n":1}');
    f.fire('.jg-7.5.6.tmp');
    f.fire('.jg-7.5.6.tmp');
    f.fire('jg-7.5.6.Stop');
    // Two calls of one terminal in one tick, their events in the wrong order: taken in ns order.
    f.drop('jg-8.20.1.Stop', '"second"');
    f.drop('jg-8.10.9.UserPromptSubmit', '"first"');
    f.fire('jg-8.20.1.Stop');
    f.fire('jg-8.10.9.UserPromptSubmit');
    await settled();
    expect(f.calls.map((c) => [c.terminalId, c.event, c.payload])).toEqual([
      ['jg-7', 'Stop', { n: 1 }],
      ['jg-8', 'UserPromptSubmit', 'first'],
      ['jg-8', 'Stop', 'second'],
    ]);
    expect(f.files.size).toBe(0);
    expect(f.reads).toBe(3);
    // The events of its own removals are no new calls: nothing read, nothing listed.
    for (const name of ['jg-7.5.6.Stop', 'jg-8.20.1.Stop', 'jg-8.10.9.UserPromptSubmit']) f.fire(name);
    await settled();
    expect([f.lists, f.reads, f.skipped]).toEqual([1, 3, []]);
    f.s.stop();
  });

  it('an event without a name lists the folder (and takes what is there)', async () => {
    const f = fakeSpool();
    f.s.start();
    f.drop('jg-1.7.1.Stop', '{}');
    f.fire(null);
    await settled();
    expect(f.lists).toBe(2);
    expect(f.calls.map((c) => c.event)).toEqual(['Stop']);
    f.s.stop();
  });

  it('a named file that is gone (taken already) is skipped quietly', async () => {
    const f = fakeSpool();
    f.s.start();
    f.fire('jg-1.7.1.Stop');
    await settled();
    expect([f.calls, f.skipped, f.lists]).toEqual([[], [], 1]);
    f.s.stop();
  });

  it('a call whose event was lost is taken by the sweep a second after a call, and nothing lists at idle', async () => {
    const f = fakeSpool();
    f.s.start();
    f.drop('jg-1.1.1.Stop', '{}');
    f.drop('jg-2.2.2.Stop', '{}'); // its event dropped (inotify's queue overflowed)
    f.fire('jg-1.1.1.Stop');
    await settled();
    expect(f.calls.map((c) => c.terminalId)).toEqual(['jg-1']);
    f.clock.advance(SWEEP_MS - 1);
    await settled();
    expect(f.lists).toBe(1);
    f.clock.advance(1);
    await settled();
    expect(f.lists).toBe(2);
    expect(f.calls.map((c) => c.terminalId)).toEqual(['jg-1', 'jg-2']);
    // Idle: no timer left, however long.
    f.clock.advance(60 * SWEEP_MS);
    await settled();
    expect([f.lists, f.clock.pending]).toEqual([2, 0]);
    f.s.stop();
  });

  it('a bad name an event names is one line, and the event of its removal is not a second', async () => {
    const f = fakeSpool();
    f.s.start();
    f.drop('not-a-hook', 'x');
    f.fire('not-a-hook');
    await settled();
    f.fire('not-a-hook');
    await settled();
    expect(f.skipped).toEqual(['not-a-hook: not a name the hook bridge makes (<terminal id>.<ns>.<pid>.<event>)']);
    expect(f.files.size).toBe(0);
    f.s.stop();
  });
});

const settled = () => new Promise((r) => setImmediate(r));

/** A spool on a fake folder (a map of names to texts), a fake watch the test fires, and a simulated clock. */
function fakeSpool() {
  const files = new Map<string, string>();
  const clock = new FakeClock();
  const calls: HookCall[] = [];
  const skipped: string[] = [];
  let fire: (name: string | null) => void = () => {};
  const t = {
    files,
    clock,
    calls,
    skipped,
    lists: 0,
    reads: 0,
    fire: (name: string | null) => fire(name),
    drop: (name: string, text: string) => files.set(name, text),
  };
  const enoent = (file: string) => Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
  const ports: SpoolPorts = {
    list: () => (t.lists++, [...files.keys()]),
    read: (file) => {
      t.reads++;
      const text = files.get(path.basename(file));
      if (text === undefined) throw enoent(file);
      return text;
    },
    remove: (file) => void files.delete(path.basename(file)),
    watchFolder: (_dir, on) => ((fire = on), { close: () => (fire = () => {}) }),
  };
  const s = new HookSpool({
    dir: '/spool',
    deliver: (c) => calls.push(c),
    skipped: (f, why) => skipped.push(`${path.basename(f)}: ${why}`),
    nowNs: () => 0n,
    ports,
    clock,
  });
  return Object.assign(t, { s });
}
