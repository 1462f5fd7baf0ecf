import { defineConfig } from 'vitest/config';
import LongFirstSequencer from './test/helpers/long-first.js';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own tmux server; two cores, so keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default'],
    // The longest files first in each group, across its projects (test/helpers/long-first.ts).
    sequence: { sequencer: LongFirstSequencer },
    // The real CLIs are heavy: their two projects run after the others, not beside them, and together,
    // so that their two longest files (jaggers-real with hooks on and off) run at the same time.
    projects: [
      {
        extends: true,
        test: {
          name: 'core',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/fuzz/**/*.test.ts', 'test/browser/**/*.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], sequence: { groupOrder: 1 } } },
      // The pane-turn tests on the real CLIs again with their native hooks off (issue 27): the screen
      // and state files must still carry every turn when a hook never fires. jaggers-real's turns (each
      // kind of turn end, a reply, an approval, a resume) and the dialogs; not the files whose items
      // are other kinds of work on the same runner (jobs, messages, workflow turns: one delivery, one
      // turn end, already read with hooks off here), nor jaggers-headless (no hook, screen or state
      // file). docs/testing.md.
      {
        extends: true,
        test: {
          name: 'e2e-screen',
          include: ['test/e2e/jaggers-real.test.ts', 'test/e2e/dialogs-real.test.ts'],
          env: { JAGGERS_E2E_HOOKS: 'off' },
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
