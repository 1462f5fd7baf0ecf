// The rig's screen waits on a real private tmux server, with sh standing in for a CLI: a pane whose
// program ended fails the wait at once with how it ended and its last output, a wait
// that times out says what the program and its children were doing, and a failed wait of the rig names
// the stub's last requests.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForScreen } from './drive.js';
import { describePane, parsePaneStatus, parseStat } from './pane-diagnosis.js';
import { spawn } from 'node:child_process';
import { createPrivateTmux, killGroup, processStart, SESSION, type PrivateTmux } from './private-tmux.js';
import { withStubRequests } from './rig.js';
import { startStubServer } from './stub-server.js';

const servers: PrivateTmux[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) await s.dispose();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function pane(script: string): Promise<PrivateTmux> {
  const cwd = mkdtempSync(join(tmpdir(), 'jaggers-drive-'));
  dirs.push(cwd);
  const t = createPrivateTmux('drive');
  servers.push(t);
  await t.start({
    command: ['sh', '-c', script],
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, TERM: 'xterm-256color' },
    cols: 80,
    rows: 10,
  });
  return t;
}

/** The rejection of `p`, and how long it took. */
async function failure(p: Promise<unknown>): Promise<{ message: string; ms: number }> {
  const t0 = Date.now();
  const err = await p.then(
    () => new Error('the wait succeeded'),
    (e: unknown) => e as Error,
  );
  return { message: err.message, ms: Date.now() - t0 };
}

describe('waitForScreen on a pane whose program ended', () => {
  it('fails at once with the exit status, not at its deadline', async () => {
    // The program ends only once its line is on screen: output written just before a pty closes can be
    // lost under load (CI saw the dead pane without it).
    const t = await pane('echo Error: no such session; read _; exit 3');
    await waitForScreen(t, /Error: no such session/);
    await t.run(['send-keys', '-t', SESSION, 'Enter']);
    const { message, ms } = await failure(waitForScreen(t, /never shown/, { timeoutMs: 20_000, what: 'the idle screen' }));
    expect(message).toMatch(/^gave up after \d+ ms waiting for the idle screen: the pane's program \(pid \d+\) exited with status 3; its last output:\n/);
    // Its last output, from the screen or (once tmux has written `Pane is dead` under it) the history.
    expect(message).toMatch(/its last output:\n[\s\S]*Error: no such session/);
    expect(ms).toBeLessThan(10_000);
  });

  it('names the signal that killed it', async () => {
    const t = await pane('kill -TERM $$');
    const { message } = await failure(waitForScreen(t, /never shown/, { timeoutMs: 20_000 }));
    expect(message).toContain('killed by signal 15 (SIGTERM)');
  });

  it('still matches the screen it left', async () => {
    const t = await pane('exit 0');
    await expect(waitForScreen(t, /Pane is dead \(status 0/, { timeoutMs: 20_000 })).resolves.toMatch(/Pane is dead/);
  });
});

describe('waitForScreen on a pane whose program runs', () => {
  it('times out with the state, wait channel and CPU time of the program and its children', async () => {
    const t = await pane('echo started; sleep 600; echo never');
    await waitForScreen(t, /started/);
    const { message } = await failure(waitForScreen(t, /never shown/, { timeoutMs: 1_500 }));
    expect(message).toMatch(/^timed out after 1500 ms waiting for \/never shown\/; the pane's program runs \(load average [\d. /]+\):\n/);
    expect(message).toMatch(/pid \d+ \(parent \d+\) state S wchan \S+ cpu \d+ ms age [\d.]+ s: sh -c echo started; sleep 600; echo never/);
    expect(message).toMatch(/pid \d+ \(parent \d+\) state S wchan \S+ cpu \d+ ms age [\d.]+ s: sleep 600/);
    expect(message).toMatch(/\n {4}thread \d+ sh: state S wchan \S+ cpu \d+ ms\n/);
    expect(message).toMatch(/the tmux server:\n {2}pid \d+ \(parent \d+\) state [RS] wchan \S+ cpu \d+ ms age [\d.]+ s: tmux -L jaggers-e2e-drive-/);
    expect(message).toMatch(/the screen was:\nstarted$/);
  });
});

describe('pane-diagnosis', () => {
  it("reads /proc/<pid>/stat past a command name with spaces and parentheses, and tmux's pane status", () => {
    const line = '4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 12 3 0 0 20 0 1 0 98765 1000 10';
    expect(parseStat(line)).toEqual({ state: 'S', ppid: 1, utime: 12, stime: 3, start: 98765 });
    expect(parsePaneStatus('1 77  9 70')).toEqual({ dead: true, pid: 77, status: undefined, signal: 9, serverPid: 70 });
    expect(parsePaneStatus('0 78   70')).toEqual({ dead: false, pid: 78, status: undefined, signal: undefined, serverPid: 70 });
    expect(describePane(undefined)).toContain('the pane is gone');
    // Dead, and tmux has not said how yet: what /proc says of the process, if it is still there.
    expect(describePane({ dead: true, pid: 2 ** 22 + 1 })).toBe(`the pane's program (pid ${2 ** 22 + 1}) exited; tmux does not say how`);
    expect(describePane({ dead: true, pid: process.pid })).toMatch(
      /exited; tmux does not say how, and it is still there:\n {2}pid \d+ \(parent \d+\) state [RS] /,
    );
  });
});

describe("the rig's failed wait", () => {
  it("adds the stub's last requests, timed from the CLI's start, answered or not", async () => {
    const stub = await startStubServer();
    try {
      const started = Date.now();
      await fetch(`${stub.baseUrl}/`, { method: 'HEAD' });
      const err = withStubRequests(new Error('timed out'), stub, started) as Error;
      expect(err.message).toMatch(
        /^timed out\nthe stub got 1 request\(s\) in all; the last 1, timed from the CLI's start:\n {2}#1 HEAD \/ \(aux\) at \+\d+ ms, answered \d+ ms later$/,
      );
      expect((withStubRequests(new Error('x'), { ...stub, requests: [] }, started) as Error).message).toBe('x\nthe stub got 0 request(s) in all');
    } finally {
      await stub.close();
    }
  });
});

describe('killGroup', () => {
  it("leaves alone a group whose leader's pid now belongs to a process started at another time (pids wrap)", async () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    const gone = new Promise((r) => child.once('exit', r));
    try {
      const started = processStart(pid);
      expect(started).toMatch(/^\d+$/);
      // As if `pid` had been recorded for a pane long gone and handed to this process since.
      await killGroup(pid, 200, String(Number(started) - 1));
      expect(processStart(pid), 'the other process still runs').toBe(started);
      await killGroup(pid, 200, started);
      await gone;
      expect(processStart(pid)).toBeNull();
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
});
