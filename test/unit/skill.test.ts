// `jaggers skill install`: one copy after two installs, --remove gives each file back byte for byte,
// bad markers and a SKILL.md jaggers did not write are refused with the file untouched.
import { mkdtemp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAgents, skillInstall, withoutSection, withSection } from '../../src/commands/skill.js';
import { cliEntry } from '../../src/package-root.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'jg-skill-'));
});
afterEach(async () => rm(root, { recursive: true, force: true }));

const read = (rel: string) => readFile(path.join(root, rel), 'utf8');
const exists = (rel: string) =>
  stat(path.join(root, rel)).then(
    () => true,
    () => false,
  );
const count = (text: string, s: string) => text.split(s).length - 1;

describe('skill install', () => {
  it('installs all four; a second install leaves one copy; --remove deletes what it created', async () => {
    const first = await skillInstall(root, parseAgents(undefined), false);
    expect(first.map((c) => [c.agent, c.action])).toEqual([
      ['claude', 'installed'],
      ['gemini', 'installed'],
      ['qwen', 'installed'],
      ['codex', 'installed'],
    ]);
    const skillMd = await read('.claude/skills/jaggers/SKILL.md');
    expect(skillMd).toMatch(/^---\nname: jaggers\ndescription: ".+"\n---\n/);
    expect(skillMd).toMatch(/-r latest/);
    const again = await skillInstall(root, parseAgents(undefined), false);
    expect(again.map((c) => c.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    for (const f of ['GEMINI.md', 'QWEN.md', 'AGENTS.md']) expect(count(await read(f), '<!-- jaggers:begin')).toBe(1);
    const gone = await skillInstall(root, parseAgents(undefined), true);
    expect(gone.map((c) => c.action)).toEqual(['removed', 'removed', 'removed', 'removed']);
    for (const f of ['GEMINI.md', 'QWEN.md', 'AGENTS.md', '.claude']) expect(await exists(f)).toBe(false);
    expect((await skillInstall(root, ['codex'], true))[0]!.action).toBe('not installed');
  });

  it.each([
    ['with a trailing newline', '# Project\n\nUse tabs.\n'],
    ['without a trailing newline', '# Project\n\nUse tabs.'],
    ['with CRLF line ends', '# Project\r\n\r\nUse tabs. ✓ ünïcödé\r\n'],
    ['empty', ''],
  ])('--remove gives an existing AGENTS.md back byte for byte (%s)', async (_what, before) => {
    await writeFile(path.join(root, 'AGENTS.md'), before);
    await skillInstall(root, ['codex'], false);
    const installed = await read('AGENTS.md');
    expect(installed.startsWith(before)).toBe(true);
    if (before.includes('\r\n')) expect(installed.replace(/\r\n/g, '')).not.toContain('\n');
    await skillInstall(root, ['codex'], false);
    expect(await read('AGENTS.md')).toBe(installed);
    await skillInstall(root, ['codex'], true);
    expect(await read('AGENTS.md')).toBe(before);
  });

  it('text written after the section is kept; the section is replaced in place', () => {
    const mid = withSection('before\n', 'F') + 'after\n';
    const stale = mid.replace('Working with other agents', 'An old guide');
    const re = withSection(stale, 'F');
    expect(re).toBe(mid);
    expect(withoutSection(re, 'F')).toBe('before\nafter\n');
  });

  it('bad markers and a SKILL.md jaggers did not write are refused, the file untouched', async () => {
    const twice = '<!-- jaggers:begin sep=0 -->\nx\n<!-- jaggers:end -->\n<!-- jaggers:begin sep=0 -->\n';
    await writeFile(path.join(root, 'GEMINI.md'), twice);
    await expect(skillInstall(root, ['gemini'], false)).rejects.toThrow(/GEMINI\.md:4: a second <!-- jaggers:begin --> marker/);
    expect(await read('GEMINI.md')).toBe(twice);
    const open = 'a\n<!-- jaggers:begin sep=1 -->\nb\n';
    await writeFile(path.join(root, 'QWEN.md'), open);
    await expect(skillInstall(root, ['qwen'], true)).rejects.toThrow(/QWEN\.md:2: the jaggers markers are not a pair/);
    expect(await read('QWEN.md')).toBe(open);
    await mkdir(path.join(root, '.claude/skills/jaggers'), { recursive: true });
    await writeFile(path.join(root, '.claude/skills/jaggers/SKILL.md'), 'my own skill\n');
    await expect(skillInstall(root, ['claude'], false)).rejects.toThrow(/SKILL\.md: not written by jaggers/);
    await expect(skillInstall(root, ['claude'], true)).rejects.toThrow(/not written by jaggers/);
    expect(await read('.claude/skills/jaggers/SKILL.md')).toBe('my own skill\n');
    expect(() => parseAgents('claude,cursor')).toThrow('skill: --agent "cursor" is not one of claude, gemini, qwen, codex');
  });

  it('the command installs and removes through the CLI', async () => {
    await writeFile(path.join(root, 'AGENTS.md'), 'keep me\n');
    const env = { ...process.env, HOME: root };
    const r = await execa(process.execPath, [cliEntry, '--project', root, 'skill', 'install'], { env, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toEqual(['installed .claude/skills/jaggers/SKILL.md', 'installed GEMINI.md', 'installed QWEN.md', 'installed AGENTS.md']);
    const x = await execa(process.execPath, [cliEntry, '--project', root, 'skill', 'install', '--remove', '--agent', 'codex'], { env, reject: false });
    expect(x.stdout).toBe('removed AGENTS.md (section)');
    expect(await read('AGENTS.md')).toBe('keep me\n');
    const bad = await execa(process.execPath, [cliEntry, '--project', root, 'skill', 'install', '--agent', 'vim'], { env, reject: false });
    expect([bad.exitCode !== 0, bad.stderr]).toEqual([true, expect.stringMatching(/"vim" is not one of/)]);
  });
});
