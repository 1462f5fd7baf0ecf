// The hook spool (issue 27): the files the bridge drops, read bounded, removed, handed on in call order;
// stale ones marked, bad ones skipped with one line each, never a crash.
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bridgeShellFile } from '../../src/panes/bridge-shell.js';
import {
  HookSpool,
  MAX_HOOK_BYTES,
  parsePayload,
  parseSpoolName,
  realSpoolPorts,
  SWEEP_MS,
  type HookCall,
  type SpoolPorts,
} from '../../src/panes/hook-spool.js';
import { FakeClock } from '../helpers/fake-clock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'jg-spool-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(bridgeShellFile(dir), { force: true });
});

function spool(startNs = 2_000_000_000_000_000_000n) {
  const calls: HookCall[] = [];
  const skipped: string[] = [];
  const s = new HookSpool({ dir, deliver: (c) => calls.push(c), skipped: (f, why) => skipped.push(`${path.basename(f)}: ${why}`), nowNs: () => startNs });
  return { s, calls, skipped };
}

describe('hook spool', () => {
  it('parses the names the bridge makes, with its size and without, and nothing else', () => {
    expect(parseSpoolName('jg-1a2b.1795664137196529682.16625.Stop')).toEqual({
      terminalId: 'jg-1a2b',
      ns: 1795664137196529682n,
      pid: 16625,
      size: null,
      event: 'Stop',
    });
    expect(parseSpoolName('jg-1a2b.1795664137196529682.16625-2048.Stop')).toEqual({
      terminalId: 'jg-1a2b',
      ns: 1795664137196529682n,
      pid: 16625,
      size: 2048,
      event: 'Stop',
    });
    expect(parseSpoolName('jg-1.1.2-0.SessionStart')).toMatchObject({ pid: 2, size: 0, event: 'SessionStart' });
    expect(parseSpoolName('jg-1.1.2.session.idle')?.event).toBe('session.idle');
    expect(parseSpoolName('jg-1.1.2-9.session.idle')).toMatchObject({ pid: 2, size: 9, event: 'session.idle' });
    // One reading each: the size follows the pid's digits after '-', which neither the pid nor the event's start holds.
    expect(parseSpoolName('jg-1.1.2.3-4.Stop')).toMatchObject({ pid: 2, size: null, event: '3-4.Stop' });
    expect(parseSpoolName('jg-1.1.2-9999999999.Stop')?.size).toBe(9_999_999_999);
    for (const bad of [
      'jg-1.x.2.Stop',
      'jg-1.1.2.',
      'jg/1.1.2.Stop',
      '.jg-1.1.2.tmp',
      'jg-1.1.2..Stop',
      `${'a'.repeat(65)}.1.2.Stop`,
      'jg-1.1.2.St op',
      // sizes: none after the '-', a leading zero (a second way to write one), two, too many digits, on the wrong part, no event
      'jg-1.1.2-.Stop',
      'jg-1.1.2-07.Stop',
      'jg-1.1.2-00.Stop',
      'jg-1.1.2-3-4.Stop',
      'jg-1.1.2--3.Stop',
      'jg-1.1.2-12345678901.Stop',
      'jg-1.1.2-x.Stop',
      'jg-1.1-3.2.Stop',
      'jg-1.1.2-3.',
      'jg-1.1.2-3',
    ])
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
      'not-a-hook: not a name the hook bridge makes (<terminal id>.<ns>.<pid>-<size>.<event>)',
    ]);
    expect(await readdir(dir)).toEqual([fresh]);
  });

  it('a file whose name says its size: taken whole once it holds that many bytes; more is skipped, one cut short long ago goes', async () => {
    const start = 2_000_000_000_000_000_000n;
    const writing = `jg-1.${start - 1000n}.7-7.Stop`;
    await writeFile(path.join(dir, writing), '{"a":');
    await writeFile(path.join(dir, `jg-1.${start - 900n}.8-2.Stop`), '{"b":2}');
    await writeFile(path.join(dir, `jg-1.${start - 61_000_000_000n}.9-9.Stop`), '{"c":');
    await writeFile(path.join(dir, `jg-1.${start - 800n}.10-0.SessionStart`), '');
    await writeFile(path.join(dir, `jg-1.${start - 700n}.11-4194305.Stop`), '{}');
    const t = spool(start);
    t.s.start();
    expect(t.calls.map((c) => [c.event, c.payload])).toEqual([['SessionStart', '']]);
    expect(t.skipped.sort()).toEqual([
      `jg-1.${start - 61_000_000_000n}.9-9.Stop: 5 of the 9 bytes its name says, 61 s after the bridge started: left by a bridge that died`,
      `jg-1.${start - 900n}.8-2.Stop: 7 bytes, more than the 2 its name says: not what the bridge wrote`,
      `jg-1.${start - 700n}.11-4194305.Stop: its name says 4194305 bytes, more than the 4194304 a hook file may hold`,
    ]);
    // The bridge still writing is left alone, and read once whole.
    expect(await readdir(dir)).toEqual([writing]);
    await writeFile(path.join(dir, writing), '{"a":1}');
    t.s.drainNow();
    t.s.stop();
    expect(t.calls.map((c) => [c.event, c.payload])).toEqual([
      ['SessionStart', ''],
      ['Stop', { a: 1 }],
    ]);
    expect(await readdir(dir)).toEqual([]);
    expect(t.skipped).toHaveLength(3);
  });

  it('a folder that is gone is one line, not a crash', () => {
    const t = spool();
    const gone = new HookSpool({ dir: path.join(dir, 'nope'), deliver: () => {}, skipped: (_f, why) => t.skipped.push(why) });
    gone.drainNow();
    expect(t.skipped[0]).toMatch(/cannot list the hook spool/);
  });

  it.each([
    ['plain sh', false],
    ['bash 5', true],
  ])('watches the folder: a file the bridge drops later (%s path) is delivered on its inotify event', async (_path, bash) => {
    if (bash) await writeFile(bridgeShellFile(dir), `${execFileSync('bash', ['-c', 'printf %s "$BASH"'], { encoding: 'utf8' })}\n`);
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

  it('a sized file seen while it is written is taken on the inotify event of its last write, whole', async () => {
    const reads: number[] = [];
    const calls: HookCall[] = [];
    const s = new HookSpool({
      dir,
      deliver: (c) => calls.push(c),
      skipped: (f, why) => calls.push({ terminalId: `skipped ${f}: ${why}` } as HookCall),
      nowNs: () => 0n,
      ports: { ...realSpoolPorts, read: (f, max, size) => (reads.push(size ?? -1), realSpoolPorts.read(f, max, size)) },
    });
    s.start();
    const fd = await open(path.join(dir, 'jg-7.5.6-13.Stop'), 'wx');
    try {
      await fd.write('{"n":');
      // The create's and the first write's events seen (the file read as short), nothing delivered yet.
      await until(() => reads.length > 0);
      expect(calls).toEqual([]);
      await fd.write('"whole"}');
      await until(() => calls.length > 0);
      expect(calls.map((c) => [c.terminalId, c.payload])).toEqual([['jg-7', { n: 'whole' }]]);
    } finally {
      await fd.close();
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

  it.each([
    ['a bad name', 'not-a-hook', 'x', 'not a name the hook bridge makes (<terminal id>.<ns>.<pid>-<size>.<event>)', 0],
    ['more bytes than its name says', 'jg-7.5.6-2.Stop', '{"a":1}', '7 bytes, more than the 2 its name says: not what the bridge wrote', 1],
  ])('%s: one line, the file removed, never delivered; the event of its removal is not a second', async (_what, name, text, why, reads) => {
    const f = fakeSpool();
    f.s.start();
    await f.event(name, text);
    await f.event(name);
    expect(f.skipped).toEqual([`${name}: ${why}`]);
    expect([f.calls, f.files.size, f.reads]).toEqual([[], 0, reads]);
    f.s.stop();
  });

  it('a sized file still being written is left, then taken once whole on a later event of its name, once; no event after costs a read', async () => {
    const f = fakeSpool();
    f.s.start();
    // The bridge's bash path: created (empty), written in two parts, each an event of the final name.
    await f.event('jg-7.5.6-10.Stop', '');
    await f.event('jg-7.5.6-10.Stop', '{"n":');
    expect([f.calls, f.skipped, f.files.size]).toEqual([[], [], 1]);
    await f.event('jg-7.5.6-10.Stop', '{"n":"é"}');
    expect(f.calls.map((c) => [c.terminalId, c.event, c.payload])).toEqual([['jg-7', 'Stop', { n: 'é' }]]);
    expect([f.files.size, f.reads]).toEqual([0, 3]);
    // Late events of its writes, and its removal's, however many: nothing read, nothing listed, delivered once.
    for (let i = 0; i < 3; i++) await f.event('jg-7.5.6-10.Stop');
    await f.event('jg-7.5.6-10.Stop');
    expect([f.calls.length, f.reads, f.lists, f.skipped]).toEqual([1, 3, 1, []]);
    f.s.stop();
  });

  it('a sized file a bridge left unfinished goes, with one line, once older than a minute by the time in its name', async () => {
    const f = fakeSpool();
    f.s.start();
    await f.event('jg-7.1000.6-20.Stop', '{"cut":');
    f.now = 1000n + 60_000_000_000n;
    await f.event('jg-7.1000.6-20.Stop');
    expect([f.skipped, f.files.size]).toEqual([[], 1]);
    // Found by the sweep (no event of its own comes: its bridge died).
    f.now += 1n;
    f.clock.advance(SWEEP_MS);
    await settled();
    expect(f.skipped).toEqual(['jg-7.1000.6-20.Stop: 7 of the 20 bytes its name says, 60 s after the bridge started: left by a bridge that died']);
    expect([f.calls, f.files.size]).toEqual([[], 0]);
    await f.event('jg-7.1000.6-20.Stop');
    expect([f.skipped.length, f.reads]).toEqual([1, 3]);
    f.s.stop();
  });

  it('order among what is whole: a later call is not held for an earlier one still written; both forms by time', async () => {
    const f = fakeSpool();
    f.s.start();
    await f.tick(['jg-1.20.2-2.Stop', '{}'], ['jg-1.10.1-15.UserPromptSubmit', '{"prompt":'], ['jg-1.15.3.Notification', '"old form"']);
    expect(f.calls.map((c) => [c.ns, c.event])).toEqual([
      [15n, 'Notification'],
      [20n, 'Stop'],
    ]);
    await f.tick(['jg-1.30.4-2.Stop', '{}'], ['jg-1.10.1-15.UserPromptSubmit', '{"prompt":"hi"}']);
    expect(f.calls.map((c) => [c.ns, c.event, c.payload])).toEqual([
      [15n, 'Notification', 'old form'],
      [20n, 'Stop', {}],
      [10n, 'UserPromptSubmit', { prompt: 'hi' }],
      [30n, 'Stop', {}],
    ]);
    expect([f.skipped, f.files.size]).toEqual([[], 0]);
    f.s.stop();
  });
});

/** Poll `ok` until it holds, failing after 5 s. */
async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the spool');
    await new Promise((r) => setTimeout(r, 5));
  }
}

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
    /** The wall time in ns the spool sees. */
    now: 0n,
    fire: (name: string | null) => fire(name),
    drop: (name: string, text: string) => files.set(name, text),
    /** The file's text set (when given) and an event of its name fired, then the spool's work on it done. */
    event: (name: string, text?: string) => t.tick([name, text]),
    /** The files' texts set (when given) and an event of each name fired in this order in one tick, then the spool's work done. */
    tick: async (...events: [string, string?][]) => {
      for (const [name, text] of events) if (text !== undefined) files.set(name, text);
      for (const [name] of events) fire(name);
      await settled();
    },
  };
  const enoent = (file: string) => Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
  const ports: SpoolPorts = {
    list: () => (t.lists++, [...files.keys()]),
    read: (file, _max, size) => {
      t.reads++;
      const text = files.get(path.basename(file));
      if (text === undefined) throw enoent(file);
      const bytes = Buffer.byteLength(text);
      if (size !== null && bytes < size) return { short: bytes };
      if (size !== null && bytes > size) return { over: bytes };
      return { text };
    },
    remove: (file) => void files.delete(path.basename(file)),
    watchFolder: (_dir, on) => ((fire = on), { close: () => (fire = () => {}) }),
  };
  const s = new HookSpool({
    dir: '/spool',
    deliver: (c) => calls.push(c),
    skipped: (f, why) => skipped.push(`${path.basename(f)}: ${why}`),
    nowNs: () => t.now,
    ports,
    clock,
  });
  return Object.assign(t, { s });
}
