// Death tracking on scripted tmux connections: tmux's jaggers-dead subscription, window closes and a
// fresh list-panes each say a pane died or runs again, and the tracker tells the watcher in order.
import { afterEach, describe, expect, it } from 'vitest';
import { DeathTracker } from '../../src/panes/death-tracker.js';
import { fakeControl, type FakeControl } from '../helpers/fake-control.js';

const flush = () => new Promise<void>((r) => setImmediate(r));

const opened: FakeControl[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

function setup(zombies: Record<number, number> = {}) {
  const events = fakeControl();
  const cmd = fakeControl();
  opened.push(events, cmd);
  const deaths = new DeathTracker(events.client, cmd.client, async (pid) => zombies[pid] ?? null);
  events.client.onNotification((name, args) => deaths.notification(name, args));
  const log: string[] = [];
  const add = (paneId: string, windowId: string, pid: number | null = 100) => {
    const state = { held: false, pid };
    const life = deaths.add(paneId, windowId, {
      held: () => state.held,
      pid: () => state.pid,
      dying: () => log.push(`${paneId} dying`),
      exited: (s) => log.push(`${paneId} exited ${s}`),
      placeholder: (p) => log.push(`${paneId} placeholder ${p}`),
      restarting: () => log.push(`${paneId} restarting`),
      restarted: (p) => {
        if (p) state.pid = p;
        log.push(`${paneId} restarted ${p}`);
      },
    });
    return { life, state };
  };
  const changed = (paneId: string, dead: 0 | 1) => events.notify(`%subscription-changed jaggers-dead $1 @1 1 ${paneId} : ${dead}`);
  return { events, cmd, deaths, log, add, changed };
}

describe('death tracker', () => {
  it('start subscribes to pane_dead of every pane on the output connection', async () => {
    const { events, cmd, deaths } = setup();
    const started = deaths.start();
    expect(events.written).toEqual(["refresh-client -B 'jaggers-dead:%*:#{pane_dead}'"]);
    expect(cmd.written).toEqual([]);
    events.reply();
    await started;
  });

  it('a death from the subscription: the flow is resumed at once, then the exit status tmux gives is reported', async () => {
    const { cmd, log, add, changed } = setup();
    const { life } = add('%1', '@1');
    changed('%1', 1);
    expect(life.dead).toBe(true);
    expect(log).toEqual(['%1 dying']);
    expect(cmd.written).toEqual(["display-message -p -t %1 '#{pane_dead_status}'"]);
    // Told again (tmux repeats itself): nothing more.
    changed('%1', 1);
    cmd.reply(['3']);
    await flush();
    expect(log).toEqual(['%1 dying', '%1 exited 3']);
    expect(cmd.written).toHaveLength(1);
  });

  it('an exit status tmux cannot give is null', async () => {
    const { cmd, log, add, changed } = setup();
    add('%1', '@1');
    changed('%1', 1);
    cmd.reply([''], false);
    await flush();
    expect(log).toEqual(['%1 dying', '%1 exited null']);
  });

  it('tmux without the status (it never reaped the process): the zombie process says it', async () => {
    const { cmd, log, add, changed } = setup({ 100: 3 });
    add('%1', '@1', 100);
    add('%2', '@2', 200);
    changed('%1', 1);
    cmd.reply([''], true);
    await flush();
    changed('%2', 1);
    cmd.reply([''], true);
    await flush();
    expect(log).toEqual(['%1 dying', '%1 exited 3', '%2 dying', '%2 exited null']);
  });

  it('a dead pane that lives again is restarted, with its new pid asked of tmux', async () => {
    const { cmd, log, add, changed } = setup();
    const { life, state } = add('%1', '@1');
    changed('%1', 1);
    cmd.reply(['0']);
    await flush();
    changed('%1', 0);
    expect(life.dead).toBe(false);
    expect(log.slice(2)).toEqual(['%1 restarting']);
    expect(cmd.written[1]).toBe("display-message -p -t %1 '#{pane_pid}'");
    cmd.reply(['4242']);
    await flush();
    expect(log.slice(2)).toEqual(['%1 restarting', '%1 restarted 4242']);
    expect(state.pid).toBe(4242);
    // A live pane reported live: nothing.
    changed('%1', 0);
    expect(log).toHaveLength(4);
  });

  it('a closed window: its live panes exit (no status), others and dead ones are left alone', async () => {
    const { cmd, log, add, changed, events } = setup();
    add('%1', '@1');
    add('%2', '@2');
    add('%3', '@1');
    changed('%3', 1);
    cmd.reply(['1']);
    await flush();
    log.splice(0);
    events.notify('%window-close @1');
    expect(log).toEqual(['%1 dying', '%1 exited null']);
    events.notify('%unlinked-window-close @2');
    expect(log).toEqual(['%1 dying', '%1 exited null', '%2 dying', '%2 exited null']);
    expect(cmd.written).toHaveLength(1);
  });

  it('sync: a death is acted on at once unless a headless turn holds the pane; a new pid restarts it without asking tmux', async () => {
    const { cmd, log, add, deaths } = setup();
    const a = add('%1', '@1', 100);
    a.state.held = true;
    deaths.sync('%1', { dead: true, pid: 100 });
    expect(log).toEqual([]);
    a.state.held = false;
    deaths.sync('%1', { dead: false, pid: 100 });
    deaths.sync('%1', { dead: false, pid: null });
    expect(log).toEqual([]);
    deaths.sync('%1', { dead: false, pid: 200 });
    expect(log).toEqual(['%1 restarting', '%1 restarted 200']);
    deaths.sync('%1', { dead: true, pid: 200 });
    expect(log).toEqual(['%1 restarting', '%1 restarted 200', '%1 dying']);
    expect(cmd.written).toEqual(["display-message -p -t %1 '#{pane_dead_status}'"]);
    cmd.reply(['0']);
    await flush();
    expect(log.at(-1)).toBe('%1 exited 0');
    deaths.sync('%9', { dead: true, pid: 1 });
    expect(log).toHaveLength(4);
  });

  it('a held pane running a new program is a placeholder: only its pid is noted', () => {
    const { cmd, log, add, deaths } = setup();
    const a = add('%1', '@1', 100);
    a.state.held = true;
    deaths.sync('%1', { dead: false, pid: 300 });
    expect(log).toEqual(['%1 placeholder 300']);
    a.state.held = false;
    deaths.restart(a.life, 300);
    expect(log).toEqual(['%1 placeholder 300', '%1 restarting', '%1 restarted 300']);
    expect(cmd.written).toEqual([]);
  });

  it('a removed pane is no longer tracked', () => {
    const { cmd, log, add, deaths, changed, events } = setup();
    const a = add('%1', '@1');
    deaths.remove(a.life);
    changed('%1', 1);
    events.notify('%window-close @1');
    deaths.sync('%1', { dead: true, pid: 1 });
    expect(log).toEqual([]);
    expect(cmd.written).toEqual([]);
  });
});
