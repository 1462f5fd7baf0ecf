import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReadFile, Rule } from '../../src/fake-agent/rules.js';
import { digest, findNonces, firstBodyLine, parseRules, pathCandidates, promptPreview, ruleReply } from '../../src/fake-agent/rules.js';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const noFiles: ReadFile = () => undefined;

function rulesFrom(data: unknown): Rule[] {
  const r = parseRules(data, 'rules.json');
  if (!r.ok) throw new Error(r.message);
  return r.rules;
}

describe('fake agent: rules', () => {
  it('validates the rules file and names the bad field', () => {
    expect(parseRules({}, 'r.json')).toEqual({ ok: false, message: 'r.json: must be a JSON array of {"match", "reply"}, got {} (object)' });
    expect(parseRules([{ match: 42, reply: 'x' }], 'r.json')).toEqual({ ok: false, message: 'r.json: [0].match must be a string, got 42 (number)' });
    expect(parseRules([{ match: 'a', reply: null }], 'r.json')).toMatchObject({ ok: false, message: expect.stringContaining('[0].reply') });
    expect(parseRules([{ match: '(', reply: 'x' }], 'r.json')).toMatchObject({ ok: false, message: expect.stringContaining('not a valid regular expression') });
  });

  it('first matching user rule wins, with $1.. groups, before the defaults', () => {
    const rules = rulesFrom([
      { match: '^plan (\\w+) for (\\w+)', reply: 'planning $1 for $2\nsecond line $$5 $&' },
      { match: 'plan', reply: 'never' },
    ]);
    expect(ruleReply('plan lunch for bob now', rules, noFiles)).toEqual(['planning lunch for bob', 'second line $5 plan lunch for bob']);
    expect(ruleReply('other', rules, noFiles)).toEqual(['You said: other']);
  });

  it('echoes the prompt on one line, at most 200 characters', () => {
    expect(ruleReply('a\nb\r\nc', [], noFiles)).toEqual(['You said: a b c']);
    const long = '世'.repeat(300);
    expect(ruleReply(long, [], noFiles)).toEqual([`You said: ${'世'.repeat(200)}`]);
  });

  it('reads a file named in the prompt and answers its first body line after front matter', () => {
    const content = '---\nfrom: a\nto: b\n---\n\n  \nDo the thing.\nmore\n';
    const files: Record<string, string> = { '.jaggers/handover/turn_2_ab12cd.md': content };
    const read: ReadFile = (p) => (p in files ? Buffer.from(files[p] as string) : undefined);
    const reply = ruleReply('Read .jaggers/handover/turn_2_ab12cd.md and do what it asks. [jg:7f3a]', [], read);
    expect(reply).toEqual([`read .jaggers/handover/turn_2_ab12cd.md (${Buffer.byteLength(content)} bytes, sha256:${sha(content)})`, 'answer: Do the thing.']);
  });

  it('tries tokens without quotes, @ and trailing punctuation', () => {
    expect(pathCandidates('see @notes.md, or "x/y.txt".')).toEqual(['see', '@notes.md,', 'notes.md', 'or', '"x/y.txt".', 'x/y.txt']);
  });

  it('front matter: only a leading block is skipped', () => {
    expect(firstBodyLine('hello\n---\nx')).toBe('hello');
    expect(firstBodyLine('---\na: 1\n---\n')).toBeUndefined();
    expect(firstBodyLine('\r\n\r\nfirst\r\n')).toBe('first');
  });

  it('finds nonces, hashes UTF-8 bytes, previews the first line', () => {
    expect(findNonces('x [jg:7f3a] y [jg:7f3a] [jg:b_2]')).toEqual(['[jg:7f3a]', '[jg:b_2]']);
    expect(digest('é👋')).toEqual({ bytes: 6, sha256: sha('é👋') });
    expect(promptPreview(`${'a'.repeat(150)}\nsecond`)).toBe('a'.repeat(150));
    // A long pointer keeps its nonce tag, at its end (the echo and the session are where jaggers looks for it).
    const pointer = `Read .jaggers/hosted/jgtest/.jaggers/handover/turn_1_${'f'.repeat(40)}.md and do what it asks. [jg:5c3ef201b968420d]`;
    expect(promptPreview(`${pointer}\n`)).toBe(pointer);
    expect(promptPreview('b'.repeat(5000))).toBe('b'.repeat(4096));
  });
});
