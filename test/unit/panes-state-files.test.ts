// State-file watching on a fake file system: readings applied in the order they were started, one
// folder watch shared by the panes that write there, changes routed to their pane, session ids.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateFileReading } from '../../src/clis/state-file.js';
import { realStateFilePorts, StateFiles, type StateFileOwner, type StateFilePorts } from '../../src/panes/state-files.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

const reading = (status: string | null, sessionId: string | null = null): StateFileReading => ({
  classification: status ? { status: status as 'busy', rule: 'state-file', lines: [] } : null,
  sessionId,
});

/** A file system whose answers the test gives: `next` readings per pid, folders that exist or not. */
function fakeFs() {
  const next = new Map<number, StateFileReading[]>();
  const held: ((r: StateFileReading) => void)[] = [];
  const watching = new Map<string, (name: string | null) => void>();
  const log: string[] = [];
  const state = { missing: new Set<string>(), holdReads: false, homeWait: null as Promise<void> | null };
  const ports: StateFilePorts = {
    homeOf: async (pid) => {
      log.push(`home ${pid}`);
      if (state.homeWait) await state.homeWait;
      return '/h';
    },
    read: (kind, home, pid) => {
      log.push(`read ${kind} ${home} ${pid}`);
      if (state.holdReads) return new Promise((resolve) => held.push(resolve));
      return Promise.resolve(next.get(pid)?.shift() ?? reading(null));
    },
    watchFolder: (dir, onChange) => {
      if (state.missing.has(dir)) throw new Error(`ENOENT ${dir}`);
      log.push(`watch ${dir}`);
      watching.set(dir, onChange);
      return {
        close: () => {
          log.push(`close ${dir}`);
          watching.delete(dir);
        },
      };
    },
  };
  return { ports, next, held, watching, log, state };
}

function owner(pid: number | null) {
  const seen = { changed: 0, sessions: [] as string[] };
  const o = { pid };
  const own: StateFileOwner = {
    kind: 'fake-agent',
    pid: () => o.pid,
    changed: () => void seen.changed++,
    session: (id) => void seen.sessions.push(id),
  };
  return { own, seen, o };
}

const DIR = '/h/.fake-agent/state';

describe('state files', () => {
  it('reads the pane’s file under the HOME of its process, and watches its folder from the first reading', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    fs.next.set(7, [reading('busy')]);
    const p = files.add(owner(7).own);
    expect((await files.readInOrder(p))?.status).toBe('busy');
    expect(fs.log).toEqual(['home 7', `watch ${DIR}`, 'read fake-agent /h 7']);
    expect(p.file).toBe(`${DIR}/7.json`);
    // The HOME is asked once; the folder is watched once.
    await files.readInOrder(p);
    expect(fs.log.slice(3)).toEqual(['read fake-agent /h 7']);
  });

  it('a reading started before another that finished first gives that newer one', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    const p = files.add(owner(7).own);
    await files.readInOrder(p);
    fs.state.holdReads = true;
    const older = files.readInOrder(p);
    const newer = files.readInOrder(p);
    await flush();
    expect(fs.held).toHaveLength(2);
    fs.held[1]!(reading('idle'));
    expect((await newer)?.status).toBe('idle');
    fs.held[0]!(reading('busy'));
    expect((await older)?.status).toBe('idle');
    expect(p.last?.status).toBe('idle');
  });

  it('one watch per folder, shared by the panes that write there, closed when the last one leaves', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    const a = files.add(owner(7).own);
    const b = files.add(owner(8).own);
    await files.readInOrder(a);
    await files.readInOrder(b);
    expect(fs.log.filter((l) => l.startsWith('watch'))).toEqual([`watch ${DIR}`]);
    expect(files.watchedFolders).toEqual([DIR]);
    files.remove(a);
    expect(fs.log).not.toContain(`close ${DIR}`);
    files.remove(b);
    expect(fs.log).toContain(`close ${DIR}`);
    expect(files.watchedFolders).toEqual([]);
  });

  it("a change of one pane's file reaches that pane only", async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    const a = owner(7);
    const b = owner(8);
    await files.readInOrder(files.add(a.own));
    await files.readInOrder(files.add(b.own));
    const fire = fs.watching.get(DIR)!;
    fire('8.json');
    fire('8.json');
    fire('9.json');
    fire(null);
    expect(b.seen.changed).toBe(2);
    expect(a.seen.changed).toBe(0);
  });

  it('a folder the CLI has not made yet is watched from a later reading; the reading itself still counts', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    fs.state.missing.add(DIR);
    fs.next.set(7, [reading('idle'), reading('busy')]);
    const p = files.add(owner(7).own);
    expect((await files.readInOrder(p))?.status).toBe('idle');
    expect(p.file).toBeNull();
    fs.state.missing.delete(DIR);
    expect((await files.readInOrder(p))?.status).toBe('busy');
    expect(p.file).toBe(`${DIR}/7.json`);
    expect(files.watchedFolders).toEqual([DIR]);
  });

  it('a reading still in flight when its pane is removed opens no watch', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    let go!: () => void;
    fs.state.homeWait = new Promise<void>((r) => (go = r));
    const p = files.add(owner(7).own);
    const r = files.readInOrder(p);
    files.remove(p);
    go();
    await r;
    expect(fs.log.filter((l) => l.startsWith('watch'))).toEqual([]);
    expect(files.watchedFolders).toEqual([]);
  });

  it('reports the session the file names: the first one, then each change', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    fs.next.set(7, [reading('idle', 's1'), reading('busy', 's1'), reading('idle', null), reading('idle', 's2')]);
    const a = owner(7);
    const p = files.add(a.own);
    for (let i = 0; i < 4; i++) await files.readInOrder(p);
    expect(a.seen.sessions).toEqual(['s1', 's2']);
  });

  it('a pane without a state file, or without a process, reads nothing', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    expect(await files.readInOrder(files.add({ ...owner(7).own, kind: undefined }))).toBeNull();
    expect(await files.readInOrder(files.add(owner(null).own))).toBeNull();
    expect(fs.log).toEqual([]);
  });

  it('after a restart the HOME is asked again, the old watch is dropped and the new pid read', async () => {
    const fs = fakeFs();
    const files = new StateFiles(fs.ports);
    const a = owner(7);
    const p = files.add(a.own);
    fs.next.set(7, [reading('busy')]);
    await files.readInOrder(p);
    files.reset(p);
    expect(p.last).toBeNull();
    expect(fs.log).toContain(`close ${DIR}`);
    a.o.pid = 9;
    fs.log.splice(0);
    await files.readInOrder(p);
    expect(fs.log).toEqual(['home 9', `watch ${DIR}`, 'read fake-agent /h 9']);
    expect(p.file).toBe(`${DIR}/9.json`);
  });
});

describe('the real state-file ports', () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
  });

  it("reads the fake agent's file under HOME; a missing or broken file reads as nothing", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'panes-state-'));
    homes.push(home);
    mkdirSync(path.join(home, '.fake-agent', 'state'), { recursive: true });
    writeFileSync(path.join(home, '.fake-agent', 'state', '41.json'), JSON.stringify({ status: 'busy', sessionId: 'abc' }));
    writeFileSync(path.join(home, '.fake-agent', 'state', '42.json'), '{not json');
    const r = await realStateFilePorts.read('fake-agent', home, 41);
    expect(r.classification?.status).toBe('busy');
    expect(r.sessionId).toBe('abc');
    expect(await realStateFilePorts.read('fake-agent', home, 42)).toEqual({ classification: null, sessionId: null });
    expect(await realStateFilePorts.read('fake-agent', home, 43)).toEqual({ classification: null, sessionId: null });
  });
});
