// Files that tell the outside world what the agent is doing: the per-process state file
// (like claude's ~/.claude/sessions/<pid>.json) and the optional benchmark trace.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeUnderHome } from './session-store.js';

export type AgentStatus = 'starting' | 'idle' | 'busy' | 'waiting';

export interface StateFileContent {
  pid: number;
  sessionId: string;
  status: AgentStatus;
  updatedAt: number;
}

export function stateFilePath(home: string, pid: number): string {
  return path.join(home, '.fake-agent', 'state', `${pid}.json`);
}

/** Write the state file; nothing when HOME itself is gone (writeUnderHome). */
export function writeStateFile(home: string, content: StateFileContent): void {
  writeUnderHome(home, stateFilePath(home, content.pid), `${JSON.stringify(content)}\n`);
}

export function removeStateFile(home: string, pid: number): void {
  fs.rmSync(stateFilePath(home, pid), { force: true });
}

/** Wall-clock milliseconds with sub-millisecond precision. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

/** One JSON line per state change, appended to the FAKE_AGENT_TRACE file. */
export function traceLine(pid: number, state: AgentStatus, t: number = preciseNow()): string {
  return `${JSON.stringify({ t, pid, state })}\n`;
}

export function appendTrace(file: string, pid: number, state: AgentStatus): void {
  fs.appendFileSync(file, traceLine(pid, state));
}

/** The state file now says `state` (written after the screen): `{t, pid, state, stateFile: true}`. */
export function appendStateFileTrace(file: string, pid: number, state: AgentStatus): void {
  fs.appendFileSync(file, `${JSON.stringify({ t: preciseNow(), pid, state, stateFile: true })}\n`);
}
