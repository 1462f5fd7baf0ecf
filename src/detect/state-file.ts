import path from 'node:path';
import type { Classification } from './classify.js';

export type StateFileKind = 'claude-sessions' | 'fake-agent';

/** Where a CLI writes its own status, by the pid of its process and its HOME. */
export function stateFilePath(kind: StateFileKind, home: string, pid: number): string {
  return kind === 'claude-sessions' ? path.join(home, '.claude', 'sessions', `${pid}.json`) : path.join(home, '.fake-agent', 'state', `${pid}.json`);
}

const MAP: Record<string, Classification['status']> = {
  idle: 'idle',
  busy: 'busy',
  waiting: 'waiting_input',
  starting: 'starting',
};

export interface StateFileReading {
  classification: Classification | null;
  /** The conversation the CLI is in now: it changes under us when the CLI forks (claude's /clear). */
  sessionId: string | null;
}

/** What a state file's parsed JSON says; nulls for anything missing or unknown. */
export function parseStateFile(data: unknown, file: string): StateFileReading {
  const { status, sessionId } = (data ?? {}) as { status?: unknown; sessionId?: unknown };
  const mapped = typeof status === 'string' ? MAP[status] : undefined;
  return {
    classification: mapped ? { status: mapped, rule: `state-file ${file}`, lines: [`status: ${String(status)}`] } : null,
    sessionId: typeof sessionId === 'string' && sessionId ? sessionId : null,
  };
}

/**
 * Combine the screen and the CLI's own state: the file is stronger evidence for busy/idle/waiting,
 * but a menu or an error on screen is never hidden by it.
 */
export function combine(screen: Classification, file: Classification | null): { c: Classification; source: 'screen' | 'state-file' } {
  if (!file) return { c: screen, source: 'screen' };
  // A menu or an error on screen is never hidden by the file. A turn summary on screen may be the
  // previous turn's while the file already says busy: the file wins then; when the file lags the
  // other way (still busy after the turn), the watcher re-reads as soon as the file changes.
  if (screen.status === 'waiting_input' || screen.status === 'error') return { c: screen, source: 'screen' };
  if (screen.status === 'done' && file.status === 'idle') return { c: screen, source: 'screen' };
  return { c: file, source: 'state-file' };
}
