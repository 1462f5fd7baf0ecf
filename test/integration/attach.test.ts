import path from 'node:path';
import pty from 'node-pty';
import stripAnsi from 'strip-ansi';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listPanes } from '../../src/tmux/commands.js';
import { packageRoot } from '../../src/package-root.js';
import { catProfile, writeFakeProfile, writeProfile, writeProject } from '../helpers/profiles.js';
import { Rig } from '../helpers/rig.js';

/** A person's terminal: `jaggers attach` in a real pseudo-terminal of another size than the agents'. */
function openTerminal(rig: Rig, args: string[]) {
  const term = pty.spawn(process.execPath, [path.join(packageRoot, 'bin', 'jaggers.js'), ...args], {
    name: 'xterm-256color',
    cols: 100,
    rows: 30,
    cwd: rig.root,
    env: rig.env as Record<string, string>,
  });
  let seen = '';
  const exited = new Promise<number>((resolve) => term.onExit((e) => resolve(e.exitCode)));
  term.onData((d) => (seen += d));
  // The text a person sees: tmux may split a line with cursor moves and attributes.
  const shows = (re: RegExp) => re.test(seen) || re.test(stripAnsi(seen));
  const waitFor = (re: RegExp, timeoutMs = 15_000) =>
    new Promise<void>((resolve, reject) => {
      if (shows(re)) return resolve();
      const timer = setTimeout(() => reject(new Error(`attach never showed ${re}; it showed:\n${seen.slice(-2000)}`)), timeoutMs);
      const sub = term.onData(() => {
        if (shows(re)) {
          clearTimeout(timer);
          sub.dispose();
          resolve();
        }
      });
    });
  /** The exit code once attach has ended; fails after 15 s with what the terminal showed. */
  const exitedWithin = (timeoutMs = 15_000) =>
    Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`attach did not exit; it showed:\n${stripAnsi(seen).slice(-2000)}`)), timeoutMs).unref(),
      ),
    ]);
  /**
   * Detach as a person does (prefix C-b, then d) and wait for attach to end. Once in ten runs on a loaded
   * machine tmux 3.3a let the first C-b d go by in this pseudo-terminal (which answers none of the
   * queries tmux sends a new client); a person would press it again, and so does this, once, after 5 s.
   */
  const detach = async () => {
    term.write('\x02d');
    const first = await exitedWithin(5000).catch(() => null);
    if (first !== null) return first;
    term.write('\x02d');
    return exitedWithin();
  };
  return { term, waitFor, exited: exitedWithin, detach };
}

describe('jaggers attach from a real terminal', () => {
  let rig: Rig;
  const killers: (() => void)[] = [];
  beforeEach(async () => {
    rig = await Rig.create();
    await writeProfile(rig.root, 'echo', { ...catProfile, args: ['-c', 'echo agent-alpha-ready; exec cat'] });
    await writeProject(rig.root, { agents: [{ name: 'alpha', profile: 'echo' }] });
    expect((await rig.run(['up'])).code).toBe(0);
    await rig.waitForScreen('alpha', /agent-alpha-ready/);
  });
  afterEach(async () => {
    for (const k of killers.splice(0)) k();
    await rig.cleanup();
  });

  it('shows the agent window, keeps its fixed size, and detaches cleanly', async () => {
    const t = openTerminal(rig, ['attach', 'alpha']);
    killers.push(() => t.term.kill('SIGKILL'));
    await t.waitFor(/agent-alpha-ready/);
    const c = await rig.control();
    const clients = await c.runOk(['list-clients', '-F', '#{client_control_mode} #{client_width}x#{client_height} #{client_readonly}']);
    expect(clients.filter((l) => l.startsWith('0 '))).toEqual(['0 100x30 0']);
    const alpha = (await listPanes(c, rig.session)).find((p) => p.agent === 'alpha')!;
    expect([alpha.width, alpha.height]).toEqual([200, 50]); // the viewer's 100x30 did not reflow the agent

    t.term.write('typed-by-a-person\r');
    await rig.waitForScreen('alpha', /typed-by-a-person\n.*typed-by-a-person/s);
    expect(await t.detach()).toBe(0);
  });

  it('--read-only lets a person watch but not type', async () => {
    const t = openTerminal(rig, ['attach', 'alpha', '--read-only']);
    killers.push(() => t.term.kill('SIGKILL'));
    await t.waitFor(/agent-alpha-ready/);
    const c = await rig.control();
    const clients = await c.runOk(['list-clients', '-F', '#{client_control_mode} #{client_readonly}']);
    expect(clients.filter((l) => l.startsWith('0 '))).toEqual(['0 1']);
    t.term.write('ignored-text\r');
    // Prove the keys were dropped: a later line from jaggers arrives while the ignored text never does.
    await rig.run(['send', 'alpha', 'marker-after']);
    const screen = await rig.waitForScreen('alpha', /marker-after\n.*marker-after/s);
    expect(screen).not.toContain('ignored-text');
    expect(await t.detach()).toBe(0);
  });
});

describe('a person attached is told when an agent waits for them', () => {
  let rig: Rig;
  const killers: (() => void)[] = [];
  beforeEach(async () => {
    rig = await Rig.create();
    await writeFakeProfile(rig.root, 'fake', ['--think-ms', '100']);
    await writeProject(rig.root, {
      agents: [
        { name: 'alpha', profile: 'fake' },
        { name: 'beta', profile: 'fake' },
      ],
    });
    expect((await rig.run(['up'])).code).toBe(0);
  });
  afterEach(async () => {
    for (const k of killers.splice(0)) k();
    await rig.cleanup();
  });

  it('a message on their status line names the agent and its question; the window is marked', async () => {
    const t = openTerminal(rig, ['attach', 'beta']);
    killers.push(() => t.term.kill('SIGKILL'));
    await t.waitFor(/Type your message/);
    expect((await rig.run(['send', 'alpha', '/menu'])).code).toBe(0);
    const log = async () => (await rig.run(['logs'])).stdout;
    await t.waitFor(/jaggers: alpha waits for you: .*Allow execution/, 30_000).catch(async (e: Error) => {
      throw new Error(`${e.message}\nthe supervisor's log:\n${await log()}`);
    });
    // The window list in their status line marks alpha's window: `!` before its name.
    await t.waitFor(/!1:alpha\(waiting_input\)/, 30_000);
  });
});
