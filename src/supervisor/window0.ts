import type { TerminalView } from '../api/types.js';

/** What window 0 shows: the agents and their states, the API's socket and log, the last errors. */
export function renderWindow0(session: string, rows: TerminalView[], errors: string[], socket: string, logFile: string): string {
  const table = rows.map((r) => `  ${r.agent.padEnd(14)} ${(r.terminalId ?? '-').padEnd(12)} ${r.state.padEnd(14)} ${r.rule ?? ''}`).join('\n');
  return (
    `\x1b[H\x1b[2Jjaggers supervisor: session ${session} (pid ${process.pid})\n` +
    `API ${socket}\nlog ${logFile}\n\n` +
    `${rows.length ? table : '  no agents yet'}\n` +
    errors
      .slice(-5)
      .map((e) => `! ${e}\n`)
      .join('')
  );
}
