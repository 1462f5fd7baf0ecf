import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PaneWatcher, type StatusChange } from '../../src/panes/watcher.js';
import { loadProfile } from '../../src/profiles/load.js';
import { listPanes } from '../../src/tmux/commands.js';
import { writeFakeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';
import path from 'node:path';

/** Collects a pane's states and waits for the next one wanted, failing with what it saw. */
function tracker(watcher: PaneWatcher) {
  const seen: StatusChange[] = [];
  const waiters: { status: string; resolve: (c: StatusChange) => void }[] = [];
  watcher.onChange((c) => {
    seen.push(c);
    for (const w of waiters.splice(0)) {
      if (w.status === c.status) w.resolve(c);
      else waiters.push(w);
    }
  });
  /** The first `status` reported at or after position `from` of the changes seen (default: from now). */
  const waitFor = (status: string, from = seen.length, timeoutMs = 15_000) =>
    new Promise<StatusChange>((resolve, reject) => {
      const already = seen.slice(from).find((c) => c.status === status);
      if (already) return resolve(already);
      const timer = setTimeout(() => reject(new Error(`no ${status} within ${timeoutMs} ms; saw ${seen.map((s) => s.status).join(' -> ')}`)), timeoutMs);
      waiters.push({ status, resolve: (c) => (clearTimeout(timer), resolve(c)) });
    });
  return { seen, waitFor, states: () => seen.map((s) => s.status) };
}

/** `up --no-wait`, then a watcher (on the rig's own control connection) on the agent `ag` with `profileName`. */
async function watchAg(rig: Rig, profileName: string) {
  const up = await rig.run(['up', '--no-wait']);
  expect(up.code).toBe(0);
  const c = await rig.control();
  const pane = (await listPanes(c, rig.session)).find((p) => p.agent === 'ag')!;
  const watcher = new PaneWatcher(c);
  const t = tracker(watcher);
  await watcher.start();
  const { profile } = await loadProfile(profileName, path.join(rig.root, '.jaggers'));
  watcher.watch({ paneId: pane.paneId, windowId: pane.windowId, agent: 'ag', profile, pid: pane.panePid });
  return { c, pane, watcher, t, profile };
}

describe('status detection on real tmux with the fake agent', () => {
  let rig: Rig;
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--boot-ms', '1200', '--think-ms', '600']);
    await writeProject(rig.root, { agents: [{ name: 'ag', profile: 'fake' }] });
  });
  afterEach(async () => rig.cleanup());

  it('goes through starting, idle, busy, done, waiting_input and exited', async () => {
    // The watcher starts right after the window, so the slow boot is seen from its first frames.
    const { pane, watcher, t, profile } = await watchAg(rig, 'fake');

    const idle = await t.waitFor('idle', 0);
    expect(t.states()[0]).toBe('starting');
    const starting = t.seen[0]!;
    // The boot lasted longer than the settle time and the machine stayed starting throughout.
    expect(idle.since - starting.since).toBeGreaterThan(profile.detect.settleMs);

    let mark = t.seen.length;
    await rig.run(['send', 'ag', 'hello detection']);
    await t.waitFor('busy', mark);
    const done = await t.waitFor('done', mark);
    expect(done.turns).toBe(1);
    expect(await rig.waitForScreen(pane.paneId, /You said: hello detection/)).toContain('✻ Worked for');

    mark = t.seen.length;
    await rig.run(['send', 'ag', '/menu']);
    const waiting = await t.waitFor('waiting_input', mark);
    // Either evidence may come first: the menu on screen, or the agent's own state file saying so.
    expect(waiting.rule).toMatch(/^(permission-menu|state-file .*\/\.fake-agent\/state\/\d+\.json)$/);
    expect(waiting.lines.join('\n')).toMatch(/Allow execution of|Waiting for user confirmation|status: waiting/);
    mark = t.seen.length;
    await rig.tmux(['send-keys', '-t', pane.paneId, '1']);
    await t.waitFor('done', mark);
    expect(await rig.waitForScreen(pane.paneId, /approved/)).toContain('approved');

    mark = t.seen.length;
    await rig.run(['send', 'ag', '/crash']);
    const exited = await t.waitFor('exited', mark);
    expect(exited.rule).toBe('pane-exited');
    const states = t.states();
    expect(states.slice(0, 2)).toEqual(['starting', 'idle']);
    expect(states).toEqual(expect.arrayContaining(['busy', 'done', 'waiting_input', 'exited']));
    // A finished turn never fell back to busy without new input: each busy follows a send.
    expect(states.filter((s) => s === 'done')).toHaveLength(2);
    watcher.stop();
  });

  it("while the state file says busy the pane's output is paused for the watcher, and the turn still ends done with its screen read", async () => {
    await writeFakeProfile(rig.root, 'slow', ['--think-ms', '1500']);
    await writeProject(rig.root, { agents: [{ name: 'ag', profile: 'slow' }] });
    const { c, pane, watcher, t } = await watchAg(rig, 'slow');
    await t.waitFor('idle', 0);
    let chunks = 0;
    let counting = false;
    c.onOutput((id) => {
      if (counting && id === pane.paneId) chunks++;
    });
    const mark = t.seen.length;
    await rig.run(['send', 'ag', 'take your time']);
    const busy = await t.waitFor('busy', mark);
    expect(busy.source).toBe('state-file');
    // The watcher sent its pause on this connection as it decided busy; the reply to a command sent now
    // comes after that pause and after all output queued before it. From then until the file says idle:
    // 1.5 s of a spinner redrawn every 80 ms, of which this connection gets nothing.
    await c.runOk(['display-message', '-p', 'after the pause']);
    counting = true;
    const done = await t.waitFor('done', mark);
    counting = false;
    expect(chunks, 'output chunks of the busy pane that reached the watcher').toBe(0);
    expect(done.turns).toBe(1);
    // Output flows again and the screen was read: it shows the reply.
    expect(watcher.lastScreen(pane.paneId)).toMatch(/You said: take your time[\s\S]*Worked for/);
    const mark2 = t.seen.length;
    await rig.run(['send', 'ag', 'and again']);
    expect((await t.waitFor('done', mark2)).turns).toBe(2);
    watcher.stop();
  });

  it('bounded work: busy frames that say so are not captured, and a reply quoting the spinner still ends its turn', async () => {
    // Screen only (no state file), so the output and the captures decide everything.
    const { builtinProfilesDir } = await import('../../src/package-root.js');
    const { readFile } = await import('node:fs/promises');
    const demo = JSON.parse(await readFile(path.join(builtinProfilesDir, 'demo.json'), 'utf8')) as { detect: Record<string, unknown> };
    await writeFakeProfile(rig.root, 'screen', ['--think-ms', '1200'], { detect: { ...demo.detect, stateFile: undefined } });
    await writeProject(rig.root, { agents: [{ name: 'ag', profile: 'screen' }] });
    const { pane, watcher, t, profile } = await watchAg(rig, 'screen');
    expect(profile.detect.stateFile).toBeUndefined();
    await t.waitFor('idle', 0);

    const perTurn: number[] = [];
    const prompts = ['first turn', 'second turn', 'the spinner looks like: ⠋ Thinking... (esc to cancel, 3s)'];
    for (const prompt of prompts) {
      const mark = t.seen.length;
      const before = watcher.captures;
      await rig.run(['send', 'ag', prompt]);
      await t.waitFor('busy', mark);
      const done = await t.waitFor('done', mark);
      expect(done.turns).toBe(perTurn.length + 1);
      perTurn.push(watcher.captures - before);
    }
    // 1.2 s of spinner is 15 frames (one every 80 ms). They need no capture: the typed prompt, the
    // turn's last screen and the look after the output stopped do (2-3 here; `send`'s own checks of the
    // input box can add a few on a loaded machine: 6 seen once in CI, 9 once with benchmarks running
    // beside it). Every frame captured would be 15+.
    for (const n of perTurn) expect(n, `captures per turn: ${perTurn.join(', ')}`).toBeLessThanOrEqual(10);
    expect(await rig.waitForScreen(pane.paneId, /Worked for/)).toContain('(esc to cancel, 3s)');
    watcher.stop();
  });

  it('the supervisor publishes states that status and why explain', async () => {
    await rig.run(['up']);
    await rig.waitForScreen('ag', /Type your message/);
    // The supervisor in window 0 publishes on the agent's window: wait for its option to say idle.
    const c = await rig.control();
    const published = async (state: string) => {
      for (;;) {
        const p = (await listPanes(c, rig.session)).find((x) => x.agent === 'ag')!;
        if (p.state === state) return p;
        await new Promise<void>((resolve) => {
          const off = c.onNotification((n, args) => {
            if (n === 'subscription-changed' && args[0] === 'jg-state') {
              off();
              resolve();
            }
          });
        });
      }
    };
    await c.runOk(['refresh-client', '-B', 'jg-state:@*:#{@jaggers_state}']);
    await published('idle');
    await rig.run(['send', 'ag', 'explain yourself']);
    await published('done');
    const st = JSON.parse((await rig.run(['status', 'ag', '--json'])).stdout);
    expect(st).toMatchObject({ agent: 'ag', state: 'done', from: 'supervisor' });
    const why = await rig.run(['why', 'ag']);
    expect(why.stdout).toMatch(/^ag is done since \d{4}-/);
    // The demo profile's hooks decide first (issue 27); the state file or the screen where a hook said nothing.
    expect(why.stdout).toMatch(/decided by: (hook Stop \(hook\)|turn-summary \(screen\)|state-file .* \(state-file\))/);
    const table = await rig.run(['status']);
    expect(table.stdout).toMatch(/ag\s+done/);
    // A person attached sees the state in the window list.
    expect(await rig.tmux(['display-message', '-p', '-t', `${rig.session}:ag`, '#{E:window-status-format}'])).toContain('ag(done)');
  });
});
