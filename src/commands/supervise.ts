import type { Context } from '../context.js';
import { PaneWatcher, type StatusChange } from '../detect/pane-watcher.js';
import { publishStatus } from '../detect/publish.js';
import type { Output } from '../output.js';
import { Registry } from '../sessions/registry.js';
import type { NewJournalEvent } from '../sessions/events.js';
import { loadProfile } from '../profiles/load.js';
import { listPanes } from '../tmux/commands.js';
import { openCommandControl, openControl } from '../tmux/connect.js';
import type { ControlClient } from '../tmux/control-client.js';
import { agentRows, renderAgents } from './ls.js';

/** Watch every agent pane of the session; returns the watcher and a function that adds new panes. */
export async function watchSession(
  c: ControlClient,
  ctx: Context,
  onError: (msg: string) => void,
  commands?: ControlClient,
): Promise<{ watcher: PaneWatcher; refresh: () => Promise<void> }> {
  const watcher = new PaneWatcher(c, { commands });
  await watcher.start();
  const refresh = async () => {
    for (const p of await listPanes(c, ctx.session)) {
      if (!p.agent || !p.profile) continue;
      try {
        const { profile } = await loadProfile(p.profile, ctx.jaggersDir);
        watcher.watch({ paneId: p.paneId, windowId: p.windowId, agent: p.agent, profile, pid: p.panePid, terminalId: p.terminalId });
      } catch (e) {
        onError(`agent ${p.agent}: ${(e as Error).message}`);
      }
    }
  };
  await refresh();
  return { watcher, refresh };
}

/** Record a fork when the terminal's CLI reports a session other than the pinned one. */
export async function followSession(registry: Registry, terminalId: string | null | undefined, sessionId: string): Promise<void> {
  if (!terminalId) return;
  await registry.update((d) => {
    const t = d.terminals[terminalId];
    if (!t || t.sessionId === sessionId) return { events: [], result: null };
    const events: NewJournalEvent[] = t.sessionId
      ? [{ type: 'session-forked', terminalId, from: t.sessionId, to: sessionId, reason: 'the CLI reported a new session in its state file' }]
      : [{ type: 'session-pinned', terminalId, sessionId, how: 'discovered' }];
    return { events, result: null };
  });
}

/**
 * Window 0: the long-running watcher. It classifies every agent pane as output arrives, publishes
 * each state change on the agent's window (`@jaggers_state`, `@jaggers_why`) and redraws the table.
 */
export async function supervise(ctx: Context, io: Output): Promise<void> {
  const c = await openControl(ctx.server, ctx.session);
  const commands = await openCommandControl(ctx.server, ctx.session);
  const errors: string[] = [];
  const draw = async () => {
    if (c.isClosed) return;
    const rows = agentRows(await listPanes(c, ctx.session));
    io.writeOut(`\x1b[H\x1b[2Jjaggers: session ${ctx.session}\n\n${renderAgents(rows)}${errors.slice(-5).map((e) => `! ${e}\n`).join('')}`);
  };
  const { watcher, refresh } = await watchSession(c, ctx, (m) => errors.push(m), commands);
  watcher.onChange((change: StatusChange) => {
    void publishStatus(commands, change).then(draw, () => {});
  });
  // Follow forks: when a CLI moves to a new conversation (claude's /clear), the pin moves with it.
  const registry = new Registry(ctx.jaggersDir);
  watcher.onSession((pane, sessionId) => {
    void followSession(registry, pane.terminalId, sessionId).catch((e: Error) => errors.push(`agent ${pane.agent}: ${e.message}`));
  });
  // Tags are set just after a window is made, by another client: a subscription catches them.
  await c.runOk(['refresh-client', '-B', 'jaggers-agents:@*:#{@jaggers_agent}']);
  c.onNotification((name, args) => {
    if (name === 'window-add' || (name === 'subscription-changed' && args[0] === 'jaggers-agents')) void refresh().then(draw, () => {});
    if (name === 'window-close' || name === 'unlinked-window-close') void draw().catch(() => {});
  });
  await draw();
  await new Promise<void>((resolve) => c.onExit(() => resolve()));
  watcher.stop();
  await commands.close();
}
