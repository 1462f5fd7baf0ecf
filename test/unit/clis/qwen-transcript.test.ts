// Qwen Code 0.24.4's chat recording, read for the reply to one prompt (a real recording of three
// handoffs: a plain answer, a shell tool call approved with `jaggers answer`, three paragraphs).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { qwenReply, qwenTranscriptFile } from '../../../src/clis/qwen/transcript.js';

const file = path.join(import.meta.dirname, '..', '..', 'fixtures', 'transcripts', 'qwen-0.24.4-three-turns.jsonl');
const text = readFileSync(file, 'utf8');
const lines = text.split('\n').filter((l) => l.trim() !== '');
const tags = [...new Set(text.match(/\[jg:[0-9a-f]+\]/g) ?? [])];

describe('qwenReply', () => {
  it('each prompt by its tag: the finished reply, tool calls in between skipped, paragraphs kept', () => {
    expect(tags).toHaveLength(3);
    expect(qwenReply(text, tags[0]!)).toEqual({ text: 'answer: Say hello.', finished: true });
    expect(qwenReply(text, tags[1]!)).toEqual({ text: 'stub: the command ran.', finished: true });
    expect(qwenReply(text, tags[2]!)).toEqual({
      text: 'First paragraph of the answer.\n\nSecond paragraph, with `code` in it.\n\nThird and last paragraph.',
      finished: true,
    });
    expect(qwenReply(text, '[jg:0000]')).toBeNull();
  });

  it('not finished while the tool runs (the call is the last word) or before the reply is written', () => {
    const toolAt = lines.findIndex((l) => l.includes('"functionCall"'));
    expect(qwenReply(lines.slice(0, toolAt + 1).join('\n'), tags[1]!)).toEqual({ text: '', finished: false });
    const promptAt = lines.findIndex((l) => l.includes(tags[2]!));
    expect(qwenReply(lines.slice(0, promptAt + 1).join('\n'), tags[2]!)).toEqual({ text: '', finished: false });
  });

  it('a line cut short, junk and entries of another shape are skipped', () => {
    const cut = [...lines.slice(0, -1), lines.at(-1)!.slice(0, 40), 'not json', '[1,2]', '{"type":"assistant","message":{"parts":"x"}}'].join('\n');
    expect(qwenReply(cut, tags[0]!)).toEqual({ text: 'answer: Say hello.', finished: true });
    expect(qwenReply(cut, tags[2]!)).toEqual({ text: '', finished: false });
  });

  it('the file is under the project folder named after the cwd', () => {
    expect(qwenTranscriptFile('/h', '/tmp/jgt-x/project', 'abc')).toBe('/h/.qwen/projects/-tmp-jgt-x-project/chats/abc.jsonl');
  });
});
