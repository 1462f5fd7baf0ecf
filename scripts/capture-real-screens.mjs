#!/usr/bin/env node
// Captures every state of each real agent CLI (installed by scripts/install-real-clis.sh) as tmux
// screen text into test/fixtures/screens/<cli>-<version>-<state>.txt.
//
//   node scripts/capture-real-screens.mjs              all four CLIs
//   node scripts/capture-real-screens.mjs claude codex only these
//
// The work is done by test/e2e/capture-screens.test.ts (it shares the e2e rig: stub model server,
// throwaway HOME, private tmux server); this only runs it with capturing switched on.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const known = ['claude', 'qwen', 'gemini', 'codex'];
const clis = process.argv.slice(2);
const unknown = clis.filter((c) => !known.includes(c));
if (unknown.length > 0) {
  console.error(`capture-real-screens: unknown CLI ${unknown.join(', ')} (expected ${known.join(', ')})`);
  process.exitCode = 2;
} else {
  const vitest = resolve(root, 'node_modules', '.bin', 'vitest');
  const result = spawnSync(vitest, ['run', 'test/e2e/capture-screens.test.ts'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, JAGGERS_CAPTURE_SCREENS: '1', JAGGERS_CAPTURE_CLIS: clis.join(',') },
  });
  if (result.error) console.error(`capture-real-screens: could not run vitest: ${result.error.message}`);
  process.exitCode = result.status ?? 1;
}
