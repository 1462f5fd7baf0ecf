import { describe, expect, it } from 'vitest';
import { defaultOptions, parseArgs } from '../../src/fake-agent/args.js';

describe('fake agent: parseArgs', () => {
  it('defaults', () => {
    expect(parseArgs([])).toEqual({ kind: 'run', options: defaultOptions() });
    expect(defaultOptions()).toMatchObject({ bootMs: 0, thinkMs: 1500, pasteBurstMs: 0, picker: false });
  });

  it('reads every flag, with a separate or an inline value', () => {
    const parsed = parseArgs([
      '--boot-ms',
      '300',
      '--think-ms=20',
      '--paste-burst-ms',
      '150',
      '--picker',
      '--rules',
      'r.json',
      '--session-id',
      '6f1c2a3b-0000-4000-8000-000000000001',
    ]);
    expect(parsed).toEqual({
      kind: 'run',
      options: {
        bootMs: 300,
        thinkMs: 20,
        pasteBurstMs: 150,
        picker: true,
        rulesFile: 'r.json',
        sessionId: '6f1c2a3b-0000-4000-8000-000000000001',
        resume: undefined,
        replies: 'receipt',
        noHooks: false,
        claudeTranscript: false,
      },
    });
  });

  it('--hooks names the settings file of hook commands; --no-hooks ignores it (a release without hooks)', () => {
    expect(parseArgs(['--hooks', 'h.json'])).toMatchObject({ kind: 'run', options: { hooksFile: 'h.json', noHooks: false } });
    expect(parseArgs(['--hooks=h.json', '--no-hooks'])).toMatchObject({ kind: 'run', options: { hooksFile: 'h.json', noHooks: true } });
    expect(parseArgs(['--hooks'])).toEqual({ kind: 'error', message: "option '--hooks' needs a value" });
  });

  it('--replies picks the reply mode: receipt by default, or work', () => {
    expect(defaultOptions().replies).toBe('receipt');
    expect(parseArgs(['--replies', 'work'])).toMatchObject({ kind: 'run', options: { replies: 'work' } });
    expect(parseArgs(['--replies=receipt'])).toMatchObject({ kind: 'run', options: { replies: 'receipt' } });
    expect(parseArgs(['--replies', 'Work'])).toEqual({ kind: 'error', message: "option '--replies' must be receipt or work, got 'Work'" });
    expect(parseArgs(['--replies'])).toEqual({ kind: 'error', message: "option '--replies' needs a value" });
  });

  it('takes -r and --resume', () => {
    expect(parseArgs(['-r', 'latest'])).toMatchObject({ kind: 'run', options: { resume: 'latest' } });
    expect(parseArgs(['--resume', 'abc'])).toMatchObject({ kind: 'run', options: { resume: 'abc' } });
  });

  it('answers --version, --help and --list-sessions', () => {
    expect(parseArgs(['--think-ms', '5', '--version'])).toEqual({ kind: 'version' });
    expect(parseArgs(['-h'])).toEqual({ kind: 'help' });
    expect(parseArgs(['--list-sessions'])).toEqual({ kind: 'list-sessions' });
  });

  it('names an unknown flag', () => {
    expect(parseArgs(['--bogus'])).toEqual({ kind: 'error', message: "unknown option '--bogus' (see --help)" });
    expect(parseArgs(['--bogus=1'])).toEqual({ kind: 'error', message: "unknown option '--bogus' (see --help)" });
    expect(parseArgs(['hello'])).toEqual({ kind: 'error', message: "unexpected argument 'hello' (see --help)" });
  });

  it('rejects bad or missing values', () => {
    expect(parseArgs(['--think-ms', 'abc'])).toEqual({
      kind: 'error',
      message: "option '--think-ms' needs a whole number of milliseconds, got 'abc'",
    });
    expect(parseArgs(['--boot-ms', '-5'])).toMatchObject({ kind: 'error' });
    expect(parseArgs(['--resume'])).toEqual({ kind: 'error', message: "option '--resume' needs a value" });
    expect(parseArgs(['--session-id', 'a', '-r', 'b'])).toMatchObject({ kind: 'error' });
  });
});
