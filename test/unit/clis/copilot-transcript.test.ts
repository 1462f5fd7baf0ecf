// GitHub Copilot CLI 1.0.102's session events, read for the reply to one prompt (a real TUI session
// against a stub: a plain answer, a shell call approved, one that needed no approval, one cancelled
// with Esc, then the session resumed and asked again).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copilotReply, copilotTranscriptFile } from '../../../src/clis/copilot/transcript.js';

const file = path.join(import.meta.dirname, '..', '..', 'fixtures', 'transcripts', 'copilot-1.0.102-tui-session.jsonl');
const text = readFileSync(file, 'utf8');
const lines = text.split('\n').filter((l) => l.trim() !== '');
const upTo = (needle: string, nth = 1): string => {
  let seen = 0;
  const at = lines.findIndex((l) => l.includes(needle) && ++seen === nth);
  expect(at, needle).toBeGreaterThanOrEqual(0);
  return lines.slice(0, at + 1).join('\n');
};

describe('copilotReply', () => {
  it('each prompt: the finished reply, the message that only called a tool skipped', () => {
    expect(copilotReply(text, 'SLOW please say hi')).toEqual({ text: 'hi from stub', finished: true });
    expect(copilotReply(text, 'RUNSHELL now')).toEqual({ text: 'tool finished: done\n<shellId: 0 completed with exit code 0>', finished: true });
    expect(copilotReply(text, 'hello again')).toEqual({ text: 'hi from stub', finished: true });
    expect(copilotReply(text, 'never asked')).toBeNull();
  });

  it('not finished while the tool runs, before the turn_end, or before anything is written', () => {
    expect(copilotReply(upTo('"type":"tool.execution_start"'), 'RUNSHELL now')).toEqual({ text: '', finished: false });
    // The final message is written, its turn_end not yet.
    const finalMessage = lines.findIndex((l) => l.includes('"content":"tool finished: done'));
    expect(copilotReply(lines.slice(0, finalMessage + 1).join('\n'), 'RUNSHELL now')).toEqual({
      text: expect.stringContaining('tool finished'),
      finished: false,
    });
    expect(copilotReply(upTo('"content":"hello again"'), 'hello again')).toEqual({ text: '', finished: false });
  });

  it('a turn cancelled with Esc is over, with no reply', () => {
    expect(copilotReply(text, 'RUNSHELL:touch made.txt')).toEqual({ text: '', finished: true });
  });

  it('a line cut short or not JSON is skipped; the events before it count', () => {
    const whole = upTo('"type":"assistant.turn_end"');
    expect(copilotReply(`${whole}\n{"type":"assistant.mess`, 'SLOW please say hi')).toEqual({ text: 'hi from stub', finished: true });
    expect(copilotReply(`[1,2]\nnull\n"x"\n${whole}`, 'SLOW please say hi')).toEqual({ text: 'hi from stub', finished: true });
  });

  it('lives under the HOME the pane runs with', () => {
    expect(copilotTranscriptFile('/home/a', 'abc')).toBe('/home/a/.copilot/session-state/abc/events.jsonl');
  });
});
