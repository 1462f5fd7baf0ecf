// The CLI's own status on disk (a profile's `detect.stateFile` names whose file), stronger evidence
// than the screen (src/detect/state-file.ts combines the two).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { STATE_FILES, type StateFileKind } from './kinds.js';
import type { StateFileReading } from './types.js';

export type { StateFileKind } from './kinds.js';
export type { StateFileReading } from './types.js';

/** Where a CLI writes its own status, by the pid of its process and its HOME. */
export function stateFilePath(kind: StateFileKind, home: string, pid: number): string {
  return STATE_FILES[kind].path(home, pid);
}

/** A state file is a few hundred bytes; a larger one is not a state file, and is not read. */
export const MAX_STATE_FILE_BYTES = 64 * 1024;

/**
 * The file's text, read at once (it is read on every change of a CLI's status: a few microseconds
 * here, where an asynchronous read takes four trips through the thread pool); null when it is larger
 * than a state file can be.
 */
function readSmall(file: string): string | null {
  const fd = openSync(file, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_STATE_FILE_BYTES) return null;
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.toString('utf8', 0, got);
  } finally {
    closeSync(fd);
  }
}

/** Read the CLI's own status and session; nulls when the file is missing, unreadable, too large or unknown. */
export async function readStateFile(kind: StateFileKind, home: string, pid: number): Promise<StateFileReading> {
  const file = stateFilePath(kind, home, pid);
  try {
    const text = readSmall(file);
    if (text !== null) return STATE_FILES[kind].parse(JSON.parse(text), file);
  } catch {
    // missing, unreadable or not JSON: nothing known
  }
  return { classification: null, sessionId: null };
}
