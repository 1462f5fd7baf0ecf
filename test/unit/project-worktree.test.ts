// jaggers.json's worktree settings: what it takes, and the clear error a bad value gets.
import { describe, expect, it } from 'vitest';
import { parseProjectFile } from '../../src/project/project-file.js';

const parse = (v: unknown) => parseProjectFile(JSON.stringify(v), '/p/jaggers.json');

describe('jaggers.json worktree settings', () => {
  it('takes isolation and base on an agent, copy, setup and branchPrefix for the project', async () => {
    const p = await parse({
      worktree: { copy: ['.env'], setup: 'npm ci', branchPrefix: 'agents/' },
      agents: [{ name: 'coder', profile: 'claude', isolation: 'worktree', base: 'develop' }],
    });
    expect(p.worktree).toEqual({ copy: ['.env'], setup: 'npm ci', branchPrefix: 'agents/' });
    expect(p.agents[0]).toMatchObject({ isolation: 'worktree', base: 'develop' });
  });

  it.each([
    [{ worktree: { branchPrefix: 'bad..prefix/' } }, /worktree\.branchPrefix.*git takes in a branch name/],
    [{ worktree: { branchPrefix: 'has space/' } }, /worktree\.branchPrefix/],
    [{ worktree: { copy: 'x' } }, /worktree\.copy/],
    [{ worktree: { unknown: 1 } }, /worktree/],
    [{ isolationTypo: true }, /isolationTypo/],
  ])('refuses %j, naming the field and the file', async (extra, re) => {
    const err = await parse({ ...extra, agents: [{ name: 'a', profile: 'claude' }] }).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'E_PROJECT_INVALID' });
    expect((err as Error).message).toMatch(re);
    expect((err as Error).message).toContain('/p/jaggers.json');
  });

  it('refuses an unknown isolation', async () => {
    await expect(parse({ agents: [{ name: 'a', profile: 'claude', isolation: 'docker' }] })).rejects.toMatchObject({
      code: 'E_PROJECT_INVALID',
      message: expect.stringMatching(/agents\.0\.isolation|agents\[0\]\.isolation|isolation/),
    });
  });
});
