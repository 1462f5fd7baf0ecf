// Reading a CLI's version and placing it against the versions a profile was checked against.
import { describe, expect, it } from 'vitest';
import { checkedVersions, compareVersions, fitVersion, installedVersion, parseVersion } from '../../src/profiles/cli-version.js';

describe('parseVersion', () => {
  it('the first x.y.z in what the real CLIs print', () => {
    expect(parseVersion('2.1.330 (Claude Code)\n')).toBe('2.1.330');
    expect(parseVersion('codex-cli 0.169.0')).toBe('0.169.0');
    expect(parseVersion('0.24.4')).toBe('0.24.4');
    expect(parseVersion('v1.2.3-beta.1 build 9')).toBe('1.2.3-beta.1');
    expect(parseVersion('unknown option --version')).toBeNull();
  });
});

describe('compareVersions and checkedVersions', () => {
  it('numeric, not by text; a pre-release before its release', () => {
    expect(compareVersions('2.1.330', '2.1.197')).toBe(1);
    expect(compareVersions('0.9.0', '0.10.0')).toBe(-1);
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBe(-1);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
  });
  it('versions and the older single version, oldest first, once each', () => {
    expect(checkedVersions({ versions: ['2.1.330', '2.1.197'], version: '2.1.197' })).toEqual(['2.1.197', '2.1.330']);
    expect(checkedVersions({ versions: [], version: undefined })).toEqual([]);
  });
});

describe('fitVersion', () => {
  const checked = ['2.1.197', '2.1.330'];
  it.each([
    ['2.1.330', 'checked', 'version 2.1.330, the newest one checked'],
    ['2.1.197', 'checked', 'version 2.1.197, checked (the newest checked is 2.1.330)'],
    ['2.1.331', 'newer', 'version 2.1.331, newer than the newest checked (2.1.330): `npm run canary` shows what changed'],
    ['2.0.1', 'older', 'version 2.0.1, older than the oldest checked (2.1.197): upgrading is safer'],
    ['2.1.200', 'between', 'version 2.1.200, between checked ones (2.1.197, 2.1.330)'],
  ] as const)('%s is %s', (v, fit, note) => {
    expect(fitVersion(v, checked)).toMatchObject({ installed: v, fit, note });
  });
  it('unknown and unchecked', () => {
    expect(fitVersion(null, checked, 'it crashed')).toMatchObject({ fit: 'unknown', note: 'version unknown (it crashed)' });
    expect(fitVersion('1.0.0', [])).toMatchObject({ fit: 'unchecked' });
  });
});

describe('installedVersion runs the CLI', () => {
  const profile = { versions: ['1.0.0'], version: undefined, versionArgs: ['-e', 'console.log("tool v1.2.0")'] };
  it('reads what it prints', async () => {
    expect(await installedVersion(process.execPath, profile, process.env)).toMatchObject({ installed: '1.2.0', fit: 'newer' });
  });
  it('names the command and what it printed when there is no version in it', async () => {
    const r = await installedVersion(process.execPath, { ...profile, versionArgs: ['-e', 'console.log("no idea")'] }, process.env);
    expect(r.fit).toBe('unknown');
    expect(r.note).toContain('printed "no idea"');
  });
  it('a command that is not there', async () => {
    const r = await installedVersion('/nonexistent/cli', profile, process.env);
    expect(r.fit).toBe('unknown');
    expect(r.note).toMatch(/nonexistent\/cli/);
  });
});
