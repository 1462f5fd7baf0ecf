// Reading a reply from a CLI's own transcript on disk: where each CLI keeps it, and the text handed on
// only once the turn is finished.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTranscriptReply, replyFromTranscript } from '../../../src/clis/transcript.js';
import { opencodeRunJson } from '../../../src/clis/opencode/headless.js';
import { readFixture, TAG, type TranscriptFixture } from '../../helpers/claude-transcripts.js';

const SESSION = '5e551011-0000-4000-8000-000000000001';
const nonceOf = (tag: string) => tag.slice('[jg:'.length, -1);

let home: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'jaggers-transcript-reply-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('claude', () => {
  const cwd = '/work/my project.v2';
  /** claude's folder for the cwd: every character but letters and digits as '-'. */
  const place = (fixture: TranscriptFixture) => {
    const dir = path.join(home, '.claude', 'projects', '-work-my-project-v2');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${SESSION}.jsonl`), readFixture(fixture));
  };
  const read = (tag: string) => readTranscriptReply('claude', home, cwd, SESSION, nonceOf(tag));

  it('a finished turn: its reply, finished; replyFromTranscript gives the text', async () => {
    place('reply-above-prompt');
    expect(await read(TAG.fast)).toEqual({ text: 'answer: the secret word is pelican', finished: true });
    expect(await replyFromTranscript('claude', home, cwd, SESSION, nonceOf(TAG.fast))).toBe('answer: the secret word is pelican');
  });

  it('a running turn: the text so far, not finished; replyFromTranscript gives null', async () => {
    place('tool-running');
    expect(await read(TAG.tool)).toEqual({ text: 'Let me run that command.', finished: false });
    expect(await replyFromTranscript('claude', home, cwd, SESSION, nonceOf(TAG.tool))).toBeNull();
  });

  it('no transcript yet, or no prompt with the nonce: null', async () => {
    expect(await read(TAG.simple)).toBeNull();
    place('simple');
    expect(await read(TAG.second)).toBeNull();
    expect(await readTranscriptReply('claude', home, '/elsewhere', SESSION, nonceOf(TAG.simple))).toBeNull();
  });
});

describe('fake-agent', () => {
  const write = (turns: unknown[]) => {
    const dir = path.join(home, '.fake-agent', 'sessions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${SESSION}.json`), JSON.stringify({ id: SESSION, turns }));
  };
  const read = (nonce: string) => readTranscriptReply('fake-agent', home, '/w', SESSION, nonce);

  it('the turn whose prompt carried the nonce, finished once it has a reply', async () => {
    write([{ prompt: 'first [jg:aa01]', reply: 'one' }, { prompt: 'second [jg:aa02]', reply: 'two' }, { prompt: 'third [jg:aa03]' }]);
    expect(await read('aa01')).toEqual({ text: 'one', finished: true });
    expect(await read('aa03')).toEqual({ text: '', finished: false });
    expect(await replyFromTranscript('fake-agent', home, '/w', SESSION, 'aa02')).toBe('two');
    expect(await replyFromTranscript('fake-agent', home, '/w', SESSION, 'aa03')).toBeNull();
    expect(await read('ffff')).toBeNull();
  });

  it('no session file, or one that is not JSON: null', async () => {
    expect(await read('aa01')).toBeNull();
    const dir = path.join(home, '.fake-agent', 'sessions');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${SESSION}.json`), '{"turns":[{"prompt":"x [jg:aa01]"');
    expect(await read('aa01')).toBeNull();
  });
});

it('a CLI without a transcript: null', async () => {
  expect(await readTranscriptReply(undefined, home, '/w', SESSION, 'aa01')).toBeNull();
});

describe('opencode run --format json', () => {
  const fixture = readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'headless', 'opencode-1.18.33-run-first.jsonl'), 'utf8');

  it('gives the session opencode chose and the reply (1.18.33, as printed)', () => {
    expect(opencodeRunJson(fixture)).toEqual({ sessionId: 'ses_df0ff2bf4ffej6sbF63tP2jyk6', text: 'Hello from stub' });
  });

  it("takes the last message's text: a tool call's message comes before the answer; other lines are skipped", () => {
    const ev = (type: string, messageID: string, text?: string) =>
      JSON.stringify({ type, sessionID: 'ses_1', part: { messageID, type, ...(text ? { text } : {}) } });
    const out = [
      'warning: not json',
      ev('text', 'm1', 'I will run it.'),
      ev('tool_use', 'm1'),
      ev('text', 'm2', 'It ran'),
      ev('text', 'm2', ', all of it.'),
      '',
    ].join('\n');
    expect(opencodeRunJson(out)).toEqual({ sessionId: 'ses_1', text: 'It ran, all of it.' });
    expect(opencodeRunJson('')).toEqual({ sessionId: null, text: '' });
  });
});
