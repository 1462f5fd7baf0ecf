import { describe, expect, it } from 'vitest';
import { combine } from '../../src/detect/state-file.js';

const c = (status: 'idle' | 'busy' | 'done' | 'waiting_input' | 'error', rule: string = status) => ({ status, rule, lines: [] as string[] });

describe('combining the screen with the CLI state file', () => {
  it('takes the file as stronger evidence for busy and idle', () => {
    expect(combine(c('idle'), c('busy', 'state-file'))).toEqual({ c: c('busy', 'state-file'), source: 'state-file' });
    expect(combine(c('busy'), c('idle', 'state-file')).source).toBe('state-file');
  });
  it('never lets the file hide a menu or an error', () => {
    for (const s of ['waiting_input', 'error'] as const) {
      expect(combine(c(s), c('busy', 'state-file'))).toEqual({ c: c(s), source: 'screen' });
    }
  });
  it("keeps a turn summary when the file says idle, and the file when it says busy (the summary may be the last turn's)", () => {
    expect(combine(c('done'), c('idle', 'state-file'))).toEqual({ c: c('done'), source: 'screen' });
    expect(combine(c('done'), c('busy', 'state-file'))).toEqual({ c: c('busy', 'state-file'), source: 'state-file' });
  });
  it('falls back to the screen without a file', () => {
    expect(combine(c('idle'), null)).toEqual({ c: c('idle'), source: 'screen' });
  });
});
