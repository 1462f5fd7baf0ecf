// tmux without a UTF-8 locale (LANG unset: a login over ssh, cron) writes a tab in `-F` output as `_`
// unless its client says it is UTF-8 (`-u`): jaggers' clients whose answers it reads pass `-u`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOneShot, windowZero } from '../../src/tmux/one-shot.js';
import { openCommandControl } from '../../src/tmux/connect.js';
import type { TmuxServer } from '../../src/tmux/server.js';
import { Rig } from '../helpers/rig.js';

describe('tmux clients without a UTF-8 locale', () => {
  let rig: Rig;
  let server: TmuxServer;
  beforeAll(async () => {
    rig = await Rig.create();
    const env = { ...rig.env };
    for (const k of ['LANG', 'LC_ALL', 'LC_CTYPE']) delete env[k];
    server = { ...rig.server, env };
    const r = await runOneShot(server, ['new-session', '-d', '-s', rig.session, '-n', 'jaggers', 'sleep 600']);
    expect(r.stderr).toBe('');
  }, 30_000);
  afterAll(async () => {
    await rig?.cleanup();
  }, 30_000);

  it('read tab-separated answers as they are, one-shot and in control mode', async () => {
    const w0 = await windowZero(server, rig.session);
    expect(w0).toMatchObject({ paneId: expect.stringMatching(/^%\d+$/), dead: false, start: expect.stringContaining('sleep 600') });
    const c = await openCommandControl(server, rig.session);
    try {
      const lines = await c.runOk(['list-panes', '-t', `=${rig.session}:0`, '-F', '#{pane_id}\t#{pane_dead}']);
      expect(lines[0]).toMatch(/^%\d+\t0$/);
    } finally {
      await c.close();
    }
  }, 30_000);
});
