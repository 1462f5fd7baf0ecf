// ControlClient.runIf: `if-shell -F` starts the command it picks, which tmux answers in a block of its
// own right after the test's; a failed test starts none. Every other command keeps its own reply.
import { describe, expect, it } from 'vitest';
import { fakeControl } from '../helpers/fake-control.js';

describe('ControlClient.runIf', () => {
  it("takes the picked command's block for it, and the next block for the next command", async () => {
    const t = fakeControl();
    const both = t.client.runIf('#{pane_dead}', '%1', 'display-message -p dead', 'paste-buffer -b b -t %1');
    const next = t.client.run(['display-message', '-p', 'next']);
    // One line written for the if-shell (the picked command is tmux's), then the next command.
    expect(t.written).toEqual([`if-shell -F -t %1 '#{pane_dead}' 'display-message -p dead' 'paste-buffer -b b -t %1'`, 'display-message -p next']);
    t.reply([]);
    t.reply(['dead']);
    t.reply(['next']);
    expect(await both).toEqual([
      { ok: true, lines: [] },
      { ok: true, lines: ['dead'] },
    ]);
    expect(await next).toEqual({ ok: true, lines: ['next'] });
    // Two commands in tmux's count, two replies: output ordering by these counters stays right.
    expect([t.client.commandsSent, t.client.repliesReceived]).toEqual([3, 3]);
    await t.close();
  });

  it("a failed test started nothing: no block is waited for, and the next reply is the next command's", async () => {
    const t = fakeControl();
    const both = t.client.runIf('#{pane_dead}', '%1', 'display-message -p dead', 'paste-buffer -b b -t %1');
    const next = t.client.run(['display-message', '-p', 'next']);
    t.reply(['bad format'], false);
    t.reply(['next']);
    expect(await both).toEqual([{ ok: false, error: 'bad format', lines: ['bad format'] }, null]);
    expect(await next).toEqual({ ok: true, lines: ['next'] });
    expect([t.client.commandsSent, t.client.repliesReceived]).toEqual([3, 3]);
    await t.close();
  });

  it('refuses a case without a command (tmux would start none, and answer no block for it)', async () => {
    const t = fakeControl();
    await expect(t.client.runIf('#{pane_dead}', '%1', '', 'paste-buffer -b b -t %1')).rejects.toMatchObject({ code: 'E_USAGE' });
    expect(t.written).toEqual([]);
    await t.close();
  });
});
