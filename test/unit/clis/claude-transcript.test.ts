// The reply to a prompt in real claude 2.1.197 transcripts (test/fixtures/transcripts), found by
// walking the entries' links; and the same files bent the ways a live or damaged file can be.
import { describe, expect, it } from 'vitest';
import { parseClaudeTranscript } from '../../../src/clis/claude/entries.js';
import { claudeReply, type ClaudeReply } from '../../../src/clis/claude/transcript.js';
import { readFixture, TAG, type TranscriptFixture } from '../../helpers/claude-transcripts.js';

const ANSWER = 'answer: the secret word is pelican';
const FOXES = `stub reply to: Say something about foxes. ${TAG.first}`;
const OWLS = `stub reply to: Now something about owls. ${TAG.second}`;
const TOOL_REPLY = 'Let me run that command.\n\nstub: the command ran.';

const reply = (fixture: TranscriptFixture, tag: string) => claudeReply(readFixture(fixture), tag);
const done = (text: string, end: ClaudeReply['end'] = 'turn-duration'): ClaudeReply => ({ text, finished: true, end });
const running = (text: string): ClaudeReply => ({ text, finished: false, end: null });

/** The first line that contains all of `needles`. */
const lineWith = (text: string, ...needles: string[]) => text.split('\n').findIndex((l) => needles.every((n) => l.includes(n)));
const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const parse = (l: string) => JSON.parse(l) as Record<string, unknown>;

describe('claude transcripts: the reply to a prompt', () => {
  it('simple: the answer to a handover prompt, finished by its turn_duration entry', () => {
    expect(reply('simple', TAG.simple)).toEqual(done(ANSWER));
  });

  it('streaming: the prompt is written, the answer not yet: nothing, not finished', () => {
    expect(reply('streaming', TAG.simple)).toEqual(running(''));
  });

  it('reply-above-prompt: the answer stands above its prompt in the file and is still found', () => {
    const text = readFixture('reply-above-prompt');
    // The file is what broke the line-order reader: the reply (and its turn end) above the prompt.
    expect(lineWith(text, '"type":"assistant"')).toBeLessThan(lineWith(text, TAG.fast));
    expect(lineWith(text, '"turn_duration"')).toBeLessThan(lineWith(text, TAG.fast));
    expect(reply('reply-above-prompt', TAG.fast)).toEqual(done(ANSWER));
  });

  it('two-turns: each prompt gets its own answer; the first does not run into the second turn', () => {
    expect(reply('two-turns', TAG.first)).toEqual(done(FOXES));
    expect(reply('two-turns', TAG.second)).toEqual(done(OWLS));
  });

  it('the answer echoes the tag: only a prompt carrying it counts, not the reply', () => {
    const text = readFixture('two-turns');
    const withoutPrompt = lines(text).filter((l) => !(l.includes(TAG.second) && parse(l).type === 'user'));
    expect(withoutPrompt.some((l) => l.includes(TAG.second))).toBe(true);
    expect(claudeReply(withoutPrompt.join('\n'), TAG.second)).toBeNull();
  });

  it('torn-last-line: the half-written turn end is skipped, so that turn is not finished yet', () => {
    const text = readFixture('torn-last-line');
    const parsed = parseClaudeTranscript(text);
    expect(parsed.unreadable).toEqual([text.split('\n').length - 1]);
    expect(reply('torn-last-line', TAG.first)).toEqual(done(FOXES));
    expect(reply('torn-last-line', TAG.second)).toEqual(running(OWLS));
  });

  it('interrupted: Esc leaves the partial answer and an interruption entry: finished', () => {
    expect(reply('interrupted', TAG.interrupted)).toEqual(done('This is a long and sl', 'interrupted'));
    expect(reply('interrupted', TAG.second)).toEqual(done(OWLS));
  });

  it('tool-running: a tool call without its result is not finished', () => {
    expect(reply('tool-running', TAG.tool)).toEqual(running('Let me run that command.'));
  });

  it('tool: text and tool call (two entries of one message), the result, the final answer', () => {
    const text = readFixture('tool');
    const assistants = lines(text)
      .map(parse)
      .filter((e) => e.type === 'assistant');
    const ids = assistants.map((e) => (e.message as { id: string }).id);
    expect(ids[0]).toBe(ids[1]);
    expect(reply('tool', TAG.tool)).toEqual(done(TOOL_REPLY));
  });

  it('tool-approval-pending: a call waiting for approval is not finished; the turn before is', () => {
    expect(reply('tool-approval-pending', TAG.approval)).toEqual(running(''));
    expect(reply('tool-approval-pending', TAG.simple)).toEqual(done(ANSWER));
  });

  it("queued-prompt: a prompt typed while a tool ran joins that turn as an attachment and ends the first prompt's part", () => {
    const text = readFixture('queued-prompt');
    expect(
      lines(text)
        .filter((l) => l.includes(TAG.queuedSecond))
        .map((l) => parse(l).type),
    ).toEqual(['queue-operation', 'attachment']);
    expect(reply('queued-prompt', TAG.queuedFirst)).toEqual(done('Let me run that command.', 'next-prompt'));
    expect(reply('queued-prompt', TAG.queuedSecond)).toEqual(done(`stub reply to: Run another slow command. ${TAG.queuedFirst}`));
    expect(reply('queued-prompt', TAG.tool)).toEqual(done(TOOL_REPLY));
  });

  it('headless: claude -p writes no turn_duration; its last-prompt leaf is the final answer', () => {
    expect(readFixture('headless')).not.toContain('turn_duration');
    expect(reply('headless', TAG.headless)).toEqual(done(`stub reply to: A headless question. ${TAG.headless}`, 'headless-leaf'));
  });

  it.each<TranscriptFixture>(['simple', 'two-turns', 'tool', 'headless', 'torn-last-line'])('%s: a tag no prompt carried gives null', (f) => {
    expect(reply(f, '[jg:ffffffffffffffff]')).toBeNull();
  });
});

describe('claude transcripts: files bent the ways a live or damaged file can be', () => {
  /** A fixed shuffle: the lines' order must not matter, the links carry the conversation. */
  const shuffled = (text: string) =>
    lines(text)
      .map((l, i) => ({ l, k: (i * 7919) % 13 }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.l);

  it('any line order gives the same replies (reversed, shuffled)', () => {
    for (const f of ['two-turns', 'queued-prompt', 'interrupted'] as const) {
      const text = readFixture(f);
      for (const order of [lines(text).reverse(), shuffled(text)]) {
        expect(order.join('\n')).not.toBe(lines(text).join('\n'));
        for (const tag of Object.values(TAG)) expect(claudeReply(order.join('\n'), tag), `${f} ${tag}`).toEqual(claudeReply(text, tag));
      }
    }
  });

  it('blank lines, CRLF endings and lines that are not entries are skipped', () => {
    const text = lines(readFixture('two-turns'));
    const bent = ['', '42', '"text"', '[]', '{"no":"type"}', '{oops', ...text.map((l) => `${l}\r`), '   '].join('\n\n');
    const parsed = parseClaudeTranscript(bent);
    expect(parsed.entries).toHaveLength(text.length);
    expect(parsed.unreadable).toHaveLength(5);
    expect(claudeReply(bent, TAG.first)).toEqual(done(FOXES));
    expect(claudeReply(bent, TAG.second)).toEqual(done(OWLS));
  });

  it('a field of an unexpected shape drops that field, not the entry', () => {
    const text = lines(readFixture('simple')).map((l) => {
      const e = parse(l);
      return JSON.stringify(e.type === 'assistant' ? { ...e, isSidechain: 'no', timestamp: 5 } : e);
    });
    expect(claudeReply(text.join('\n'), TAG.simple)).toEqual(done(ANSWER));
  });

  /** The simple fixture with `extra` entries whose parent is the entry at `parentOf`'s uuid. */
  function withChildren(parentOf: (e: Record<string, unknown>) => boolean, extra: Record<string, unknown>[]): string {
    const text = lines(readFixture('simple'));
    const parent = text.map(parse).find(parentOf)!;
    return [...text, ...extra.map((e, i) => JSON.stringify({ uuid: `extra-${i}`, parentUuid: parent.uuid, timestamp: parent.timestamp, ...e }))].join('\n');
  }
  const isPrompt = (e: Record<string, unknown>) => e.type === 'user';
  const isAnswer = (e: Record<string, unknown>) => e.type === 'assistant';

  it('subagent (isSidechain) entries are not part of the reply', () => {
    const text = withChildren(isAnswer, [
      { type: 'assistant', isSidechain: true, message: { id: 'm-sub', content: [{ type: 'text', text: 'from a subagent' }] } },
    ]);
    expect(claudeReply(text, TAG.simple)).toEqual(done(ANSWER));
  });

  it('an isMeta user entry is no prompt: neither found by its tag nor ending the turn', () => {
    const meta = { type: 'user', isMeta: true, message: { role: 'user', content: `<local-command-caveat> ${TAG.headless}` } };
    const text = withChildren(isPrompt, [meta]);
    expect(claudeReply(text, TAG.headless)).toBeNull();
    expect(claudeReply(text, TAG.simple)).toEqual(done(ANSWER));
  });

  it('a later typed prompt in the chain ends the reply before it, even without a turn_duration', () => {
    // Without its turn_duration entries, the second prompt hangs off the first answer directly.
    const entries = lines(readFixture('two-turns'))
      .map(parse)
      .filter((e) => e.subtype !== 'turn_duration');
    const foxes = entries.find((e) => JSON.stringify(e).includes(FOXES) && e.type === 'assistant')!;
    const text = entries.map((e) => JSON.stringify(e.type === 'user' && JSON.stringify(e).includes(TAG.second) ? { ...e, parentUuid: foxes.uuid } : e));
    expect(claudeReply(text.join('\n'), TAG.first)).toEqual(done(FOXES, 'next-prompt'));
    expect(claudeReply(text.join('\n'), TAG.second)).toEqual(running(OWLS));
  });

  it('a tool call without its result keeps the turn open, whatever follows it', () => {
    const entries = lines(readFixture('tool-running')).map(parse);
    const call = entries.find((e) => JSON.stringify(e).includes('"tool_use"'))!;
    const later = { type: 'user', uuid: 'later-1', parentUuid: call.uuid, message: { role: 'user', content: 'a later prompt' } };
    expect(claudeReply([...entries, later].map((e) => JSON.stringify(e)).join('\n'), TAG.tool)).toEqual(running('Let me run that command.'));
  });

  it('one message written twice (same message id and text) gives its text once', () => {
    const text = lines(readFixture('tool'));
    const first = text.find((l) => l.includes('Let me run that command.'))!;
    const again = JSON.stringify({ ...parse(first), uuid: 'copy-1', parentUuid: parse(first).uuid });
    const relinked = text.map((l) => l.replace(`"parentUuid":"${parse(first).uuid as string}"`, '"parentUuid":"copy-1"'));
    expect(claudeReply([...relinked, again].join('\n'), TAG.tool)).toEqual(done(TOOL_REPLY));
  });

  it('a link loop in a damaged file ends the walk (at the prompt, which every loop below it passes)', () => {
    const text = withChildren(isAnswer, [{ type: 'assistant', message: { id: 'm-loop', content: [{ type: 'text', text: 'loop' }] } }]);
    const looped = text.replace(/"parentUuid":null/, '"parentUuid":"extra-0"');
    expect(claudeReply(looped, TAG.simple)?.text).toBe(`${ANSWER}\n\nloop`);
  });
});
