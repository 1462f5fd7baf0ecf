// What a person calls an agent's window: the team's window by the agent's name, a task's window as
// `<agent>+<task>` (what `ls` and `status` show, and what `attach`, `status`, `why` and the rest take);
// a worker's name carries its job already (`claude-j-1a2b3c4d`).
import { WORKER_AGENT } from './ids.js';

export function windowName(agent: string, task: string | null): string {
  return task && !WORKER_AGENT.test(agent) ? `${agent}+${task}` : agent;
}

/** For an "unknown agent" error: each team agent once, then the windows of tasks and workers by the names above. */
export function offeredNames(windows: readonly { agent: string | null; task: string | null }[]): string {
  const team = new Set<string>();
  const others = new Set<string>();
  for (const w of windows) {
    if (!w.agent) continue;
    if (w.task) others.add(windowName(w.agent, w.task));
    else team.add(w.agent);
  }
  const agents = [...team].join(', ') || 'none';
  return others.size ? `${agents} (and windows of tasks and workers: ${[...others].join(', ')})` : agents;
}
