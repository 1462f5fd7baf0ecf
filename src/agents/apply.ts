import type { ControlClient } from '../tmux/control-client.js';
import { fixWindowSize, newWindow, respawnPane, setGlobalOption, setWindowOptions } from '../tmux/commands.js';
import type { Launch, WindowAction } from './plan.js';
import { writeLaunchFiles } from './launch-files.js';

export interface AppliedWindow {
  agent: string;
  terminalId: string;
  windowId: string;
  paneId: string;
  action: WindowAction['kind'];
  launch: Launch | null;
  /** The pane's process when this `up` started it in a new window (null: kept or respawned). */
  pid: number | null;
}

/** Tags make the state rebuildable from tmux alone. */
export function windowTags(agent: string, profile: string, terminalId: string, task: string | null): Record<string, string> {
  return { '@jaggers_terminal_id': terminalId, '@jaggers_agent': agent, '@jaggers_profile': profile, ...(task ? { '@jaggers_task': task } : {}) };
}

export { fixWindowSize };

export async function applyPlan(c: ControlClient, session: string, plan: WindowAction[], task: string | null): Promise<AppliedWindow[]> {
  const out: AppliedWindow[] = [];
  for (const a of plan) {
    switch (a.kind) {
      case 'keep':
        out.push({ agent: a.agent, terminalId: a.terminalId, windowId: a.pane.windowId, paneId: a.pane.paneId, action: a.kind, launch: null, pid: null });
        break;
      case 'create': {
        await writeLaunchFiles(a.launch);
        const w = await newWindow(c, { session, name: a.windowName, cwd: a.launch.cwd, env: a.launch.env, command: a.launch.command });
        await setWindowOptions(c, w.windowId, windowTags(a.agent, a.profile, a.terminalId, task));
        await fixWindowSize(c, w.windowId, a.launch);
        out.push({ agent: a.agent, terminalId: a.terminalId, ...w, action: a.kind, launch: a.launch });
        break;
      }
      case 'respawn': {
        await writeLaunchFiles(a.launch);
        await respawnPane(c, a.pane.paneId, a.launch);
        await setWindowOptions(c, a.pane.windowId, windowTags(a.agent, a.profile, a.terminalId, task));
        await fixWindowSize(c, a.pane.windowId, a.launch);
        out.push({ agent: a.agent, terminalId: a.terminalId, windowId: a.pane.windowId, paneId: a.pane.paneId, action: a.kind, launch: a.launch, pid: null });
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
    // A window whose agent waits for a person (or whose turn failed) is marked: `!` and reversed.
    ['window-status-format', '#{?#{@jaggers_attention},#[reverse]!,}#I:#W#{?#{@jaggers_state},(#{@jaggers_state}),}#[default]'],
    ['window-status-current-format', '#{?#{@jaggers_attention},#[reverse]!,}#I:#W#{?#{@jaggers_state},(#{@jaggers_state}),}*#[default]'],
  ];
  await Promise.all(opts.map(([k, v]) => setGlobalOption(c, k, v)));
}
