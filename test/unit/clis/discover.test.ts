import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findNewCodexSession } from '../../../src/clis/codex/discover.js';
import { dayFolders, parseRolloutHead } from '../../../src/clis/codex/rollout.js';
import { diffListedSessions, parseListedSessions } from '../../../src/clis/gemini/list-sessions.js';
import { findNewOpencodeSession } from '../../../src/clis/opencode/discover.js';
import { parseOpencodeSessionList } from '../../../src/clis/opencode/session-list.js';

const A = '019a6b1e-0000-7000-8000-00000000000a';
const B = '019a6b1e-0000-7000-8000-00000000000b';
const C = '019a6b1e-0000-7000-8000-00000000000c';

let home: string;
const cwd = '/work/project';

const pad = (n: number): string => String(n).padStart(2, '0');

/** A rollout file the way codex writes it: local-time day folder and name, session_meta first. */
const dayOf = (at: Date): string => `${at.getFullYear()}/${pad(at.getMonth() + 1)}/${pad(at.getDate())}`;

interface RolloutOptions {
  cwd?: string;
  extra?: Record<string, unknown>;
  raw?: string;
  folder?: Date;
}

async function rollout(id: string, at: Date, opts: RolloutOptions = {}): Promise<string> {
  const day = dayOf(opts.folder ?? at);
  const stamp = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}-${pad(at.getMinutes())}-${pad(at.getSeconds())}`;
  const dir = path.join(home, 'sessions', day);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `rollout-${stamp}-${id}.jsonl`);
  const meta = {
    timestamp: at.toISOString(),
    type: 'session_meta',
    payload: {
      id,
      timestamp: at.toISOString(),
      cwd: opts.cwd ?? cwd,
      originator: 'codex_cli_rs',
      cli_version: '0.169.0',
      instructions: 'x'.repeat(100_000),
      ...opts.extra,
    },
  };
  const turn = { timestamp: at.toISOString(), type: 'response_item', payload: { type: 'message', role: 'user', content: [] } };
  await writeFile(file, opts.raw ?? `${JSON.stringify(meta)}\n${JSON.stringify(turn)}\n`);
  return file;
}

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'jaggers-codex-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('findNewCodexSession', () => {
  const since = new Date(Date.now() - 60_000);
  const inWindow = (s: number): Date => new Date(since.getTime() + s * 1000);

  it('finds the one session started in the folder after `since`', async () => {
    const file = await rollout(A, inWindow(5), { extra: { git: { branch: 'main' }, model_provider: 'stub' } });
    await rollout(B, inWindow(6), { cwd: '/somewhere/else' });
    await rollout(C, new Date(since.getTime() - 5_000));
    await expect(findNewCodexSession({ codexHome: home, cwd, since, exclude: new Set() })).resolves.toEqual({ kind: 'found', id: A, file });
  });

  it('skips sessions already pinned elsewhere and sessions after `until`', async () => {
    await rollout(A, inWindow(5));
    await rollout(B, inWindow(30));
    const found = await findNewCodexSession({ codexHome: home, cwd, since, until: inWindow(20), exclude: new Set() });
    expect(found).toMatchObject({ kind: 'found', id: A });
    const none = await findNewCodexSession({ codexHome: home, cwd, since, until: inWindow(20), exclude: new Set([A]) });
    expect(none).toMatchObject({ kind: 'none', id: null });
    expect(none.kind === 'none' && none.reason).toMatch(/no new codex session in \/work\/project between .* \(of 2 rollout files scanned\)/);
  });

  it('does not guess between two candidates', async () => {
    await rollout(A, inWindow(5));
    await rollout(B, inWindow(7));
    const result = await findNewCodexSession({ codexHome: home, cwd, since, exclude: new Set() });
    expect(result).toMatchObject({ kind: 'ambiguous', id: null, ids: [A, B] });
    expect(result.kind === 'ambiguous' && result.reason).toMatch(/2 new codex sessions .*not guessing/);
  });

  it('ignores unreadable heads, other files and a missing sessions folder', async () => {
    await expect(findNewCodexSession({ codexHome: home, cwd, since, exclude: new Set() })).resolves.toMatchObject({ kind: 'none' });
    await rollout(A, inWindow(5), { raw: '{"type":"session_meta","payl' });
    await rollout(B, inWindow(5), { raw: '{"type":"turn_context","payload":{}}\n' });
    await writeFile(path.join(home, 'sessions', dayOf(inWindow(5)), 'notes.txt'), 'hi');
    await expect(findNewCodexSession({ codexHome: home, cwd, since, exclude: new Set() })).resolves.toMatchObject({ kind: 'none' });
  });

  it('only scans the day folders around the window', async () => {
    const old = new Date(since.getTime() - 10 * 24 * 3600_000);
    await rollout(A, inWindow(5), { folder: old });
    await expect(findNewCodexSession({ codexHome: home, cwd, since, exclude: new Set() })).resolves.toMatchObject({ kind: 'none' });
    expect(dayFolders(since, new Date())).not.toContain(dayOf(old));
    expect(dayFolders(since, new Date())).toContain(dayOf(since));
  });
});

describe('parseRolloutHead', () => {
  it('reads the current format and tolerates the older flat one', () => {
    const line = JSON.stringify({ timestamp: '2025-11-21T10:00:01.5Z', type: 'session_meta', payload: { id: A, cwd, extra: [1] } });
    expect(parseRolloutHead(line, 'f')).toEqual({ id: A, cwd, startedAt: new Date('2025-11-21T10:00:01.500Z'), file: 'f' });
    const flat = JSON.stringify({ id: B, timestamp: '2025-11-21T10:00:00Z', instructions: null });
    expect(parseRolloutHead(flat, 'f')).toMatchObject({ id: B, cwd: null });
    expect(parseRolloutHead(JSON.stringify({ type: 'session_meta', payload: {} }), `/x/rollout-2025-11-21T10-00-00-${C}.jsonl`)).toMatchObject({
      id: C,
      startedAt: null,
    });
    expect(parseRolloutHead('nope', 'f')).toBeNull();
  });
});

describe('diffListedSessions', () => {
  const before = ['Available sessions for this project (2):', `  1. Fix the login (bug) (2 hours ago) [${A}]`, `  2. Write tests (Just now) [${B}]`, ''].join(
    '\n',
  );
  const after = `${before.trimEnd()}\n  3. [draft] Refactor (x) (Just now) [${C}]\n`;

  it('parses titles with brackets and parentheses', () => {
    expect(parseListedSessions(after)).toEqual([
      { index: 1, title: 'Fix the login (bug)', when: '2 hours ago', id: A },
      { index: 2, title: 'Write tests', when: 'Just now', id: B },
      { index: 3, title: '[draft] Refactor (x)', when: 'Just now', id: C },
    ]);
  });

  it('returns the ids that are new', () => {
    expect(diffListedSessions(before, after)).toEqual([C]);
    expect(diffListedSessions(after, after)).toEqual([]);
    expect(diffListedSessions('', `\x1b[1m1. t (now) [${A}]\x1b[0m\r\n`)).toEqual([A]);
  });
});

describe('opencode: its session list, and the one session a terminal made', () => {
  // As `opencode session list --format json` printed it (1.18.33), plus entries it must skip.
  const since = new Date(1795548000000);
  const row = (id: string, created: number, directory = '/work/project') => ({
    id,
    title: 'Title stub',
    updated: created + 3000,
    created,
    projectId: 'global',
    directory,
  });
  const list = (rows: unknown[]) => JSON.stringify(rows, null, 2);

  it('parses its rows, skipping those without an id, a folder or a time', () => {
    const text = list([row('ses_b', 1795548199213), { id: 'ses_x', created: 1 }, { directory: '/work/project', created: 1 }, row('ses_a', 1795548076693)]);
    expect(parseOpencodeSessionList(text).map((h) => [h.id, h.cwd, h.startedAt?.getTime()])).toEqual([
      ['ses_b', '/work/project', 1795548199213],
      ['ses_a', '/work/project', 1795548076693],
    ]);
    expect(parseOpencodeSessionList('')).toEqual([]);
    expect(() => parseOpencodeSessionList('Error: no database')).toThrow(/opencode session list: not JSON .*"Error: no database"/);
    expect(() => parseOpencodeSessionList('{"sessions":[]}')).toThrow(/expected a JSON array/);
  });

  it('finds the one new session in the folder, and says why when there is none', async () => {
    const runs: string[][] = [];
    const run = async (args: readonly string[]) => {
      runs.push([...args]);
      return list([
        row('ses_new', since.getTime() + 5000),
        row('ses_old', since.getTime() - 5000),
        row('ses_elsewhere', since.getTime() + 6000, '/work/other'),
      ]);
    };
    const q = { run, listArgs: ['session', 'list', '--format', 'json'], cwd: '/work/project', since, exclude: new Set<string>() };
    await expect(findNewOpencodeSession(q)).resolves.toMatchObject({ kind: 'found', id: 'ses_new' });
    expect(runs).toEqual([['session', 'list', '--format', 'json']]);
    await expect(findNewOpencodeSession({ ...q, exclude: new Set(['ses_new']) })).resolves.toMatchObject({
      kind: 'none',
      reason: expect.stringMatching(/^no new opencode session in \/work\/project between .* \(of 3 sessions scanned\)$/),
    });
  });

  it('tells two new sessions apart by the tag of the prompt that made each, and does not guess without one', async () => {
    const run = async (args: readonly string[]) => {
      if (args[0] === 'export')
        return JSON.stringify({ info: { id: args[1] }, messages: [{ parts: [{ text: `Read x.md [jg:${args[1] === 'ses_1' ? 'aaaa' : 'bbbb'}]` }] }] });
      return list([row('ses_1', since.getTime() + 1000), row('ses_2', since.getTime() + 2000)]);
    };
    const q = { run, listArgs: ['session', 'list', '--format', 'json'], cwd: '/work/project', since, exclude: new Set<string>() };
    await expect(findNewOpencodeSession({ ...q, tag: '[jg:bbbb]' })).resolves.toMatchObject({ kind: 'found', id: 'ses_2' });
    await expect(findNewOpencodeSession({ ...q, tag: '[jg:cccc]' })).resolves.toMatchObject({
      kind: 'ambiguous',
      reason: expect.stringMatching(/not guessing \(0 of them carry \[jg:cccc\]\)$/),
    });
    await expect(findNewOpencodeSession(q)).resolves.toMatchObject({ kind: 'ambiguous', ids: ['ses_1', 'ses_2'] });
  });
});
