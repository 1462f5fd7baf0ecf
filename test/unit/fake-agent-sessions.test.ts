import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSession } from '../../src/fake-agent/open-session.js';
import { removeStateFile, stateFilePath, traceLine, writeStateFile } from '../../src/fake-agent/runtime-files.js';
import type { SessionRecord } from '../../src/fake-agent/session-store.js';
import {
  formatSessionList,
  latestSession,
  listSessions,
  newSession,
  parseSession,
  readSession,
  relativeTime,
  sessionPath,
  writeSession,
} from '../../src/fake-agent/session-store.js';

const A = '6f1c2a3b-0000-4000-8000-00000000000a';
const B = '6f1c2a3b-0000-4000-8000-00000000000b';
let home: string;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-agent-sessions-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

function session(id: string, created: string, updated: string, title = '(empty)'): SessionRecord {
  return { ...newSession(id, '/w', new Date(created)), updated, title };
}

describe('fake agent: session store', () => {
  it('writes atomically and reads back', () => {
    const s = { ...newSession(A, '/w', new Date(0)), title: 'hi', turns: [{ prompt: 'hi', sha256: 'x', bytes: 2, reply: 'r' }] };
    writeSession(home, s);
    expect(readSession(home, A)).toEqual(s);
    expect(fs.readdirSync(path.dirname(sessionPath(home, A)))).toEqual([`${A}.json`]);
    expect(readSession(home, B)).toBeUndefined();
    expect(readSession(home, '../etc/passwd')).toBeUndefined();
  });

  it('rejects a file that is not a session, naming the field', () => {
    expect(parseSession({ id: A, cwd: '/', created: 'x', title: 1, turns: [] }, 'f.json')).toBe('f.json: field `title` must be a string, got number');
    expect(parseSession({ id: A, cwd: '/', created: 'x', title: 't', turns: [{}] }, 'f.json')).toMatch(/turns\[0\]/);
  });

  it('lists oldest first and picks the newest activity as latest', () => {
    writeSession(home, session(B, '2024-01-02T00:00:00Z', '2024-01-02T00:00:00Z', 'second'));
    writeSession(home, session(A, '2024-01-01T00:00:00Z', '2024-01-03T00:00:00Z', 'first'));
    fs.writeFileSync(path.join(path.dirname(sessionPath(home, A)), 'broken.json'), '{');
    const all = listSessions(home);
    expect(all.map((s) => s.id)).toEqual([A, B]);
    expect(latestSession(all)?.id).toBe(A);
    const now = Date.parse('2024-01-03T00:00:30Z');
    expect(formatSessionList(all, now)).toBe(`1. first (Just now) [${A}]\n2. second (1 day ago) [${B}]\n`);
  });

  it('relative times', () => {
    expect(relativeTime(59_000)).toBe('Just now');
    expect(relativeTime(60_000)).toBe('1 minute ago');
    expect(relativeTime(3 * 3_600_000)).toBe('3 hours ago');
    expect(relativeTime(49 * 3_600_000)).toBe('2 days ago');
  });

  it('state file: written and removed', () => {
    writeStateFile(home, { pid: 42, sessionId: A, status: 'busy', updatedAt: 5 });
    expect(JSON.parse(fs.readFileSync(stateFilePath(home, 42), 'utf8'))).toEqual({ pid: 42, sessionId: A, status: 'busy', updatedAt: 5 });
    removeStateFile(home, 42);
    expect(fs.existsSync(stateFilePath(home, 42))).toBe(false);
    expect(JSON.parse(traceLine(42, 'idle', 1.5))).toEqual({ t: 1.5, pid: 42, state: 'idle' });
  });

  it('state file: a HOME that is gone is not made again (a test world removed while the agent ends)', () => {
    const gone = path.join(home, 'gone');
    writeStateFile(gone, { pid: 42, sessionId: A, status: 'idle', updatedAt: 5 });
    expect(fs.existsSync(gone)).toBe(false);
  });
});

describe('fake agent: openSession', () => {
  const ctx = () => ({ home, cwd: '/w', now: new Date(0), newId: () => A });

  it('a fresh uuid by default', () => {
    expect(openSession({ sessionId: undefined, resume: undefined }, ctx())).toMatchObject({ ok: true, resumed: false, session: { id: A, turns: [] } });
  });

  it('--session-id pins a new session and fails like claude when it is in use', () => {
    expect(openSession({ sessionId: B, resume: undefined }, ctx())).toMatchObject({ ok: true, session: { id: B } });
    writeSession(home, newSession(B, '/w', new Date(0)));
    expect(openSession({ sessionId: B, resume: undefined }, ctx())).toEqual({ ok: false, message: `Error: Session ID ${B} is already in use.` });
    expect(openSession({ sessionId: 'nope', resume: undefined }, ctx())).toMatchObject({ ok: false });
  });

  it('--resume loads a session, fails when missing, and latest is global', () => {
    expect(openSession({ sessionId: undefined, resume: B }, ctx())).toEqual({ ok: false, message: `Error: No conversation found with session ID: ${B}` });
    writeSession(home, session(B, '2024-01-01T00:00:00Z', '2024-01-05T00:00:00Z'));
    writeSession(home, session(A, '2024-01-02T00:00:00Z', '2024-01-02T00:00:00Z'));
    expect(openSession({ sessionId: undefined, resume: A }, ctx())).toMatchObject({ ok: true, resumed: true, session: { id: A } });
    expect(openSession({ sessionId: undefined, resume: 'latest' }, ctx())).toMatchObject({ ok: true, session: { id: B } });
  });
});

describe('HOME removed while the agent is still ending (a test removed its world)', () => {
  it('a session, a state file or a claude transcript written then makes nothing: HOME is not made again', async () => {
    const { writeClaudeTranscript } = await import('../../src/fake-agent/claude-transcript.js');
    const session = newSession(A, '/work', new Date('2026-11-28T12:00:00Z'));
    fs.rmSync(home, { recursive: true, force: true });
    writeSession(home, session);
    writeStateFile(home, { pid: 4242, sessionId: A, status: 'idle', updatedAt: 1 });
    writeClaudeTranscript(home, session);
    expect(fs.existsSync(home)).toBe(false);
  });

  it('with HOME there, the folders below it are made as before', () => {
    writeSession(home, newSession(A, '/work', new Date('2026-11-28T12:00:00Z')));
    writeStateFile(home, { pid: 4242, sessionId: A, status: 'idle', updatedAt: 1 });
    expect(readSession(home, A)?.id).toBe(A);
    expect(JSON.parse(fs.readFileSync(stateFilePath(home, 4242), 'utf8'))).toMatchObject({ status: 'idle' });
  });
});
