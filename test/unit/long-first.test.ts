// The suite's file order (test/helpers/long-first.ts): the files measured longest first within each
// group, across projects, and vitest's own order for the rest.
import { describe, expect, it } from 'vitest';
import { LONG_FIRST, longFirst, longRank } from '../helpers/long-first.js';

const spec = (project: string, group: number, file: string) => ({
  moduleId: `/repo/${file}`,
  project: { name: project, config: { sequence: { groupOrder: group } } },
});
const names = (files: ReturnType<typeof spec>[]) => files.map((f) => `${f.project.name}:${f.moduleId.slice(6)}`);

describe('long files first', () => {
  it('ranks a listed file by its place and an unlisted one after them all', () => {
    expect(longRank('/repo/test/e2e/jaggers-real.test.ts')).toBe(0);
    expect(longRank('/repo/test/e2e/hooks-qwen.test.ts')).toBe(LONG_FIRST.length);
    expect(longRank('/repo/test/e2e/not-jaggers-real.test.ts'), 'a whole name, not its end').toBe(LONG_FIRST.length);
  });

  it("puts both projects' long files before every other file of their group, and keeps the groups in order", () => {
    // As vitest hands them over on a clean clone: by group, project after project, larger files first.
    const given = [
      spec('core', 0, 'test/unit/a.test.ts'),
      spec('core', 0, 'test/integration/inbox-crash.test.ts'),
      spec('e2e', 1, 'test/e2e/hooks-claude.test.ts'),
      spec('e2e', 1, 'test/e2e/jaggers-real.test.ts'),
      spec('e2e', 1, 'test/e2e/jaggers-headless.test.ts'),
      spec('e2e-screen', 1, 'test/e2e/jaggers-work-real.test.ts'),
      spec('e2e-screen', 1, 'test/e2e/jaggers-real.test.ts'),
      spec('e2e-screen', 1, 'test/e2e/dialogs-real.test.ts'),
    ];
    expect(names(longFirst(given))).toEqual([
      'core:test/integration/inbox-crash.test.ts',
      'core:test/unit/a.test.ts',
      'e2e:test/e2e/jaggers-real.test.ts',
      'e2e-screen:test/e2e/jaggers-real.test.ts',
      'e2e:test/e2e/jaggers-headless.test.ts',
      'e2e-screen:test/e2e/jaggers-work-real.test.ts',
      'e2e:test/e2e/hooks-claude.test.ts',
      'e2e-screen:test/e2e/dialogs-real.test.ts',
    ]);
  });
});
