// The CLI's own status on disk (a profile's `detect.stateFile` names whose file), stronger evidence
// than the screen (src/detect/state-file.ts combines the two).
import { readFile } from 'node:fs/promises';
import { STATE_FILES, type StateFileKind } from './kinds.js';
import type { StateFileReading } from './types.js';

export type { StateFileKind } from './kinds.js';
export type { StateFileReading } from './types.js';

/** Where a CLI writes its own status, by the pid of its process and its HOME. */
export function stateFilePath(kind: StateFileKind, home: string, pid: number): string {
  return STATE_FILES[kind].path(home, pid);
}

/** Read the CLI's own status and session; nulls when the file is missing, unreadable or unknown. */
export async function readStateFile(kind: StateFileKind, home: string, pid: number): Promise<StateFileReading> {
  const file = stateFilePath(kind, home, pid);
  try {
    return STATE_FILES[kind].parse(JSON.parse(await readFile(file, 'utf8')), file);
  } catch {
    return { classification: null, sessionId: null };
  }
}
