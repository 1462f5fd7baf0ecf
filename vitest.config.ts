import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own tmux server; two cores, so keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default'],
    // The real CLIs are heavy: their suite runs after the others, not beside them.
    projects: [
      {
        extends: true,
        test: { name: 'core', include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/fuzz/**/*.test.ts'], sequence: { groupOrder: 0 } },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
