// Where each CLI writes its own status, and what jaggers reads from it.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_STATE_FILE_BYTES, readStateFile, stateFilePath } from '../../../src/clis/state-file.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'jaggers-state-file-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

const write = async (file: string, text: string) => {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
};

describe('state files', () => {
  it("claude's under ~/.claude/sessions, the fake agent's under ~/.fake-agent/state, by pid", () => {
    expect(stateFilePath('claude-sessions', '/h', 42)).toBe('/h/.claude/sessions/42.json');
    expect(stateFilePath('fake-agent', '/h', 42)).toBe('/h/.fake-agent/state/42.json');
  });

  it('reads the status and the session the CLI is in now', async () => {
    const file = stateFilePath('claude-sessions', home, 7);
    await write(file, '{"status":"waiting","sessionId":"s-1"}');
    expect(await readStateFile('claude-sessions', home, 7)).toEqual({
      classification: { status: 'waiting_input', rule: `state-file ${file}`, lines: ['status: waiting'] },
      sessionId: 's-1',
    });
  });

  it('nulls for a missing, torn or unknown file', async () => {
    const none = { classification: null, sessionId: null };
    expect(await readStateFile('fake-agent', home, 1)).toEqual(none);
    await write(stateFilePath('fake-agent', home, 2), '{"status":"bu');
    expect(await readStateFile('fake-agent', home, 2)).toEqual(none);
    await write(stateFilePath('fake-agent', home, 3), '{"status":"thinking","sessionId":""}');
    expect(await readStateFile('fake-agent', home, 3)).toEqual(none);
  });
});

describe('a state file larger than one can be', () => {
  it('is not read: nulls, whatever it holds', async () => {
    const file = stateFilePath('claude-sessions', home, 8);
    const padded = `{"status":"busy","sessionId":"s-2","pad":"${'x'.repeat(MAX_STATE_FILE_BYTES)}"}`;
    await write(file, padded);
    expect(await readStateFile('claude-sessions', home, 8)).toEqual({ classification: null, sessionId: null });
    await write(file, '{"status":"busy","sessionId":"s-2"}');
    expect((await readStateFile('claude-sessions', home, 8)).sessionId).toBe('s-2');
  });
});
