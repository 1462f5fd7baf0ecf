import type { TerminalView } from '../api/types.js';
import { windowName } from '../window-name.js';

/** What window 0 shows (after the screen is cleared): each window's agent and state, the API's socket and log, the last errors. */
export function renderWindow0(session: string, rows: TerminalView[], errors: string[], socket: string, logFile: string): string {
  const table = rows
    .map((r) => `  ${windowName(r.agent, r.task).padEnd(14)} ${(r.terminalId ?? '-').padEnd(12)} ${r.state.padEnd(14)} ${r.rule ?? ''}`)
    .join('\n');
  return (
    `jaggers supervisor: session ${session} (pid ${process.pid})\n` +
    `API ${socket}\nlog ${logFile}\n\n` +
    `${rows.length ? table : '  no agents yet'}\n` +
    errors
      .slice(-5)
      .map((e) => `! ${e}\n`)
      .join('')
  );
}
