import type { ControlClient } from '../tmux/control-client.js';
import { newWindow, setWindowOptions } from '../tmux/commands.js';
import type { Launch, WindowAction } from './plan.js';

export interface AppliedWindow {
  agent: string;
  terminalId: string;
  windowId: string;
  paneId: string;
  action: WindowAction['kind'];
  launch: Launch | null;
}

/** Tags make the state rebuildable from tmux alone. */
export function windowTags(agent: string, profile: string, terminalId: string, task: string | null): Record<string, string> {
  return { '@jaggers_terminal_id': terminalId, '@jaggers_agent': agent, '@jaggers_profile': profile, ...(task ? { '@jaggers_task': task } : {}) };
}

// A global `window-size manual` makes tmux 3.3a's server crash on the next new-window (seen here),
// so the fixed size is set per window, right after it is made.
export async function fixWindowSize(c: ControlClient, windowId: string, size: { width: number; height: number }): Promise<void> {
  await c.runOk(['set-option', '-w', '-t', windowId, 'window-size', 'manual']);
  await c.runOk(['resize-window', '-t', windowId, '-x', String(size.width), '-y', String(size.height)]);
}

export async function applyPlan(c: ControlClient, session: string, plan: WindowAction[], task: string | null): Promise<AppliedWindow[]> {
  const out: AppliedWindow[] = [];
  for (const a of plan) {
    switch (a.kind) {
      case 'keep':
        out.push({ agent: a.agent, terminalId: a.terminalId, windowId: a.pane.windowId, paneId: a.pane.paneId, action: a.kind, launch: null });
        break;
      case 'create': {
        const w = await newWindow(c, { session, name: a.windowName, cwd: a.launch.cwd, env: a.launch.env, command: a.launch.command });
        await setWindowOptions(c, w.windowId, windowTags(a.agent, a.profile, a.terminalId, task));
        await fixWindowSize(c, w.windowId, a.launch);
        out.push({ agent: a.agent, terminalId: a.terminalId, ...w, action: a.kind, launch: a.launch });
        break;
      }
      case 'respawn': {
        const envArgs = Object.entries(a.launch.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
        await c.runOk(['respawn-pane', '-k', '-t', a.pane.paneId, '-c', a.launch.cwd, ...envArgs, '--', ...a.launch.command]);
        await setWindowOptions(c, a.pane.windowId, windowTags(a.agent, a.profile, a.terminalId, task));
        await fixWindowSize(c, a.pane.windowId, a.launch);
        out.push({ agent: a.agent, terminalId: a.terminalId, windowId: a.pane.windowId, paneId: a.pane.paneId, action: a.kind, launch: a.launch });
        break;
      }
    }
  }
  return out;
}

/** Options for the whole jaggers server, set on every `up` (idempotent). */
export async function configureServer(c: ControlClient, size: { width: number; height: number }): Promise<void> {
  const opts: [string, string][] = [
    ['remain-on-exit', 'on'],
    ['allow-rename', 'off'],
    ['default-size', `${size.width}x${size.height}`],
    ['history-limit', '10000'],
    ['status-right', '#{?#{@jaggers_state},#{@jaggers_agent}: #{@jaggers_state},} | jaggers'],
    ['window-status-format', '#I:#W#{?#{@jaggers_state},(#{@jaggers_state}),}'],
    ['window-status-current-format', '#I:#W#{?#{@jaggers_state},(#{@jaggers_state}),}*'],
  ];
  await Promise.all(opts.map(([k, v]) => c.runOk(['set-option', '-g', k, v])));
}
