// The state file claude writes (`~/.claude/sessions/<pid>.json`) and the fake agent copies:
// `{"status": "idle" | "busy" | "waiting" | "starting", "sessionId": ...}`. Pure.
import { own } from '../../ids.js';
import type { StateFileReading } from '../types.js';
import type { Classification } from '../../detect/reading.js';

const MAP: Record<string, Classification['status']> = {
  idle: 'idle',
  busy: 'busy',
  waiting: 'waiting_input',
  starting: 'starting',
};

/** What a state file's parsed JSON says; nulls for anything missing or unknown. */
export function parseStateFile(data: unknown, file: string): StateFileReading {
  const { status, sessionId } = (data ?? {}) as { status?: unknown; sessionId?: unknown };
  const mapped = typeof status === 'string' ? own(MAP, status) : undefined;
  return {
    classification: mapped ? { status: mapped, rule: `state-file ${file}`, lines: [`status: ${String(status)}`] } : null,
    sessionId: typeof sessionId === 'string' && sessionId ? sessionId : null,
  };
}
