import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Profile } from '../profiles/schema.js';
import { findNewCodexSession } from '../sessions/discover.js';
import type { Registry } from '../sessions/registry.js';

/** An environment variable of a running process (Linux), or null. */
async function envOfPid(pid: number, name: string): Promise<string | null> {
  try {
    const kv = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').find((x) => x.startsWith(`${name}=`));
    return kv ? kv.slice(name.length + 1) : null;
  } catch {
    return null;
  }
}

/**
 * For a CLI that cannot take a session id up front (codex), pin the session it created during its
 * first turn: only a rollout recorded for this terminal's folder since the terminal was made, and
 * not pinned to any other terminal, is accepted. Returns the id pinned, or null with nothing recorded.
 */
export async function discoverPin(registry: Registry, terminalId: string, profile: Profile, pid: number | null, fallbackHome: string): Promise<string | null> {
  if (profile.session.pin !== 'discovered' || profile.session.discover !== 'codex-rollout') return null;
  const data = await registry.read();
  const terminal = data.terminals[terminalId];
  if (!terminal || terminal.sessionId) return terminal?.sessionId ?? null;
  const home = (pid && (await envOfPid(pid, 'HOME'))) || fallbackHome;
  const codexHome = (pid && (await envOfPid(pid, 'CODEX_HOME'))) || path.join(home, '.codex');
  const exclude = new Set(
    Object.values(data.terminals)
      .flatMap((t) => [t.sessionId, ...t.sessionHistory])
      .filter((x): x is string => !!x),
  );
  const found = await findNewCodexSession({ codexHome, cwd: terminal.cwd, since: new Date(terminal.created), exclude });
  if (found.kind !== 'found') return null;
  await registry.update((d) => ({
    events: d.terminals[terminalId]?.sessionId ? [] : [{ type: 'session-pinned' as const, terminalId, sessionId: found.id, how: 'discovered' as const }],
    result: null,
  }));
  return found.id;
}
