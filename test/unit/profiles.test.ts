import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAllProfiles, loadProfile, parseProfile } from '../../src/profiles/load.js';
import { writeProfile } from '../helpers/profiles.js';
import { tempDirs } from '../helpers/temp-dir.js';

const tempDir = tempDirs('jgp-');

describe('profiles', () => {
  it('ships valid built-in profiles for the six CLIs and the demo agent', async () => {
    const dir = await tempDir();
    const all = await checkAllProfiles(path.join(dir, '.jaggers'));
    expect(all.map((p) => p.name)).toEqual(['claude', 'codex', 'copilot', 'demo', 'gemini', 'opencode', 'qwen']);
    expect(all.filter((p) => p.error)).toEqual([]);
    const claude = (await loadProfile('claude', path.join(dir, '.jaggers'))).profile;
    expect(claude.session).toMatchObject({ pin: 'pre-generated', startArgs: ['--session-id', '{sessionId}'], resumeArgs: ['--resume', '{sessionId}'] });
    expect((await loadProfile('codex', path.join(dir, '.jaggers'))).profile.session.pin).toBe('discovered');
    const opencode = (await loadProfile('opencode', path.join(dir, '.jaggers'))).profile;
    expect(opencode.session).toMatchObject({ pin: 'discovered', discover: 'opencode-session-list', resumeArgs: ['--session', '{sessionId}'] });
    // Its sidebar opens beside the conversation on a screen wider than 120 columns.
    expect(opencode.size).toEqual({ width: 120, height: 50 });
    // copilot's --resume takes an optional value: the id goes in the same argument.
    const copilot = (await loadProfile('copilot', path.join(dir, '.jaggers'))).profile;
    expect(copilot.session).toMatchObject({ pin: 'pre-generated', startArgs: ['--session-id', '{sessionId}'], resumeArgs: ['--resume={sessionId}'] });
  });

  it('lets a project profile override a built-in by name', async () => {
    const root = await tempDir();
    const file = await writeProfile(root, 'claude', { command: 'my-claude' });
    const got = await loadProfile('claude', path.join(root, '.jaggers'));
    expect(got).toMatchObject({ file, builtin: false, profile: { command: 'my-claude', args: [] } });
  });

  it('names the file, field and bad value', () => {
    expect(() => parseProfile({ name: 'x', command: 'c', detect: { rules: [{ name: 'r', status: 'busy', pattern: '(' }] } }, '/p/x.json')).toThrow(
      '/p/x.json: field `detect.rules[0].pattern`: must be a valid regular expression, got "(" (string)',
    );
    expect(() => parseProfile({ name: 'y', command: 'c' }, '/p/x.json')).toThrow(/field `name` must match the file name "x", got "y"/);
    expect(() => parseProfile({ name: 'x', command: 'c', colour: 'red' }, '/p/x.json')).toThrow(/Unrecognized key.*colour/);
  });
});
