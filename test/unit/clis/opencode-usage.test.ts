// opencode's usage, read from its SQLite database (src/clis/opencode/usage.ts, src/clis/shared/sqlite-read.ts)
// on the real file and write-ahead log of two headless turns (test/fixtures/usage/README.md): what
// opencode itself sums for the session (its `opencode export`), the log followed as it grows commit by
// commit, and files that are torn, foreign or missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { USAGE_READERS } from '../../../src/clis/kinds.js';
import { forgetWals, record, varint } from '../../../src/clis/shared/sqlite-read.js';
import { forgetOpencodeMessages, opencodeDbFile, opencodeSessionUsage, opencodeStepTokens, opencodeUsageSlice } from '../../../src/clis/opencode/usage.js';

const FIX = path.join(import.meta.dirname, '..', '..', 'fixtures', 'usage');
const BASE = path.join(FIX, 'opencode-1.18.33-two-turns');
const SESSION = readFileSync(`${BASE}.session`, 'utf8').trim();
const WAL = readFileSync(`${BASE}.db-wal`);
const FRAME = 24 + 4096;
/** python3 with its sqlite3 module, to grow a database as SQLite writes it. */
const python3 = spawnSync('python3', ['-c', 'import sqlite3'], { stdio: 'ignore' }).status === 0;

/** Requests 1 and 2 of the stub's table as opencode records them over an OpenAI-style API (no cache writes). */
const FIRST = { input: 1234, output: 56, cacheRead: 0, cacheWrite: 0 };
const TWO = { input: 1234 + 78, output: 56 + 910, cacheRead: 3072, cacheWrite: 0 };

let root: string;
let home: string;
let db: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'jaggers-opencode-usage-'));
  home = path.join(root, 'home');
  db = path.join(home, '.local', 'share', 'opencode', 'opencode.db');
  mkdirSync(path.dirname(db), { recursive: true });
  forgetWals();
  forgetOpencodeMessages();
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The frame counts after which the log's commits end (1-based: frames 0..n-1 committed). */
function commitCuts(): number[] {
  const cuts: number[] = [];
  for (let i = 0; 32 + (i + 1) * FRAME <= WAL.length; i++) if (WAL.readUInt32BE(32 + i * FRAME + 4) > 0) cuts.push(i + 1);
  return cuts;
}

describe('opencode usage (1.18.33, SQLite)', () => {
  it("sums the session's steps per model, as opencode itself does (its export)", async () => {
    copyFileSync(`${BASE}.db`, db);
    copyFileSync(`${BASE}.db-wal`, `${db}-wal`);
    const u = await USAGE_READERS.opencode({ home, cwd: '/w', sessionId: SESSION, env: {} });
    expect(u?.byModel).toEqual({ 'stub-model-opencode': TWO });
    expect(u?.records).toBe(2);
    expect(u?.last).toEqual({ model: 'stub-model-opencode', tokens: { input: 78, output: 910, cacheRead: 3072, cacheWrite: 0 } });
    const exported = JSON.parse(readFileSync(`${BASE}.export.json`, 'utf8')) as {
      info: { tokens: { input: number; output: number; reasoning: number; cache: { read: number; write: number } } };
    };
    const t = exported.info.tokens;
    expect({ input: t.input, output: t.output + t.reasoning, cacheRead: t.cache.read, cacheWrite: t.cache.write }).toEqual(TWO);
    expect(await USAGE_READERS.opencode({ home, cwd: '/w', sessionId: 'ses_none', env: {} })).toBeNull();
  });

  it('follows the log as it grows, commit by commit: the sums only grow, and agree with a fresh read each time', () => {
    copyFileSync(`${BASE}.db`, db);
    const cuts = commitCuts();
    expect(cuts.length).toBeGreaterThan(5);
    const fresh = path.join(root, 'fresh.db');
    copyFileSync(`${BASE}.db`, fresh);
    let had = 0;
    const seen: unknown[] = [];
    for (const cut of cuts) {
      appendFileSync(`${db}-wal`, WAL.subarray(had === 0 ? 0 : 32 + had * FRAME, 32 + cut * FRAME));
      had = cut;
      const now = opencodeSessionUsage(db, SESSION);
      writeFileSync(`${fresh}-wal`, WAL.subarray(0, 32 + cut * FRAME));
      forgetWals();
      forgetOpencodeMessages();
      expect(opencodeSessionUsage(fresh, SESSION)).toEqual(now ? { ...now, files: [fresh] } : null);
      seen.push(now?.byModel['stub-model-opencode'] ?? null);
    }
    expect(seen).toContainEqual(FIRST);
    expect(seen.at(-1)).toEqual(TWO);
    const sums = seen.filter((x): x is typeof TWO => x !== null);
    for (let i = 1; i < sums.length; i++)
      for (const k of ['input', 'output', 'cacheRead'] as const) expect(sums[i]![k]).toBeGreaterThanOrEqual(sums[i - 1]![k]);
  });

  it('uses only the whole, committed frames of a torn log, and ignores one whose header is broken', () => {
    copyFileSync(`${BASE}.db`, db);
    // Torn in the middle of its last frame: the commit before it holds.
    writeFileSync(`${db}-wal`, WAL.subarray(0, WAL.length - 100));
    const torn = opencodeSessionUsage(db, SESSION);
    expect(torn?.byModel['stub-model-opencode']).toEqual(TWO);
    // A frame whose checksum fails ends the log there.
    const bad = Buffer.from(WAL);
    const cuts = commitCuts();
    const i = cuts[cuts.length - 4]!;
    bad[32 + i * FRAME + 24 + 100]! ^= 0xff;
    forgetWals();
    writeFileSync(`${db}-wal`, bad);
    const cut = opencodeSessionUsage(db, SESSION);
    forgetWals();
    writeFileSync(`${db}-wal`, WAL.subarray(0, 32 + i * FRAME));
    expect(cut).toEqual(opencodeSessionUsage(db, SESSION));
    // A header that fails its checksum: the log is not used (what SQLite itself does).
    const header = Buffer.from(WAL);
    header[16]! ^= 1;
    forgetWals();
    writeFileSync(`${db}-wal`, header);
    expect(() => opencodeSessionUsage(db, SESSION)).not.toThrow();
  });

  it("takes the header from the log's page 1, the current one: the main file's may be stale", () => {
    const main = readFileSync(`${BASE}.db`);
    main.writeUInt32BE(2, 56);
    writeFileSync(db, main);
    copyFileSync(`${BASE}.db-wal`, `${db}-wal`);
    expect(opencodeSessionUsage(db, SESSION)?.byModel).toEqual({ 'stub-model-opencode': TWO });
  });

  it('reads a long session in slices of messages, letting the event loop run between them, to the same sums', async () => {
    copyFileSync(`${BASE}.db`, db);
    copyFileSync(`${BASE}.db-wal`, `${db}-wal`);
    expect(opencodeUsageSlice(db, SESSION, 1)).toBe('more');
    expect(opencodeUsageSlice(db, SESSION, 1)).toBe('more');
    forgetOpencodeMessages();
    const u = await USAGE_READERS.opencode({ home, cwd: '/w', sessionId: SESSION, env: {} });
    expect(u?.byModel).toEqual({ 'stub-model-opencode': TWO });
    forgetOpencodeMessages();
    let slices = 0;
    let v: ReturnType<typeof opencodeUsageSlice>;
    while ((v = opencodeUsageSlice(db, SESSION, 1)) === 'more') slices++;
    expect(slices).toBeGreaterThan(1);
    expect(v?.byModel).toEqual({ 'stub-model-opencode': TWO });
  });

  // A session of hundreds of turns (its index over several pages, an interior one above them), grown by
  // SQLite itself (python3's sqlite3) while the reader keeps what it read: each read starts after the
  // leading run of final messages and sums the same as a fresh read; a message still being answered is
  // read again until it is final.
  it.skipIf(!python3)(`a long session read again after each turn sums as a fresh read does${python3 ? '' : ' (skipped: no python3 with sqlite3 here)'}`, () => {
    copyFileSync(`${BASE}.db`, db);
    copyFileSync(`${BASE}.db-wal`, `${db}-wal`);
    const grow = (turns: number, open = false) => {
      const script = `
import sqlite3, sys, json
db, session, turns, open_ = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == '1'
c = sqlite3.connect(db)
t = c.execute('select max(time_created) from message').fetchone()[0]
n = c.execute('select count(*) from message').fetchone()[0]
for k in range(turns):
    t += 10; n += 1
    u = 'msg_u%06d' % n
    c.execute('insert into message values (?,?,?,?,?)', (u, session, t, t, json.dumps({'role': 'user', 'time': {'created': t}})))
    t += 10; n += 1
    a = 'msg_a%06d' % n
    last = open_ and k == turns - 1
    data = {'role': 'assistant', 'modelID': 'stub-model-opencode', 'time': {'created': t} if last else {'created': t, 'completed': t + 5}}
    c.execute('insert into message values (?,?,?,?,?)', (a, session, t, t, json.dumps(data)))
    if not last:
        step = {'type': 'step-finish', 'tokens': {'input': 10, 'output': 2, 'reasoning': 1, 'cache': {'read': 100, 'write': 0}}}
        c.execute('insert into part values (?,?,?,?,?,?)', ('prt_%06d' % n, a, session, t, t, json.dumps(step)))
c.commit()
`;
      execFileSync('python3', ['-c', script, db, SESSION, String(turns), open ? '1' : '0']);
    };
    const fresh = () => {
      const copy = path.join(root, `fresh-${Math.random().toString(16).slice(2)}.db`);
      copyFileSync(db, copy);
      if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${copy}-wal`);
      const u = opencodeSessionUsage(copy, SESSION);
      return u ? { ...u, files: [db] } : null;
    };
    const per = (turns: number) => ({ input: TWO.input + 10 * turns, output: TWO.output + 3 * turns, cacheRead: TWO.cacheRead + 100 * turns, cacheWrite: 0 });
    grow(300);
    const first = opencodeSessionUsage(db, SESSION);
    expect(first?.byModel).toEqual({ 'stub-model-opencode': per(300) });
    expect(first?.records).toBe(302);
    // Two more turns, the last one still being answered (no step yet, not completed).
    grow(2, true);
    const mid = opencodeSessionUsage(db, SESSION);
    expect(mid?.byModel).toEqual({ 'stub-model-opencode': per(301) });
    expect(mid).toEqual(fresh());
    // It completes with its step: read again, not kept from before.
    execFileSync('python3', [
      '-c',
      `import sqlite3, sys, json
c = sqlite3.connect(sys.argv[1])
(a, t) = c.execute("select id, time_created from message order by time_created desc limit 1").fetchone()
c.execute('update message set data = ? where id = ?', (json.dumps({'role': 'assistant', 'modelID': 'stub-model-opencode', 'time': {'created': t, 'completed': t + 5}}), a))
c.execute('insert into part values (?,?,?,?,?,?)', ('prt_last', a, sys.argv[2], t, t, json.dumps({'type': 'step-finish', 'tokens': {'input': 10, 'output': 2, 'reasoning': 1, 'cache': {'read': 100, 'write': 0}}})))
c.commit()`,
      db,
      SESSION,
    ]);
    const done = opencodeSessionUsage(db, SESSION);
    expect(done?.byModel).toEqual({ 'stub-model-opencode': per(302) });
    expect(done?.last).toEqual({ model: 'stub-model-opencode', tokens: { input: 10, output: 3, cacheRead: 100, cacheWrite: 0 } });
    expect(done).toEqual(fresh());
    grow(40);
    expect(opencodeSessionUsage(db, SESSION)).toEqual(fresh());
  });

  it('gives no usage for a database that is missing, not SQLite, or of another shape, and never throws', async () => {
    const q = { home, cwd: '/w', sessionId: SESSION, env: {} };
    expect(await USAGE_READERS.opencode(q)).toBeNull();
    writeFileSync(db, 'not a database at all, but long enough to have a header of a hundred bytes '.repeat(3));
    expect(await USAGE_READERS.opencode(q)).toBeNull();
    // A real SQLite file cut to its first pages: what it references is not there.
    writeFileSync(db, readFileSync(`${BASE}.db`).subarray(0, 4096 * 3));
    expect(await USAGE_READERS.opencode(q)).toBeNull();
  });

  it('finds the database where opencode does', () => {
    expect(opencodeDbFile('/h', {})).toBe('/h/.local/share/opencode/opencode.db');
    expect(opencodeDbFile('/h', { XDG_DATA_HOME: '/x' })).toBe('/x/opencode/opencode.db');
    expect(opencodeDbFile('/h', { OPENCODE_DB: '/d/o.db' })).toBe('/d/o.db');
    expect(opencodeDbFile('/h', { OPENCODE_DB: 'other.db' })).toBe('/h/.local/share/opencode/other.db');
    expect(opencodeDbFile('/h', { OPENCODE_DB: ':memory:' })).toBeNull();
  });

  it("counts a step's reasoning as output, and only step-finish parts", () => {
    const tokens = { total: 100, input: 10, output: 20, reasoning: 30, cache: { read: 40, write: 5 } };
    expect(opencodeStepTokens({ type: 'step-finish', tokens, cost: 0 })).toEqual({ input: 10, output: 50, cacheRead: 40, cacheWrite: 5 });
    expect(opencodeStepTokens({ type: 'text', tokens })).toBeNull();
    expect(opencodeStepTokens({ type: 'step-finish', tokens: { input: -1, output: 'x' } })).toEqual({ input: -1, output: 0, cacheRead: 0, cacheWrite: 0 });
  });
});

describe('the SQLite record format', () => {
  it('reads varints of one to nine bytes', () => {
    expect(varint(Buffer.from([0x05]), 0)).toEqual([5, 1]);
    expect(varint(Buffer.from([0x81, 0x00]), 0)).toEqual([128, 2]);
    expect(varint(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 0)[1]).toBe(9);
    expect(() => varint(Buffer.from([0x81]), 0)).toThrow();
  });

  it('reads a record of each serial type, and refuses one that runs past its payload', () => {
    // header: size 8; types NULL, int8, 0, 1, float, text(3), blob(2)
    const body = Buffer.concat([
      Buffer.from([8, 0, 1, 8, 9, 7, 13 + 6, 12 + 4]),
      Buffer.from([0xfe]),
      Buffer.alloc(8),
      Buffer.from('abc'),
      Buffer.from([1, 2]),
    ]);
    body.writeDoubleBE(1.5, 9);
    expect(record(body)).toEqual([null, -2, 0, 1, 1.5, 'abc', Buffer.from([1, 2])]);
    expect(() => record(body.subarray(0, body.length - 1))).toThrow();
  });
});
