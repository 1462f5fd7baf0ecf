// A pane watcher stopped while a screen reading is in flight leaves no inotify watch behind (one left
// open kept `jaggers handoff` and the benchmark processes alive after they were done). tmux is a
// scripted transport here, so the reading can be held in flight deterministically.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PaneWatcher } from '../../src/panes/watcher.js';
import { ProfileSchema } from '../../src/profiles/schema.js';
import { ControlClient } from '../../src/tmux/control-client.js';
import type { Transport } from '../../src/tmux/transport.js';

const watches = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

describe('pane watcher stop', () => {
  it('a reading answered after stop() opens no state-file watch', async () => {
    // A process whose HOME has the fake agent's state folder: the watcher would watch that folder.
    const home = mkdtempSync(path.join(os.tmpdir(), 'watcher-stop-'));
    mkdirSync(path.join(home, '.fake-agent', 'state'), { recursive: true });
    const child = spawn('sleep', ['60'], { env: { ...process.env, HOME: home }, stdio: 'ignore' });
    cleanup.push(
      () => child.kill('SIGKILL'),
      () => rmSync(home, { recursive: true, force: true }),
    );

    let onData: (chunk: Buffer) => void = () => {};
    const written: string[] = [];
    const transport: Transport = { write: (t) => void written.push(t), onData: (cb) => void (onData = cb), onClose: () => {}, close: async () => {}, pid: 1 };
    const client = new ControlClient(transport);
    const watcher = new PaneWatcher(client);
    const profile = ProfileSchema.parse({
      name: 'p',
      command: 'c',
      detect: { stateFile: 'fake-agent', rules: [{ name: 'box', status: 'idle', pattern: '^> ', lines: 2 }] },
    });
    const before = watches();

    watcher.watch({ paneId: '%1', windowId: '@1', agent: 'a', profile, pid: child.pid! });
    expect(written.at(-1)).toMatch(/^capture-pane /);
    watcher.stop();
    // tmux answers the capture only now; the watcher would go on to read the state file of a pane it
    // no longer watches.
    onData(Buffer.from('%begin 1 1 1\n> \n%end 1 1 1\n'));

    // The same reading for a pane still watched, answered after it, does open one watch (so the count
    // can tell): once it is open, the stopped watcher's reading has had its turn too.
    const again = new PaneWatcher(client);
    again.watch({ paneId: '%2', windowId: '@2', agent: 'b', profile, pid: child.pid! });
    onData(Buffer.from('%begin 1 2 1\n> \n%end 1 2 1\n'));
    await expect.poll(watches).toBeGreaterThanOrEqual(before + 1);
    expect(watches()).toBe(before + 1);
    again.stop();
    await expect.poll(watches).toBe(before);
  });
});
