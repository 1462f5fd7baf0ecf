// Who a request names: an agent (by name, in a task or the default team) or a terminal id, live in
// tmux or known to the registry; and who sends or assigns (a named agent, the caller's terminal, or a
// person). Pure over the table's lookup and the registry's data.
import { JaggersError } from '../errors.js';
import { findTerminal, type RegistryData } from '../sessions/registry.js';
import type { Agents } from './ports.js';

export interface Party {
  terminalId: string;
  agent: string;
}

type Find = Pick<Agents, 'find' | 'list'>;

export function resolveParty(agents: Find, data: RegistryData, nameOrId: string, task: string | null): Party | null {
  const live = agents.find(nameOrId, task);
  if (live?.pane.terminalId) return { terminalId: live.pane.terminalId, agent: live.pane.agent! };
  const byId = Object.hasOwn(data.terminals, nameOrId) ? data.terminals[nameOrId] : undefined;
  if (byId) return { terminalId: byId.terminalId, agent: byId.agent };
  const rec = findTerminal(data, { agent: nameOrId, task }) ?? (task ? findTerminal(data, { agent: nameOrId, task: null }) : null);
  return rec ? { terminalId: rec.terminalId, agent: rec.agent } : null;
}

/** Who sends (a message) or assigns (a job): `from` by name, else the caller's terminal id, else a person (null). */
export function resolveSender(agents: Find, data: RegistryData, req: { from?: string; fromTerminal?: string }, task: string | null, op: string): Party | null {
  if (req.from !== undefined) {
    const p = resolveParty(agents, data, req.from, task);
    if (!p) throw new JaggersError('E_AGENT_UNKNOWN', `${op} --from: unknown agent ${JSON.stringify(req.from)}: agents are ${knownAgents(agents, data)}`);
    return p;
  }
  if (req.fromTerminal === undefined) return null;
  const t = Object.hasOwn(data.terminals, req.fromTerminal) ? data.terminals[req.fromTerminal] : undefined;
  if (!t)
    throw new JaggersError('E_AGENT_UNKNOWN', `${op}: the caller's JAGGERS_TERMINAL_ID ${JSON.stringify(req.fromTerminal)} is not a terminal of this project`);
  return { terminalId: t.terminalId, agent: t.agent };
}

export function knownAgents(agents: Find, data: RegistryData): string {
  const names = new Set([...agents.list().map((e) => e.pane.agent!), ...Object.values(data.terminals).map((t) => t.agent)]);
  return [...names].sort().join(', ') || 'none';
}
