// classify (src/detect/classify.ts): the rules in order over their regions; the pane's raw output (its
// escape sequences stripped, a cost per reading) is read only when a rule looks at it, once.
import { describe, expect, it } from 'vitest';
import { classify, classifyAfterLimit, doneEvidence, type DetectInput } from '../../src/detect/classify.js';
import type { DetectRule } from '../../src/profiles/schema.js';

const rule = (name: string, status: DetectRule['status'], pattern: string, region: DetectRule['region'] = 'bottom', lines = 3): DetectRule =>
  ({ name, status, pattern, region, lines }) as DetectRule;

/** An input whose raw output counts its reads. */
function input(screen: string, raw: string, rules: DetectRule[]) {
  const reads = { n: 0 };
  const i: DetectInput = {
    screen,
    rules,
    get raw() {
      reads.n++;
      return raw;
    },
  };
  return { i, reads };
}

const screen = ['Welcome', '', 'thinking about it', '', '> ', ''].join('\n');

describe('classify', () => {
  it('decides by the first rule that matches its region, top, bottom or the whole screen', () => {
    const rules = [rule('banner', 'idle', '^Welcome$', 'top', 1), rule('spin', 'busy', 'thinking', 'bottom', 1), rule('box', 'idle', '^> ?$')];
    expect(classify(input(screen, '', rules).i)).toEqual({ status: 'idle', rule: 'banner', lines: ['Welcome'] });
    // The busy line is the second of the non-empty lines from the bottom: out of a 1-line bottom region.
    expect(classify(input(screen, '', rules.slice(1)).i)).toEqual({ status: 'idle', rule: 'box', lines: ['>'] });
    expect(classify(input(screen, '', [rule('spin', 'busy', 'thinking', 'bottom', 2)]).i).status).toBe('busy');
    expect(classify(input(screen, '', [rule('spin', 'busy', 'thinking', 'screen')]).i).status).toBe('busy');
  });

  it('reads the raw output only for a rule over it, and once however many rules look at it', () => {
    const screenOnly = input(screen, 'esc to interrupt', [rule('box', 'idle', '^> ?$'), rule('any', 'busy', 'nothing here', 'screen')]);
    expect(classify(screenOnly.i).status).toBe('idle');
    expect(doneEvidence(screenOnly.i)).toBeNull();
    expect(screenOnly.reads.n).toBe(0);

    const rawRules = [rule('r1', 'error', 'fatal', 'raw'), rule('r2', 'busy', 'esc to interrupt', 'raw'), rule('box', 'idle', '^> ?$')];
    const withRaw = input(screen, 'working\nesc to interrupt', rawRules);
    expect(classify(withRaw.i)).toEqual({ status: 'busy', rule: 'r2', lines: ['esc to interrupt'] });
    expect(withRaw.reads.n).toBe(1);
  });

  it('a limit whose reset passed reads as the other rules say, without reading the raw output for it', () => {
    const limitScreen = ['You have hit your usage limit', '> '].join('\n');
    const rules = [rule('limit', 'limited', 'usage limit', 'screen'), rule('box', 'idle', '^> ?$')];
    const { i, reads } = input(limitScreen, '', rules);
    expect(classifyAfterLimit(i, null).status).toBe('limited');
    expect(classifyAfterLimit(i, 'You have hit your usage limit')).toEqual({ status: 'idle', rule: 'box', lines: ['>'] });
    expect(reads.n).toBe(0);
  });
});
