import { appendFile, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewJournalEvent } from '../../src/sessions/events.js';
import { Registry } from '../../src/sessions/registry.js';
import { emptyUsage } from '../../src/sessions/usage.js';

const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const NOW = new Date('2025-11-21T21:52:03.123Z');

let dir: string;
const snapshot = (): string => path.join(dir, 'sessions.json');
const journal = (): string => path.join(dir, 'events.jsonl');

const history: NewJournalEvent[] = [
  { type: 'task-created', taskId: 't1', workflow: 'review' },
  { type: 'terminal-created', terminalId: 'jg-00000001', agent: 'claude', profile: 'claude', cwd: '/p', task: 't1' },
  { type: 'session-pinned', terminalId: 'jg-00000001', sessionId: S1, how: 'pre-generated' },
  { type: 'task-agent', taskId: 't1', agent: 'claude', terminalId: 'jg-00000001' },
  { type: 'terminal-window', terminalId: 'jg-00000001', window: '@2' },
  { type: 'session-forked', terminalId: 'jg-00000001', from: S1, to: S2, reason: '/clear' },
  { type: 'turn', taskId: 't1', agent: 'claude', terminalId: 'jg-00000001', sessionId: S2, turn: 1, handoverFile: null, direction: 'reply' },
];

function registry(): Registry {
  return new Registry(dir, { now: () => NOW, lock: { timeoutMs: 2_000 } });
}

/** Record the history one event per call, as separate commands would. */
async function fill(): Promise<Registry> {
  const r = registry();
  for (const e of history) await r.record(e);
  return r;
}

beforeEach(async () => {
  dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'jaggers-reg-')), '.jaggers');
});
afterEach(async () => {
  await rm(path.dirname(dir), { recursive: true, force: true });
});

describe('Registry', () => {
  it('is empty, and writes nothing, before anything is recorded', async () => {
    const r = registry();
    expect(await r.read()).toEqual({
      version: 1,
      journal: { bytes: 0, lines: 0 },
      terminals: {},
      tasks: {},
      jobs: {},
      messages: {},
      seq: 0,
      usage: emptyUsage(),
      budgets: { set: {}, raised: {} },
    });
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it('removes temp snapshots left by a process killed mid-write, not those of a live one', async () => {
    await fill();
    const { execa } = await import('execa');
    const dead = (await execa(process.execPath, ['-e', 'console.log(process.pid)'])).stdout.trim();
    await writeFile(path.join(dir, `sessions.json.tmp-${dead}-abcd1234`), '{"half');
    await writeFile(path.join(dir, `sessions.json.tmp-${process.pid}-abcd1234`), '{"mine');
    await registry().record({ type: 'terminal-state', terminalId: 'jg-00000001', state: 'idle' });
    const left = (await readdir(dir)).filter((n) => n.includes('.tmp-'));
    expect(left).toEqual([`sessions.json.tmp-${process.pid}-abcd1234`]);
  });

  it('appends every event to the journal and keeps the snapshot equal to replaying it', async () => {
    const r = await fill();
    const lines = (await readFile(journal(), 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(history.map((e) => e.type));
    expect(JSON.parse(lines[0]!).ts).toBe(NOW.toISOString());
    const data = await r.read();
    expect(data.terminals['jg-00000001']).toMatchObject({ sessionId: S2, sessionHistory: [S1], window: '@2' });
    expect(data.tasks.t1?.agents.claude).toEqual({ terminalId: 'jg-00000001', sessionId: S2, turns: 1 });
    expect(JSON.parse(await readFile(snapshot(), 'utf8'))).toEqual(data);
    await rm(snapshot());
    expect(await r.read()).toEqual(data);
    expect(r.lastWarnings).toEqual([`${snapshot()} was missing; rebuilt it from 7 events in ${journal()}`]);
    expect(await readdir(dir)).toEqual(['events.jsonl', 'sessions.json']);
  });

  it('records all or nothing: an event that does not fit leaves both files untouched', async () => {
    const r = await fill();
    const before = [await readFile(journal(), 'utf8'), await readFile(snapshot(), 'utf8')];
    await expect(
      r.record({ type: 'task-status', taskId: 't1', status: 'done' }, { type: 'terminal-state', terminalId: 'jg-missing', state: 'idle' }),
    ).rejects.toMatchObject({ code: 'E_REGISTRY', message: expect.stringContaining('unknown terminal "jg-missing"') });
    await expect(r.record({ type: 'task-status', taskId: 't1' } as NewJournalEvent)).rejects.toThrow(
      `event 1 of 1 (task-status) to record in ${journal()}: field \`status\``,
    );
    expect([await readFile(journal(), 'utf8'), await readFile(snapshot(), 'utf8')]).toEqual(before);
  });

  it('update() decides from the current data under the lock', async () => {
    const r = await fill();
    const ensure = (): Promise<string> =>
      r.update((data) => {
        const found = Object.values(data.terminals).find((t) => t.agent === 'gemini');
        if (found) return { events: [], result: found.terminalId };
        return { events: [{ type: 'terminal-created', terminalId: 'jg-00000002', agent: 'gemini', profile: 'gemini', cwd: '/p' }], result: 'jg-00000002' };
      });
    expect(await ensure()).toBe('jg-00000002');
    expect(await ensure()).toBe('jg-00000002');
    expect((await readFile(journal(), 'utf8')).trimEnd().split('\n')).toHaveLength(history.length + 1);
  });

  it('moves a snapshot cut in half aside, rebuilds it from the journal and says so', async () => {
    const r = await fill();
    const good = await r.read();
    const text = await readFile(snapshot(), 'utf8');
    await writeFile(snapshot(), text.slice(0, Math.floor(text.length / 2)));

    const fresh = registry();
    const { data, warnings } = await fresh.readWithWarnings();
    expect(data).toEqual(good);
    const aside = path.join(dir, 'sessions.json.corrupt-2025-11-21T21-52-03.123Z');
    expect(await readFile(aside, 'utf8')).toBe(text.slice(0, Math.floor(text.length / 2)));
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^${snapshot()}: not valid JSON \\(.*\\); moved it to ${aside} and rebuilt it from ${journal()}$`)),
    ]);
    expect(fresh.lastWarnings).toEqual(warnings);
    expect(JSON.parse(await readFile(snapshot(), 'utf8'))).toEqual(good);
    expect(await fresh.read()).toEqual(good);
    expect(fresh.lastWarnings).toEqual([]);
  });

  it('never overwrites an earlier corrupt copy, and names the bad field of an invalid snapshot', async () => {
    const r = await fill();
    const good = await r.read();
    for (const n of [1, 2]) {
      await writeFile(snapshot(), JSON.stringify({ ...good, version: n + 1 }));
      await r.read();
      expect(r.lastWarnings[0]).toContain(`${snapshot()}: field \`version\``);
    }
    expect((await readdir(dir)).sort()).toEqual([
      'events.jsonl',
      'sessions.json',
      'sessions.json.corrupt-2025-11-21T21-52-03.123Z',
      'sessions.json.corrupt-2025-11-21T21-52-03.123Z-1',
    ]);
    expect(await r.read()).toEqual(good);
  });

  it('skips and keeps a journal line cut short by a crash, then appends cleanly after it', async () => {
    const r = await fill();
    await rm(snapshot());
    const torn = '{"ts":"2025-11-21T21:52:03.123Z","type":"task-status","taskId":"t1","sta';
    await appendFile(journal(), torn);

    const data = await r.read();
    expect(data.tasks.t1?.status).toBe('created');
    expect(r.lastWarnings).toEqual([
      expect.stringMatching(new RegExp(`^${journal()} line 8: last line has no newline .* its bytes were kept in ${journal()}.torn-2025-11-21T21-52-03.123Z$`)),
      `${snapshot()} was missing; rebuilt it from 7 events in ${journal()}`,
    ]);
    expect(await readFile(`${journal()}.torn-2025-11-21T21-52-03.123Z`, 'utf8')).toBe(torn);

    await r.record({ type: 'task-status', taskId: 't1', status: 'done' });
    const lines = (await readFile(journal(), 'utf8')).split('\n');
    expect(lines).toHaveLength(history.length + 2);
    expect(
      lines
        .slice(0, -1)
        .map((l) => JSON.parse(l).type)
        .at(-1),
    ).toBe('task-status');
    await rm(snapshot());
    expect((await registry().read()).tasks.t1?.status).toBe('done');
  });

  it('refuses a journal damaged in the middle, naming the file and line', async () => {
    await fill();
    const lines = (await readFile(journal(), 'utf8')).split('\n');
    lines[2] = '{"ts": oops';
    await writeFile(journal(), lines.join('\n'));
    await rm(snapshot());
    await expect(registry().read()).rejects.toMatchObject({
      code: 'E_REGISTRY',
      message: expect.stringContaining(`${journal()} line 3: not valid JSON`),
    });
  });

  it('catches a snapshot up with events appended just before a crash', async () => {
    const r = await fill();
    const old = await readFile(snapshot(), 'utf8');
    await r.record({ type: 'task-status', taskId: 't1', status: 'done' }, { type: 'terminal-state', terminalId: 'jg-00000001', state: 'idle' });
    await writeFile(snapshot(), old); // as if the process died between the journal append and the snapshot rename
    const data = await registry().read();
    expect(data.tasks.t1?.status).toBe('done');
    expect(data.terminals['jg-00000001']?.lastState).toBe('idle');
    expect(data.journal.lines).toBe(history.length + 2);
    const again = registry();
    await again.read();
    expect(again.lastWarnings).toEqual([]);
  });

  it('rebuilds from the whole journal when it no longer continues where the snapshot left off', async () => {
    const r = await fill();
    const good = await r.read();
    const text = await readFile(journal(), 'utf8');
    await writeFile(journal(), `${JSON.stringify({ ts: NOW.toISOString(), type: 'task-created', taskId: 't0', workflow: 'w' })}\n${text}`);
    const data = await r.read();
    expect(r.lastWarnings).toEqual([expect.stringContaining(`${journal()} does not continue where ${snapshot()} left off`)]);
    expect(data.tasks.t0).toBeDefined();
    expect(data.terminals).toEqual(good.terminals);
    expect(data.journal.lines).toBe(history.length + 1);
  });

  it('keeps the snapshot when the journal is shorter than the snapshot says', async () => {
    const r = await fill();
    const good = await r.read();
    await truncate(journal(), 0);
    const data = await r.read();
    expect(data.terminals).toEqual(good.terminals);
    expect(r.lastWarnings[0]).toMatch(/events\.jsonl is 0 bytes but .*sessions\.json was built from \d+ bytes of it; keeping the snapshot/);
    await r.record({ type: 'task-status', taskId: 't1', status: 'done' });
    expect((await r.read()).tasks.t1?.status).toBe('done');
  });
});
