import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/detect/classify.js';
import { parseProfile } from '../../src/profiles/load.js';
import { builtinProfilesDir } from '../../src/package-root.js';

const dir = path.join(import.meta.dirname, '..', 'fixtures', 'screens');
const profileFor: Record<string, string> = { 'fake-agent': 'demo', claude: 'claude', gemini: 'gemini', qwen: 'qwen', codex: 'codex' };
const load = (name: string) =>
  parseProfile(JSON.parse(readFileSync(path.join(builtinProfilesDir, `${name}.json`), 'utf8')), path.join(builtinProfilesDir, `${name}.json`));

/** What the classifier must say for each captured state (the machine turns quiet-after-busy into done). */
function expected(cli: string, state: string): string {
  if (state === 'waiting') return 'waiting_input';
  if (state === 'busy' || state === 'trap' || state === 'trap-summary-while-busy') return 'busy';
  // codex draws no spinner while a reply streams: the screen is quiet, the machine waits for its summary.
  if (state === 'busy-streaming') return cli === 'codex' ? 'idle' : 'busy';
  if (state === 'trap-idle-while-streaming') return 'idle'; // codex: the old summary scrolled out of the bottom lines
  if (state.startsWith('done') || state.startsWith('trap-')) return ['claude', 'codex', 'fake-agent'].includes(cli) ? 'done' : 'idle';
  if (state.startsWith('starting')) return 'starting';
  return state; // idle
}

const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.txt'))
  .map((f) => {
    const m = /^(fake-agent|claude|gemini|qwen|codex)-(\d[\w.]*)-(.+)\.txt$/.exec(f);
    if (!m) throw new Error(`fixture ${f} is not named <cli>-<version>-<state>.txt`);
    return { file: f, cli: m[1]!, version: m[2]!, state: m[3]! };
  });

describe('classifier over captured screens of every profile', () => {
  it('has fixtures of idle, busy, done and waiting for all five profiles, traps included', () => {
    for (const cli of Object.keys(profileFor)) {
      const states = fixtures.filter((f) => f.cli === cli).map((f) => f.state);
      expect(states, cli).toEqual(expect.arrayContaining(['idle', 'busy', 'done', 'waiting']));
      expect(
        states.some((s) => s.startsWith('trap')),
        `${cli} has a trap fixture`,
      ).toBe(true);
    }
  });

  it.each(fixtures)('$file', ({ file, cli, version, state }) => {
    const profile = load(profileFor[cli]!);
    expect(profile.version, `profile ${profile.name} was checked against ${cli} ${version}`).toBe(version);
    const screen = readFileSync(path.join(dir, file), 'utf8');
    const got = classify({ screen, raw: '', rules: profile.detect.rules });
    expect(got.status, `rule ${got.rule} matched ${JSON.stringify(got.lines)}`).toBe(expected(cli, state));
    expect(got.lines.length).toBeGreaterThan(0);
  });
});
