import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/detect/classify.js';
import { expectedStatus, parseScreenName } from '../../src/detect/drift.js';
import { checkedVersions, compareVersions } from '../../src/profiles/cli-version.js';
import { parseProfile } from '../../src/profiles/load.js';
import { builtinProfilesDir } from '../../src/package-root.js';

const dir = path.join(import.meta.dirname, '..', 'fixtures', 'screens');
const profileFor: Record<string, string> = {
  'fake-agent': 'demo',
  claude: 'claude',
  gemini: 'gemini',
  qwen: 'qwen',
  codex: 'codex',
  opencode: 'opencode',
  copilot: 'copilot',
};
const load = (name: string) =>
  parseProfile(JSON.parse(readFileSync(path.join(builtinProfilesDir, `${name}.json`), 'utf8')), path.join(builtinProfilesDir, `${name}.json`));

const fixtures = readdirSync(dir)
  .filter((f) => f.endsWith('.txt'))
  .map((f) => {
    const m = parseScreenName(f);
    if (!m || !(m.cli in profileFor)) throw new Error(`fixture ${f} is not named <cli>-<version>-<state>.txt for a shipped profile`);
    return { file: f, ...m };
  });

describe('classifier over captured screens of every profile', () => {
  it('has fixtures of idle, busy, done and waiting for every shipped profile, traps included', () => {
    for (const cli of Object.keys(profileFor)) {
      const states = fixtures.filter((f) => f.cli === cli).map((f) => f.state);
      expect(states, cli).toEqual(expect.arrayContaining(['idle', 'busy', 'done', 'waiting']));
      expect(
        states.some((s) => s.startsWith('trap')),
        `${cli} has a trap fixture`,
      ).toBe(true);
    }
  });

  it('each version a profile says it was checked against has its fixtures, and no fixture is of a version the profile does not name', () => {
    for (const [cli, name] of Object.entries(profileFor)) {
      const versions = new Set(fixtures.filter((f) => f.cli === cli).map((f) => f.version));
      expect(checkedVersions(load(name)), cli).toEqual([...versions].sort(compareVersions));
      for (const v of versions) {
        const states = fixtures.filter((f) => f.cli === cli && f.version === v).map((f) => f.state);
        expect(states, `${cli} ${v}`).toEqual(expect.arrayContaining(['idle', 'busy', 'done', 'waiting']));
      }
    }
  });

  it.each(fixtures)('$file', ({ file, cli, state }) => {
    const profile = load(profileFor[cli]!);
    const screen = readFileSync(path.join(dir, file), 'utf8');
    const got = classify({ screen, raw: '', rules: profile.detect.rules });
    const want = expectedStatus(profile, state);
    expect(got.status, `rule ${got.rule} matched ${JSON.stringify(got.lines)}`).toBe(want);
    // A rule decided, on lines of this screen (a starting screen no rule knows reads as unknown).
    if (want !== 'unknown') expect(got.lines.length).toBeGreaterThan(0);
    else expect(got.rule).toBeNull();
  });
});
