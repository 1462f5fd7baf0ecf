// A claude transcript read as it grows (src/clis/claude/entries-cache.ts) gives the same entries as the
// whole file parsed at once, however the writes cut it (mid-line, mid-character), and starts again when
// the file is replaced or cut shorter.
import { readdirSync, readFileSync } from 'node:fs';
import { appendFile, rename, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readClaudeEntries } from '../../src/clis/claude/entries-cache.js';
import { parseClaudeTranscript } from '../../src/clis/claude/entries.js';
import { replyInTranscript } from '../../src/clis/claude/transcript.js';
import { seededRandom } from '../helpers/seeded.js';
import { tempDirs } from '../helpers/temp-dir.js';

const temp = tempDirs('jaggers-claude-cache-');
const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/transcripts');
const claudeFixtures = readdirSync(fixtures).filter((f) => f.startsWith('claude-') && f.endsWith('.jsonl'));

describe('a claude transcript read as it grows', () => {
  it('has found fixtures to grow', () => expect(claudeFixtures.length).toBeGreaterThan(5));

  for (const name of claudeFixtures) {
    it(`${name}: the same entries as a whole parse after every write, cut anywhere`, async () => {
      const bytes = Buffer.concat([readFileSync(path.join(fixtures, name)), Buffer.from('{"type":"user","uuid":"ü-é-✓","message":{"content":"naïve ✓"}}\n')]);
      const file = path.join(await temp(), 'session.jsonl');
      await writeFile(file, '');
      const random = seededRandom(name.length * 7919);
      for (let at = 0; at < bytes.length;) {
        const n = 1 + Math.floor(random() * 700);
        await appendFile(file, bytes.subarray(at, at + n));
        at += n;
        const whole = parseClaudeTranscript(readFileSync(file, 'utf8')).entries;
        expect(await readClaudeEntries(file)).toEqual(whole);
      }
    });
  }

  it('starts again from the start of a file replaced (another inode) or cut shorter', async () => {
    const dir = await temp();
    const file = path.join(dir, 'session.jsonl');
    const a = readFileSync(path.join(fixtures, claudeFixtures[0]!));
    const b = readFileSync(path.join(fixtures, claudeFixtures[1]!));
    await writeFile(file, a);
    expect(await readClaudeEntries(file)).toEqual(parseClaudeTranscript(a.toString('utf8')).entries);
    await writeFile(path.join(dir, 'next'), b);
    await rename(path.join(dir, 'next'), file);
    expect(await readClaudeEntries(file)).toEqual(parseClaudeTranscript(b.toString('utf8')).entries);
    const cut = b.subarray(0, b.indexOf(0x0a) + 1);
    await truncate(file, cut.length);
    expect(await readClaudeEntries(file)).toEqual(parseClaudeTranscript(cut.toString('utf8')).entries);
    expect(await readClaudeEntries(path.join(dir, 'none.jsonl'))).toBeNull();
  });

  it('finds the reply in entries read as they grew, as in the whole file', async () => {
    const text = readFileSync(path.join(fixtures, 'claude-2.1.197-simple.jsonl'), 'utf8');
    const tag = /\[jg:[0-9a-f]+\]/.exec(text)?.[0];
    expect(tag).toBeDefined();
    const file = path.join(await temp(), 'session.jsonl');
    const half = Math.floor(text.length / 2);
    await writeFile(file, text.slice(0, half));
    await readClaudeEntries(file);
    await appendFile(file, text.slice(half));
    expect(replyInTranscript((await readClaudeEntries(file))!, tag!)).toEqual(replyInTranscript(parseClaudeTranscript(text).entries, tag!));
  });
});
