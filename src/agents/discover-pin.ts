import { readFile } from 'node:fs/promises';
import { execa } from 'execa';
import { DISCOVERERS } from '../clis/kinds.js';
import type { Profile } from '../profiles/schema.js';
import type { RegistryStore } from '../sessions/registry.js';

/** The environment of a running process (Linux), or null. */
async function environOf(pid: number): Promise<Record<string, string> | null> {
  try {
    const out: Record<string, string> = {};
    for (const kv of (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return out;
  } catch {
    return null;
  }
}

/** How long one run of the CLI to list or export its sessions may take. */
const LIST_TIMEOUT_MS = 30_000;

/**
 * For a CLI that cannot take a session id up front (codex, opencode), pin the session it created during
 * its first turn: only a session recorded for this terminal's folder since the terminal was made, and
 * not pinned to any other terminal, is accepted (opencode: several such sessions are told apart by
 * `tag`, the first prompt's nonce tag). Returns the id pinned, or null with nothing recorded.
 */
export async function discoverPin(
  registry: RegistryStore,
  terminalId: string,
  profile: Profile,
  pid: number | null,
  fallbackHome: string,
  tag?: string,
): Promise<string | null> {
  const how = profile.session.discover;
  const discover = how ? DISCOVERERS[how] : null;
  if (profile.session.pin !== 'discovered' || !discover) return null;
  const data = await registry.read();
  const terminal = data.terminals[terminalId];
  if (!terminal || terminal.sessionId) return terminal?.sessionId ?? null;
  const env = (pid && (await environOf(pid))) || { ...process.env, HOME: fallbackHome };
  const home = env.HOME || fallbackHome;
  const exclude = new Set(
    Object.values(data.terminals)
      .flatMap((t) => [t.sessionId, ...t.sessionHistory])
      .filter((x): x is string => !!x),
  );
  const since = new Date(terminal.created);
  // The CLI itself, as the agent runs it: its folder and its environment (HOME, XDG folders, config).
  const run = async (args: readonly string[]): Promise<string> => {
    const r = await execa(profile.command, [...args], { cwd: terminal.cwd, env, extendEnv: false, timeout: LIST_TIMEOUT_MS, reject: false, stdin: 'ignore' });
    if (r.exitCode !== 0 || r.failed) {
      throw new Error(
        `${profile.command} ${args.join(' ')} in ${terminal.cwd} failed (${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}): ${String(r.stderr).trim().slice(-300)}`,
      );
    }
    return String(r.stdout);
  };
  const found = await discover({ env, home, cwd: terminal.cwd, since, exclude, tag, listArgs: profile.session.listArgs, run });
  if (found.kind !== 'found') {
    if (found.kind === 'ambiguous') throw new Error(found.reason);
    return null;
  }
  await registry.update((d) => ({
    events: d.terminals[terminalId]?.sessionId ? [] : [{ type: 'session-pinned' as const, terminalId, sessionId: found.id, how: 'discovered' as const }],
    result: null,
  }));
  return found.id;
}
