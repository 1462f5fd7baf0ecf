// The supervisor's handle on the registry (src/sessions/owner.ts), on a temp folder: each change is one
// append to the journal and is in the data at once; the snapshot is written only after a quiet delay
// (vitest's fake timers) or after many events; a change that cannot be written changes nothing; the
// lock is held for the handle's life and given back by close().
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JaggersError } from '../../src/errors.js';
import type { NewJournalEvent } from '../../src/sessions/events.js';
import { DurableAppender } from '../../src/fs/durable.js';
import { RegistryOwner, type OwnerOptions } from '../../src/sessions/owner.js';
import { peekRegistry } from '../../src/sessions/load.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jaggers-owner-');
const owners: RegistryOwner[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const o of owners.splice(0)) await o.close().catch(() => {});
});

async function open(dir: string, o: OwnerOptions = {}): Promise<RegistryOwner> {
  const owner = await RegistryOwner.open(dir, o);
  owners.push(owner);
  return owner;
}

const terminal = (n: number, terminalId = `jg-${n}`): NewJournalEvent => ({ type: 'terminal-created', terminalId, agent: `a${n}`, profile: 'fake', cwd: '/p' });
const lines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length;
const snapshotOf = async (o: RegistryOwner) => JSON.parse(await readFile(o.paths.snapshot, 'utf8')) as { journal: { bytes: number }; terminals: object };
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: JaggersError) => `${e.code}: ${e.message}`,
  );

describe('the registry owner', () => {
  it('appends each change to the journal and has it in the data at once, without writing the snapshot each time', async () => {
    const dir = await temp();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const o = await open(dir, { snapshotDelayMs: 1000 });
    await o.record(terminal(1));
    expect(o.data.terminals['jg-1']?.agent).toBe('a1');
    expect(await lines(o.paths.journal)).toBe(1);
    const result = await o.update((d) => ({ events: [terminal(2), terminal(3)], result: Object.keys(d.terminals).length }));
    expect(result).toBe(1);
    expect(Object.keys((await o.read()).terminals)).toEqual(['jg-1', 'jg-2', 'jg-3']);
    expect(await lines(o.paths.journal)).toBe(3);
    expect(o.data.journal).toEqual({ bytes: (await stat(o.paths.journal)).size, lines: 3 });
    // No snapshot yet: changes cost an append, not a rewrite.
    expect(existsSync(o.paths.snapshot)).toBe(false);
    await vi.advanceTimersByTimeAsync(999);
    expect(existsSync(o.paths.snapshot)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(Object.keys((await snapshotOf(o)).terminals)).toEqual(['jg-1', 'jg-2', 'jg-3']);
    const first = (await stat(o.paths.snapshot)).mtimeMs;
    const text = await readFile(o.paths.snapshot, 'utf8');
    // A change after it: the snapshot stays as it was until the next quiet second.
    await o.record(terminal(4));
    expect(await readFile(o.paths.snapshot, 'utf8')).toBe(text);
    expect((await stat(o.paths.snapshot)).mtimeMs).toBe(first);
    await vi.advanceTimersByTimeAsync(1000);
    expect(Object.keys((await snapshotOf(o)).terminals)).toHaveLength(4);
  });

  it('writes the snapshot once changes stop for the delay, not every delay while they go on', async () => {
    const dir = await temp();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const o = await open(dir, { snapshotDelayMs: 1000 });
    for (let i = 1; i <= 6; i++) {
      await o.record(terminal(i));
      await vi.advanceTimersByTimeAsync(600);
    }
    expect(existsSync(o.paths.snapshot)).toBe(false);
    await vi.advanceTimersByTimeAsync(400);
    expect(Object.keys((await snapshotOf(o)).terminals)).toHaveLength(6);
  });

  it('writes the snapshot at once after `snapshotEvery` events, whatever the delay', async () => {
    const dir = await temp();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const o = await open(dir, { snapshotDelayMs: 60_000, snapshotEvery: 3 });
    await o.record(terminal(1));
    await o.record(terminal(2));
    expect(existsSync(o.paths.snapshot)).toBe(false);
    await o.record(terminal(3));
    await vi.waitFor(() => expect(existsSync(o.paths.snapshot)).toBe(true));
    expect((await snapshotOf(o)).journal.bytes).toBe((await stat(o.paths.journal)).size);
  });

  it('a change that fails (a throwing plan, an event that does not fit, a journal that cannot be written) changes nothing', async () => {
    const dir = await temp();
    const o = await open(dir);
    await o.record(terminal(1));
    const before = o.data;
    const size = (await stat(o.paths.journal)).size;
    expect(
      await refusal(
        o.update(() => {
          throw new Error('plan broke');
        }),
      ),
    ).toBe('undefined: plan broke');
    expect(await refusal(o.record(terminal(2), terminal(1)))).toMatch(/^E_REGISTRY: event terminal-created at .*: terminal "jg-1" already exists$/);
    expect(await refusal(o.record({ type: 'job-state', jobId: 'j-1', state: 'done', reason: '' }))).toMatch(/^E_REGISTRY: .*unknown job "j-1"/);
    expect(await refusal(o.record(terminal(5, '')))).toMatch(/^E_REGISTRY: event 1 of 1 \(terminal-created\) to record in .*events\.jsonl/);
    expect(o.data).toBe(before);
    expect((await stat(o.paths.journal)).size).toBe(size);
    // A journal that cannot be appended to (here: a folder where the file was).
    await rm(o.paths.journal);
    await mkdir(o.paths.journal);
    expect(await refusal(o.record(terminal(2)))).toMatch(/^E_FILE: opening .*events\.jsonl failed/);
    expect(o.data).toBe(before);
    // The next change goes through once it can be written.
    await rm(o.paths.journal, { recursive: true });
    await o.record(terminal(2));
    expect(Object.keys(o.data.terminals)).toEqual(['jg-1', 'jg-2']);
  });

  it('runs updates one at a time, each seeing the one before', async () => {
    const dir = await temp();
    const o = await open(dir);
    const seen = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        o.update(async (d) => {
          await new Promise((r) => setImmediate(r));
          return { events: [terminal(n)], result: Object.keys(d.terminals).length };
        }),
      ),
    );
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('group commit: updates that wait while the journal is written go in one append; each is on disk before it is answered, none in the data before', async () => {
    const dir = await temp();
    const o = await open(dir);
    const appends: string[][] = [];
    const arriving: Promise<unknown>[] = [];
    let arriveDuringNextAppend = 0;
    const realAppend = DurableAppender.prototype.append;
    vi.spyOn(DurableAppender.prototype, 'append').mockImplementation(async function (this: DurableAppender, text: string) {
      const ids = text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { terminalId: string }).terminalId);
      // Not in the data while being written: nobody acts on an event before it is durable.
      for (const id of ids) expect(o.data.terminals[id]).toBeUndefined();
      for (; arriveDuringNextAppend > 0; arriveDuringNextAppend--) arriving.push(o.record(terminal(100 + arriving.length)));
      const size = await realAppend.call(this, text);
      appends.push(ids);
      return size;
    });
    const onDisk = () => readFileSync(o.paths.journal, 'utf8');
    const answered: string[] = [];
    const seen = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        o
          .update((d) => ({ events: [terminal(i + 1)], result: Object.keys(d.terminals).length }))
          .then((n) => {
            // Answered only once its line is in the journal (written and fsynced by the append).
            expect(onDisk()).toContain(`"terminalId":"jg-${i + 1}"`);
            expect(o.data.terminals[`jg-${i + 1}`]?.agent).toBe(`a${i + 1}`);
            answered.push(`jg-${i + 1}`);
            return n;
          }),
      ),
    );
    // Each saw the ones before it, in order, as if they had gone one at a time.
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(answered).toEqual(Array.from({ length: 20 }, (_, i) => `jg-${i + 1}`));
    // Asked for at once, they went together.
    expect(appends.map((a) => a.length)).toEqual([20]);
    // Five that come while one is being written go together after it.
    arriveDuringNextAppend = 5;
    await o.record(terminal(21));
    await Promise.all(arriving);
    expect(appends.map((a) => a.length)).toEqual([20, 1, 5]);
    expect(await lines(o.paths.journal)).toBe(26);
    expect(o.data.journal).toEqual({ bytes: (await stat(o.paths.journal)).size, lines: 26 });
  });

  it('group commit: a change of the group that fails is refused alone; an async update waits for the group before it and sees it', async () => {
    const dir = await temp();
    const o = await open(dir);
    const appendSpy = vi.spyOn(DurableAppender.prototype, 'append');
    await o.record(terminal(1));
    const outcomes = await Promise.all([
      refusal(o.record(terminal(2))),
      refusal(o.record(terminal(3), terminal(1))),
      refusal(
        o.update(() => {
          throw new Error('plan broke');
        }),
      ),
      refusal(o.record(terminal(4))),
      o.update(async (d) => {
        await new Promise((r) => setImmediate(r));
        return { events: [terminal(5)], result: Object.keys(d.terminals).sort().join(' ') };
      }),
      o.update((d) => ({ events: [terminal(6)], result: Object.keys(d.terminals).length })),
    ]);
    expect(outcomes).toEqual([
      'no error',
      expect.stringMatching(/^E_REGISTRY: event terminal-created at .*: terminal "jg-1" already exists$/),
      'undefined: plan broke',
      'no error',
      // On disk before it ran: the group before it (jg-2 and jg-4), nothing of the refused ones.
      'jg-1 jg-2 jg-4',
      4,
    ]);
    expect(Object.keys(o.data.terminals)).toEqual(['jg-1', 'jg-2', 'jg-4', 'jg-5', 'jg-6']);
    expect(await lines(o.paths.journal)).toBe(5);
    // jg-1; jg-2 with jg-4; jg-5 with jg-6 (a plain update may join the async one's group).
    expect(appendSpy).toHaveBeenCalledTimes(3);
  });

  it('a journal that cannot be written refuses the whole group and changes nothing', async () => {
    const dir = await temp();
    const o = await open(dir);
    await o.record(terminal(1));
    const before = o.data;
    const fail = vi.spyOn(DurableAppender.prototype, 'append').mockRejectedValue(new Error('disk full'));
    const first = o.record(terminal(2));
    const group = [o.record(terminal(3)), o.record(terminal(4))];
    expect(await Promise.all([first, ...group].map(refusal))).toEqual(['undefined: disk full', 'undefined: disk full', 'undefined: disk full']);
    expect(o.data).toBe(before);
    expect(Object.keys(o.data.terminals)).toEqual(['jg-1']);
    fail.mockRestore();
    await o.record(terminal(3));
    expect(Object.keys(o.data.terminals)).toEqual(['jg-1', 'jg-3']);
  });

  it('close() writes the snapshot and gives the lock back; a second open then sees everything; later updates are refused', async () => {
    const dir = await temp();
    const o = await open(dir, { snapshotDelayMs: 60_000 });
    const lock = `${o.paths.snapshot}.lock`;
    expect(existsSync(lock)).toBe(true);
    await o.record(terminal(1), terminal(2));
    expect(existsSync(o.paths.snapshot)).toBe(false);
    await o.close();
    expect(existsSync(lock)).toBe(false);
    expect(Object.keys((await snapshotOf(o)).terminals)).toEqual(['jg-1', 'jg-2']);
    expect(await refusal(o.record(terminal(3)))).toBe('E_SUPERVISOR_DOWN: the registry is closed: the supervisor is stopping');
    const again = await open(dir);
    expect(Object.keys(again.data.terminals)).toEqual(['jg-1', 'jg-2']);
    expect(again.warnings).toEqual([]);
  });

  it('keeps tasks and agents named like properties of every object (`constructor`, `toString`), across a reopen', async () => {
    const dir = await temp();
    const o = await open(dir);
    for (const name of ['constructor', 'toString']) {
      await o.record(
        { type: 'task-created', taskId: name, workflow: 'handoff' },
        { type: 'terminal-created', terminalId: `jg-${name}`, agent: name, profile: 'fake', cwd: '/p', task: name },
        { type: 'task-agent', taskId: name, agent: name, terminalId: `jg-${name}` },
        { type: 'turn', taskId: name, agent: name, terminalId: `jg-${name}`, sessionId: null, turn: 2, handoverFile: 'r.md', direction: 'reply' },
      );
    }
    expect(
      await refusal(
        o.record({ type: 'task-created', taskId: 'hasOwnProperty', workflow: 'w' }, { type: 'task-created', taskId: 'hasOwnProperty', workflow: 'w' }),
      ),
    ).toMatch(/task "hasOwnProperty" already exists/);
    await o.close();
    const again = await open(dir);
    expect(again.warnings).toEqual([]);
    expect(Object.keys(again.data.tasks)).toEqual(['constructor', 'toString']);
    expect(again.data.tasks.constructor).toMatchObject({ id: 'constructor', agents: { constructor: { terminalId: 'jg-constructor', turns: 1 } } });
    expect(again.data.tasks.toString).toMatchObject({ id: 'toString', agents: { toString: { turns: 1 } } });
  });

  it('a second open while one holds the lock times out with E_REGISTRY', async () => {
    const dir = await temp();
    await open(dir);
    expect(await refusal(RegistryOwner.open(dir, { lockTimeoutMs: 150 }))).toMatch(
      new RegExp(`^E_REGISTRY: timed out after 150 ms waiting for lock .*sessions\\.json\\.lock, held by pid ${process.pid}`),
    );
  });

  it('a snapshot left behind the journal (a supervisor killed before it wrote one) is caught up on the next open', async () => {
    const dir = await temp();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const o = await open(dir, { snapshotDelayMs: 1000 });
    await o.record(terminal(1));
    await vi.advanceTimersByTimeAsync(1000);
    await o.record(terminal(2), terminal(3));
    // What a kill leaves on disk now: the snapshot with one terminal, the journal with three.
    const copy = await temp();
    await cp(o.paths.snapshot, path.join(copy, 'sessions.json'));
    await cp(o.paths.journal, path.join(copy, 'events.jsonl'));
    expect(Object.keys((await snapshotOf(o)).terminals)).toEqual(['jg-1']);
    vi.useRealTimers();
    const next = await open(copy);
    expect(Object.keys(next.data.terminals)).toEqual(['jg-1', 'jg-2', 'jg-3']);
    expect(next.warnings).toEqual([]);
    // Caught up, the snapshot was written back at once.
    expect(Object.keys(peekRegistry(next.paths).terminals)).toEqual(['jg-1', 'jg-2', 'jg-3']);
    expect(Object.keys(JSON.parse(await readFile(path.join(copy, 'sessions.json'), 'utf8')).terminals as object)).toHaveLength(3);
  });

  it('a line damaged in the middle of the journal, before the point the snapshot holds, is told on open naming the file, the line and what was kept', async () => {
    const dir = await temp();
    const o = await open(dir);
    await o.record(terminal(1), terminal(2), terminal(3), terminal(4), terminal(5));
    await o.close();
    owners.splice(owners.indexOf(o), 1);
    const text = await readFile(o.paths.journal, 'utf8');
    const rows = text.split('\n');
    // Damaged in place, as a disk does it (the file keeps its length, every line its place): line 2's
    // end overwritten, line 4 zeroed.
    rows[1] = rows[1]!.slice(0, 30) + '#'.repeat(rows[1]!.length - 30);
    rows[3] = '\0'.repeat(rows[3]!.length);
    await writeFile(o.paths.journal, rows.join('\n'));
    const warned: string[] = [];
    const next = await open(dir, { onWarning: (w) => warned.push(w) });
    expect(Object.keys(next.data.terminals)).toEqual(['jg-1', 'jg-2', 'jg-3', 'jg-4', 'jg-5']);
    expect(next.warnings).toEqual(warned);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(
      new RegExp(
        `^${o.paths.journal} line 2: not valid JSON .* \\(and 1 more damaged line: 4\\); the journal is damaged before the point ${o.paths.snapshot} was built from \\(its first 5 lines\\): kept ${o.paths.snapshot}, which holds every event up to there, and the journal as it is; a rebuild from the journal alone would stop at line 2`,
      ),
    );
    // Nothing was changed on disk; new events go on after it.
    expect(await readFile(o.paths.journal, 'utf8')).toBe(rows.join('\n'));
    await next.record(terminal(6));
    expect(next.data.terminals['jg-6']).toBeTruthy();
  });

  it('an undamaged journal is checked without a word', async () => {
    const dir = await temp();
    const o = await open(dir);
    await o.record(terminal(1), terminal(2));
    await o.close();
    owners.splice(owners.indexOf(o), 1);
    expect((await open(dir)).warnings).toEqual([]);
  });
});
