// What the local supervisor started on a host (docs/hosts.md): `.jaggers/hosts/<host>.json`, written once
// that host's supervisor answers; read by the next local supervisor (to connect again) and by `down`
// (to stop it there), removed once it is stopped.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface HostRecord {
  /** The remote project's root, and its supervisor's API socket, there. */
  root: string;
  socket: string;
  startedAt: string;
  /** The agents on it (their names are the team's: commands find an agent's host by them). */
  agents: string[];
}

export const hostRecordPath = (jaggersDir: string, host: string): string => path.join(jaggersDir, 'hosts', `${host}.json`);

export async function readHostRecord(jaggersDir: string, host: string): Promise<HostRecord | null> {
  const text = await readFile(hostRecordPath(jaggersDir, host), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const r = JSON.parse(text) as HostRecord;
    return typeof r.root === 'string' && typeof r.socket === 'string' ? { ...r, agents: Array.isArray(r.agents) ? r.agents : [] } : null;
  } catch {
    return null;
  }
}
