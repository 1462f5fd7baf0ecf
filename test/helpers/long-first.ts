// The suite's file order: its longest files first, so that with 2 workers no long file starts last and
// runs alone (BENCHMARKS.md, "The test suite's time"). vitest orders a group's files by the durations in
// its own cache, or, on a clean clone (CI) where there is none, by file size, project after project: the
// hooks-off `jaggers-real` then started after every other real-CLI file, and ran alone for 200 s, and
// `jaggers-headless`, a small file, started last. The list is of files measured longest
// (`node scripts/suite-time.mjs LOG`); a file missing from it only runs later, nothing else changes.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first, by worker time in a CI run (2026-11-28): the same file in two projects ranks the same. */
export const LONG_FIRST = [
  'test/e2e/jaggers-real.test.ts',
  'test/e2e/jaggers-headless.test.ts',
  'test/e2e/compact-real.test.ts',
  'test/e2e/worktrees-real.test.ts',
  'test/integration/inbox-crash.test.ts',
  'test/e2e/jaggers-work-real.test.ts',
  'test/integration/supervisor.test.ts',
  // Not beside inbox-crash at the core's start: both run many processes (CI: 110-131 s side by side,
  // 77 s beside lighter files).
  'test/integration/registry-concurrency.test.ts',
  'test/integration/remote-supervisor.test.ts',
  'test/integration/workflows.test.ts',
  'test/integration/sessions.test.ts',
  'test/browser/dashboard.test.ts',
  'test/e2e/jaggers-workflow-real.test.ts',
  'test/integration/jobs.test.ts',
  'test/integration/remote-workflow.test.ts',
  'test/e2e/hooks-gemini.test.ts',
  'test/integration/remote-home-work.test.ts',
];

/** Where `moduleId` (an absolute path) is in LONG_FIRST: its rank, or the list's length when it is not there. */
export function longRank(moduleId: string): number {
  const i = LONG_FIRST.findIndex((f) => moduleId.endsWith(`/${f}`));
  return i < 0 ? LONG_FIRST.length : i;
}

/** Within each group (`sequence.groupOrder`), the listed files first, longest first, across projects; the rest as vitest orders them. */
export function longFirst<T extends { moduleId: string; project: { config: { sequence: { groupOrder: number } } } }>(sorted: readonly T[]): T[] {
  // Array.prototype.sort is stable: equal ranks keep vitest's order.
  return [...sorted].sort((a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || longRank(a.moduleId) - longRank(b.moduleId));
}

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return longFirst(await super.sort(files));
  }
}
