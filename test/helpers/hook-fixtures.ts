// The payloads real CLIs sent their hooks (test/fixtures/hooks/<cli>-<version>-<event>[-what].json),
// and the install context a kit gets from the launcher, for the kits' unit tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HookInstallContext } from '../../src/clis/types.js';

export const HOOK_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hooks');

/** One saved payload, parsed. */
export function hookFixture(name: string): unknown {
  return JSON.parse(readFileSync(join(HOOK_FIXTURES, `${name}.json`), 'utf8')) as unknown;
}

/** The context a pane `t1` of a project at `root` gets, with the bridge's shell line as given. */
export function kitContext(root: string, version: string, bridgeShell?: string): HookInstallContext {
  const bridge = ['sh', '/opt/jaggers/bin/jaggers-hook', `${root}/.jaggers/spool`, 't1'];
  return { bridge, bridgeShell: bridgeShell ?? bridge.join(' '), dir: `${root}/.jaggers/hooks/t1`, cwd: root, version };
}
